import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentMailError, ERROR_CODES, hasErrorCode, messageOf } from '../src/errors.js';

// STYLE: one code per failure mode, unique, every code documented in docs/errors.md.
const DOC = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

describe('error registry', () => {
  const codes = Object.values(ERROR_CODES) as string[];

  it('codes are unique and shaped AM_<AREA>_<WHAT>', () => {
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) expect(c).toMatch(/^AM_[A-Z0-9]+_[A-Z0-9_]+$/);
  });

  it('every code is documented in docs/errors.md', () => {
    const missing = codes.filter((c) => !DOC.includes(`\`${c}\``));
    expect(missing).toEqual([]);
  });

  it('errors are recognised by code, not only by class', () => {
    const code = codes[0] as (typeof ERROR_CODES)[keyof typeof ERROR_CODES] | undefined;
    if (code === undefined) return;
    const err = new AgentMailError(code, 'x', { status: 400 });
    expect(hasErrorCode(err, code)).toBe(true);
    expect(hasErrorCode({ code }, code)).toBe(true);
    expect(hasErrorCode(new Error('x'), code)).toBe(false);
    expect(err.status).toBe(400);
  });
});

describe('messageOf (the one error → message helper)', () => {
  it("is an Error's message, anything else as a string", () => {
    expect(messageOf(new AgentMailError(ERROR_CODES.QUEUE_CLOSED, 'closed'))).toBe('closed');
    expect(messageOf(new TypeError('bad'))).toBe('bad');
    expect(messageOf('plain text')).toBe('plain text');
    expect(messageOf(42)).toBe('42');
    expect(messageOf(undefined)).toBe('undefined');
  });
});
