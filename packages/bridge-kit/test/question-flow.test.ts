import type { Question } from '@agentmail/shared-policy';
import { formatText, PendingPermissions } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { type FakeGateway, fakeGateway } from '@agentmail/shared-policy/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { questionTimeoutOf } from '../src/bridge-config.js';
import { askQuestions, type QuestionFlowOptions } from '../src/question-flow.js';
import { recordingBus } from './support/bridge-fixtures.js';

// The question flow of a mail-driven turn (SPEC P-9) against a loopback Gateway stand-in: the
// answer arrives through a real PendingPermissions registry, as the bridge's event stream would
// deliver it.

let gw: FakeGateway;
beforeAll(async () => {
  gw = await fakeGateway();
});
afterAll(() => gw.close());
beforeEach(() => {
  gw.requests.length = 0;
});

const tone: Question = {
  question: 'Which tone?',
  options: [{ label: 'formal' }, { label: 'casual', description: 'first names' }],
};
const name: Question = { question: 'What should it be called?' };
const call = { platformSessionId: 'ps1', toolCallId: 'call_1', cwd: '/srv/app' };

/** The options of one flow; `answer` (when given) is the person's answer to the request. */
function setup(
  answer?: { answers?: string[]; decision?: string; note?: string },
  over: Partial<QuestionFlowOptions> = {},
) {
  const pending = new PendingPermissions();
  const bus = recordingBus();
  gw.on('POST', '/api/v1/permission/request', (req) => {
    const key = (req.json as { relay_key: string }).relay_key;
    if (answer)
      pending.resolve({
        relay_key: key,
        decision: answer.decision ?? 'answered',
        answers: answer.answers ?? [],
        note: answer.note ?? '',
        fresh_mails: [],
      });
    return { json: { status: 'pending', request_id: 'q1', mail_id: 'mq1', asked: 'alice' } };
  });
  const options: QuestionFlowOptions = {
    agentName: 'dsh',
    sessionId: 's1',
    client: new GatewayClient({ baseUrl: gw.url, key: 'k1' }),
    pending,
    locale: 'en',
    emit: bus.emitFn,
    ...over,
  };
  return { options, bus };
}

const requested = () =>
  gw.requests
    .filter((r) => r.path === '/api/v1/permission/request')
    .map((r) => r.json as Record<string, unknown>);

describe('askQuestions (SPEC P-9)', () => {
  it('one question mail with the union of the options; the answer maps back by label', async () => {
    const { options } = setup({ answers: ['casual'] });
    const o = await askQuestions([tone], options, call);
    expect(o).toEqual({
      ok: true,
      answers: { declined: false, answers: [{ question: 'Which tone?', selected: ['casual'] }] },
    });
    const [body] = requested();
    expect(body).toMatchObject({ kind: 'question', options: ['formal', 'casual'], session_id: 's1' });
    expect(requested()).toHaveLength(1);
  });

  it('a question without options is free text: no options, the answer comes back as text', async () => {
    const { options } = setup({ answers: ['Orchid'] });
    const o = await askQuestions([name], options, call);
    expect(requested()[0]).toMatchObject({ kind: 'question', options: [] });
    expect(o).toEqual({
      ok: true,
      answers: {
        declined: false,
        answers: [{ question: 'What should it be called?', selected: [], text: 'Orchid' }],
      },
    });
  });

  it('no answer within the question timeout: an error for the model at once, not a hang', async () => {
    const { options, bus } = setup(undefined, { timeoutMs: 30 });
    const o = await askQuestions([tone], options, call);
    // The catalogue text with the wait's own cause in it.
    const [before, after] = formatText('permission.question.no_answer', { cause: '\u0000' }, 'en').split(
      '\u0000',
    );
    expect(o.ok).toBe(false);
    const error = o.ok ? '' : o.error;
    expect(error.startsWith(before ?? '?') && error.endsWith(after ?? '?'), error).toBe(true);
    expect(bus.events.find((e) => e.type === 'permission_decided')).toMatchObject({ source: 'timeout' });
  });

  it("the host's own cancellation ends the wait with an error", async () => {
    const { options } = setup();
    const host = new AbortController();
    const asked = askQuestions([tone], options, call, host.signal);
    await expect.poll(() => requested().length).toBe(1);
    host.abort();
    const o = await asked;
    expect(o.ok).toBe(false);
  });
});

describe('questionTimeoutOf', () => {
  it('is the configured wait, else half the turn timeout', () => {
    expect(questionTimeoutOf({ turnTimeoutMs: 600_000 })).toBe(300_000);
    expect(questionTimeoutOf({ turnTimeoutMs: 600_000, questionTimeoutMs: 5_000 })).toBe(5_000);
    expect(questionTimeoutOf({ turnTimeoutMs: 1 })).toBe(1);
  });
});
