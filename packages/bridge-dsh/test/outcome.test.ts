import { describe, expect, it } from 'vitest';
import { type DshEventLike, summarizeTurn } from '../src/outcome.js';

// Event shapes as dsh 0.1.0-rc.8 logs them (seen in a real run; research dsh.md §5).
let seq = 0;
const ev = (type: string, data: unknown): DshEventLike => ({ type, seq: seq++, data });
const text = (t: string, id = `m-${t}`) =>
  ev('assistant/message', {
    turn: 1,
    step: 1,
    message: { role: 'assistant', id, content: [{ type: 'text', text: t }] },
  });
const finish = (reason: unknown) =>
  ev('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason } });
const end = (reason: unknown) => ev('turn/end', { turn: 1, reason });
const start = () => ev('turn/start', { turn: 1 });

describe('summarizeTurn (SPEC B-7, §7 DSH)', () => {
  it('a completed turn: ok, the last assistant text, its message id', () => {
    const events = [
      start(),
      text('first'),
      finish({ kind: 'tool-calls' }),
      text('DONE', 'm9'),
      finish({ kind: 'stop' }),
      end({ kind: 'completed' }),
    ];
    expect(summarizeTurn(events, 0)).toEqual({
      ok: true,
      reason: 'completed',
      finalParts: [{ type: 'text', text: 'DONE' }],
      lastEntryId: 'm9',
      turns: 1,
    });
  });

  it('only the interval from firstSeq counts (an earlier turn of the session is ignored)', () => {
    const before = [
      start(),
      text('old'),
      end({ kind: 'error', error: { message: 'old failure', code: 'SERVER' } }),
    ];
    const firstSeq = seq;
    const now = [start(), text('new'), end({ kind: 'completed' })];
    expect(summarizeTurn([...before, ...now], firstSeq)).toMatchObject({
      ok: true,
      finalParts: [{ type: 'text', text: 'new' }],
    });
  });

  it('an error finish retried inside the same turn (rc.8): the later success wins', () => {
    const events = [
      start(),
      finish({ kind: 'error', failure: { message: 'upstream 500', code: 'SERVER', status: 500 } }),
      ev('llm/retry', {}),
      text('recovered'),
      finish({ kind: 'stop' }),
      end({ kind: 'completed' }),
    ];
    expect(summarizeTurn(events, 0)).toMatchObject({
      ok: true,
      finalParts: [{ type: 'text', text: 'recovered' }],
    });
  });

  it('a finish chunk with an error and no later success fails even when the turn says completed', () => {
    const events = [
      start(),
      text('partial'),
      finish({ kind: 'error', failure: { message: 'cut', code: 'STREAM_CLOSED' } }),
      end({ kind: 'completed' }),
    ];
    const s = summarizeTurn(events, 0);
    expect(s.ok).toBe(false);
    expect(s.cause).toContain('STREAM_CLOSED: cut');
  });

  it('the LAST turn/end of the interval decides', () => {
    const events = [
      start(),
      end({ kind: 'error', error: { message: 'first', code: 'SERVER' } }),
      start(),
      text('ok'),
      end({ kind: 'completed' }),
    ];
    expect(summarizeTurn(events, 0)).toMatchObject({ ok: true, turns: 2 });
    const reversed = [
      start(),
      text('ok'),
      end({ kind: 'completed' }),
      start(),
      end({ kind: 'error', error: { message: 'later', code: 'SERVER' } }),
    ];
    expect(summarizeTurn(reversed, 0)).toMatchObject({ ok: false, reason: 'error' });
  });

  it.each([
    [
      { kind: 'error', error: { message: 'bad request from fake', code: 'INVALID_REQUEST', status: 400 } },
      'INVALID_REQUEST: bad request from fake (HTTP 400)',
    ],
    [
      { kind: 'aborted', reason: { kind: 'hook', reason: 'agentmail: timeout' } },
      'aborted (agentmail: timeout)',
    ],
    [{ kind: 'aborted', reason: { kind: 'user' } }, 'aborted (user)'],
    [{ kind: 'max-tokens' }, 'output token limit'],
    [{ kind: 'blocked' }, 'blocked'],
    [{ kind: 'interrupted' }, 'interrupted'],
    [{ kind: 'something-new' }, '"something-new"'],
  ])('turn/end %j fails with DSH’s cause', (reason, cause) => {
    const s = summarizeTurn([start(), text('x'), end(reason)], 0);
    expect(s.ok).toBe(false);
    expect(s.reason).toBe(reason.kind);
    expect(s.cause).toContain(cause);
  });

  it('no turn/end at all (agent/error only) is a failure, never a success', () => {
    expect(summarizeTurn([start(), text('x')], 0)).toMatchObject({ ok: false, reason: 'none' });
    expect(summarizeTurn([], 0)).toMatchObject({ ok: false, reason: 'none', finalParts: [] });
  });

  it('an interrupted assistant message (a cancelled stream prefix) is not the final text', () => {
    const events = [
      start(),
      text('kept'),
      ev('assistant/message', {
        interrupted: true,
        message: { id: 'x', content: [{ type: 'text', text: 'half' }] },
      }),
      end({ kind: 'aborted', reason: { kind: 'user' } }),
    ];
    expect(summarizeTurn(events, 0).finalParts).toEqual([{ type: 'text', text: 'kept' }]);
  });

  it('odd data never throws', () => {
    const odd: DshEventLike[] = [
      start(),
      { type: 'assistant/message', seq: 999, data: null },
      { type: 'assistant/chunk', seq: 1000, data: { chunk: 7 } },
      { type: 'turn/end', seq: 1001, data: {} },
    ];
    expect(() => summarizeTurn(odd, 0)).not.toThrow();
  });
});
