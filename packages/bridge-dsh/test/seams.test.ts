import type { PermissionOutcome } from '@agentmail/bridge-kit';
import type { ApprovalOutcome } from '@deepseek-ai/dsh-user-approval';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { APPROVAL_OUTCOMES, approvalOutcomeOf, parseQuestions } from '../src/seams.js';
import { parameterSpec } from '../src/tools.js';

describe('approval outcomes (SPEC §7 DSH: exactly allowed-once | rejected | cancelled | unavailable)', () => {
  it("our list is DSH's ApprovalOutcome type, both ways (a misspelt literal fails typecheck)", () => {
    expectTypeOf<(typeof APPROVAL_OUTCOMES)[number]>().toEqualTypeOf<ApprovalOutcome>();
    expect([...APPROVAL_OUTCOMES].sort()).toEqual(['allowed-once', 'cancelled', 'rejected', 'unavailable']);
  });

  it.each<[PermissionOutcome, boolean, ApprovalOutcome]>([
    [{ allow: true }, false, 'allowed-once'],
    [{ allow: true, always: true }, false, 'allowed-once'],
    [{ allow: false, reason: 'no' }, false, 'rejected'],
    [{ allow: 'local', reason: 'yield' }, false, 'rejected'],
    [{ allow: true }, true, 'cancelled'],
  ])('%j (cancelled by dsh: %s) → %s', (outcome, cancelled, expected) => {
    const answer = approvalOutcomeOf(outcome, cancelled);
    expect(answer).toBe(expected);
    expect(APPROVAL_OUTCOMES).toContain(answer);
  });
});

describe('parseQuestions (ask_user_question arguments, SPEC P-9)', () => {
  it('maps DSH questions onto the kit: options with descriptions, header, multi_select; ids kept', () => {
    const parsed = parseQuestions({
      questions: [
        {
          id: 'tone',
          question: 'Which tone?',
          header: 'Tone',
          options: [{ label: 'formal', description: 'Sir' }, { label: 'casual' }],
          multi_select: true,
        },
        { question: 'Name?' },
      ],
    });
    expect(parsed).toEqual({
      ok: true,
      questions: [
        {
          id: 'tone',
          question: {
            question: 'Which tone?',
            header: 'Tone',
            options: [{ label: 'formal', description: 'Sir' }, { label: 'casual' }],
            multiSelect: true,
          },
        },
        { id: 'q2', question: { question: 'Name?' } },
      ],
    });
  });

  it.each([
    [undefined, '"questions"'],
    [{ questions: [] }, 'non-empty array'],
    [{ questions: [{ id: 'a' }] }, 'questions[0].question'],
    [{ questions: [{ question: '  ' }] }, 'questions[0].question'],
  ])('bad arguments are an error naming the field (%#)', (args, named) => {
    const parsed = parseQuestions(args);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain(named);
  });
});

describe('parameterSpec (mail tool parameters in the DSH DSL, SPEC B-17, B-16)', () => {
  it('required is per property; arrays also take one string; no minimum/maximum', () => {
    expect(parameterSpec({ type: 'string', description: 'to', enum: ['a'] }, true)).toEqual({
      type: 'string',
      description: 'to',
      enum: ['a'],
      required: true,
    });
    expect(parameterSpec({ type: 'integer', description: 'n', minimum: 1, maximum: 5 }, false)).toEqual({
      type: 'integer',
      description: 'n',
    });
    expect(parameterSpec({ type: 'array', description: 'ids', items: { type: 'string' } }, false)).toEqual({
      oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }],
      description: 'ids',
    });
  });
});
