import { describe, expect, it } from 'vitest';
import { type OpencodeBusEvent, type TurnOutcome, TurnTracker } from '../src/turn-tracker.js';
import { RECORDED } from './fixtures/recorded-events.js';

function sessionOf(events: OpencodeBusEvent[]): string {
  for (const e of events) {
    const id = (e.properties as { sessionID?: string }).sessionID;
    if (typeof id === 'string') return id;
  }
  throw new Error('no session id in sequence');
}

/** Feeds a recorded sequence; returns every outcome the tracker settled (must be exactly one). */
async function replay(events: OpencodeBusEvent[]): Promise<TurnOutcome[]> {
  const tracker = new TurnTracker(() => 0);
  const sid = sessionOf(events);
  const outcomes: TurnOutcome[] = [];
  void tracker.begin(sid).then((o) => outcomes.push(o));
  for (const e of events) tracker.onEvent(e);
  await Promise.resolve();
  await Promise.resolve();
  return outcomes;
}

describe('TurnTracker on sequences recorded from opencode 1.18.33', () => {
  it.each([
    ['success', true],
    ['toolRoundTrip', true],
    ['retry500', true],
    ['hookDeny', true],
    ['rejectWithMessage', true],
  ])('%s → ok', async (name, _ok) => {
    expect(await replay(RECORDED[name] ?? [])).toEqual([{ ok: true }]);
  });

  it('400: session.error before the first idle wins; the second idle is not a second outcome', async () => {
    expect(await replay(RECORDED.error400 ?? [])).toEqual([
      {
        ok: false,
        kind: 'error',
        cause: 'APIError (HTTP 400): Scripted invalid request.',
        errorName: 'APIError',
      },
    ]);
  });

  it('unknown model: one outcome from the first session.error; the late second one is ignored', async () => {
    expect(await replay(RECORDED.unknownModel ?? [])).toEqual([
      {
        ok: false,
        kind: 'error',
        cause: 'UnknownError: Model not found: scripted/nope.',
        errorName: 'UnknownError',
      },
    ]);
  });

  it('abort → aborted', async () => {
    expect(await replay(RECORDED.abort ?? [])).toEqual([
      { ok: false, kind: 'aborted', cause: 'MessageAbortedError: Aborted', errorName: 'MessageAbortedError' },
    ]);
  });

  it('abort seen only on the assistant message before the idle (no session.error; research probe sequence) → aborted', async () => {
    const sid = 'ses_abort';
    const outcomes = await replay([
      { type: 'session.status', properties: { sessionID: sid, status: { type: 'busy' } } },
      {
        type: 'message.updated',
        properties: {
          info: {
            id: 'msg_a',
            sessionID: sid,
            role: 'assistant',
            time: { created: 1 },
            error: { name: 'MessageAbortedError', data: { message: 'Aborted' } },
          },
        },
      },
      { type: 'session.status', properties: { sessionID: sid, status: { type: 'idle' } } },
      { type: 'session.idle', properties: { sessionID: sid } },
    ]);
    expect(outcomes).toEqual([
      { ok: false, kind: 'aborted', cause: 'MessageAbortedError: Aborted', errorName: 'MessageAbortedError' },
    ]);
  });

  it('permission rejected without a message: the loop stops → permission_rejected with opencode words', async () => {
    expect(await replay(RECORDED.rejectNoMessage ?? [])).toEqual([
      {
        ok: false,
        kind: 'permission_rejected',
        cause: 'The user rejected permission to use this specific tool call.',
      },
    ]);
  });

  it('the previous turn tail (late error, second idle) does not settle the next turn of the session', async () => {
    const tracker = new TurnTracker(() => 0);
    const seq = RECORDED.unknownModel ?? [];
    const sid = sessionOf(seq);
    const firstIdle = seq.findIndex((e) => e.type === 'session.idle');
    const first = tracker.begin(sid);
    for (const e of seq.slice(0, firstIdle + 1)) tracker.onEvent(e);
    expect(await first).toMatchObject({ ok: false, kind: 'error' });
    const second = tracker.begin(sid);
    // The tail of the first turn arrives after the next turn began, then the next turn succeeds.
    for (const e of seq.slice(firstIdle + 1)) tracker.onEvent(e);
    for (const e of (RECORDED.error400 ?? []).slice(-3))
      tracker.onEvent({ ...e, properties: { ...(e.properties as object), sessionID: sid } });
    expect(tracker.pending).toBe(1);
    for (const e of RECORDED.success ?? [])
      tracker.onEvent(
        JSON.parse(JSON.stringify(e).replaceAll(sessionOf(RECORDED.success ?? []), sid)) as OpencodeBusEvent,
      );
    expect(await second).toEqual({ ok: true });
  });

  it('an assistant error older than the turn belongs to the previous turn', async () => {
    let now = 0;
    const tracker = new TurnTracker(() => now);
    now = 5_000;
    const outcome = tracker.begin('s');
    tracker.onEvent({ type: 'session.status', properties: { sessionID: 's', status: { type: 'busy' } } });
    tracker.onEvent({
      type: 'message.updated',
      properties: {
        info: { sessionID: 's', role: 'assistant', time: { created: 4_000 }, error: { name: 'APIError' } },
      },
    });
    tracker.onEvent({ type: 'session.idle', properties: { sessionID: 's' } });
    expect(await outcome).toEqual({ ok: true });
  });

  it('one turn per session at a time; other sessions are independent; cancel settles', async () => {
    const tracker = new TurnTracker();
    const a = tracker.begin('a');
    expect(() => tracker.begin('a')).toThrow(/already has a turn/);
    const b = tracker.begin('b');
    tracker.cancel('a');
    expect(await a).toEqual({ ok: false, kind: 'error', cause: 'turn cancelled' });
    tracker.onEvent({
      type: 'session.status',
      properties: { sessionID: 'b', status: { type: 'retry', attempt: 1, message: 'x', next: 0 } },
    });
    tracker.onEvent({ type: 'session.idle', properties: { sessionID: 'b' } });
    expect(await b).toEqual({ ok: true });
    expect(tracker.pending).toBe(0);
  });
});
