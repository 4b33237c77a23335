import type { PermissionDecisionEvent } from '@agentmail/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  denialText,
  EARLY_DECISION_TTL_MS,
  PendingPermissions,
  type UnclaimedDecision,
} from '../src/pending-permissions.js';

function event(over: Partial<PermissionDecisionEvent> = {}): PermissionDecisionEvent {
  return {
    relay_key: 'k1',
    request_id: 'r1',
    session_id: 's1',
    decision: 'deny',
    answers: [],
    note: '',
    fresh_mails: [],
    ...over,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

/** The value of `p` once every queued callback has run, or 'pending' (no timers, no sleeps). */
async function settled<T>(p: Promise<T>): Promise<T | 'pending'> {
  let value: T | 'pending' = 'pending';
  void p.then((v) => {
    value = v;
  });
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
  return value;
}

describe('PendingPermissions (P-6, P-7)', () => {
  it('wakes the waiter with the decision, the note and the fresh mails', async () => {
    const pending = new PendingPermissions();
    const waiting = pending.wait('k1');
    expect(pending.pending).toBe(1);
    const woke = pending.resolve(
      event({
        decision: 'deny',
        note: 'use the staging database',
        fresh_mails: [{ mail_id: 'm9', from_name: 'ann', from_human: true, subject: 'stop, wrong db' }],
      }),
    );
    expect(woke).toBe(true);
    const d = await waiting;
    expect(d).toMatchObject({
      decision: 'deny',
      raw: 'deny',
      note: 'use the staging database',
      source: 'person',
      freshMails: [{ mail_id: 'm9', from_name: 'ann', subject: 'stop, wrong db' }],
    });
    expect(pending.pending).toBe(0);
  });

  it('maps wire words: approve_once, approve_always; anything else is a denial', async () => {
    const pending = new PendingPermissions();
    const cases: Array<[string, string]> = [
      ['approve_once', 'approve_once'],
      ['approve_always', 'approve_always'],
      ['deny', 'deny'],
      ['answered', 'deny'],
      ['APPROVE_ALWAYS?', 'deny'],
      ['banana', 'deny'],
    ];
    for (const [word, expected] of cases) {
      const w = pending.wait(word);
      pending.resolve(event({ relay_key: word, decision: word }));
      expect((await w).decision, word).toBe(expected);
    }
  });

  it('always wakes the waiter, even for a malformed event (as a denial)', async () => {
    const pending = new PendingPermissions();
    const waiting = pending.wait('k1');
    const woke = pending.resolve({
      relay_key: 'k1',
      decision: 42,
      note: { x: 1 },
      fresh_mails: 'nope',
      answers: [1],
    });
    expect(woke).toBe(true);
    expect(await waiting).toMatchObject({ decision: 'deny', note: '', freshMails: [], answers: [] });
  });

  it('keeps what it can of partly malformed fresh mails', async () => {
    const pending = new PendingPermissions();
    const waiting = pending.wait('k1');
    pending.resolve({
      relay_key: 'k1',
      decision: 'deny',
      fresh_mails: [null, { subject: 'hi' }, { from_name: 'x' }],
    });
    expect((await waiting).freshMails).toEqual([
      { mail_id: '', from_name: '', from_human: false, subject: 'hi' },
    ]);
  });

  it('carries question answers', async () => {
    const pending = new PendingPermissions();
    const waiting = pending.wait('q1');
    pending.resolve(event({ relay_key: 'q1', decision: 'answered', answers: ['formal'] }));
    expect(await waiting).toMatchObject({ decision: 'deny', raw: 'answered', answers: ['formal'] });
  });

  it('a decision that arrives before wait() is kept and not lost', async () => {
    const pending = new PendingPermissions();
    expect(pending.resolve(event({ decision: 'approve_once', note: 'ok' }))).toBe(false);
    const d = await settled(pending.wait('k1'));
    expect(d).toMatchObject({ decision: 'approve_once', note: 'ok', source: 'person' });
    // consumed: a second wait does not get it again
    vi.useFakeTimers();
    const again = pending.wait('k1', { timeoutMs: 10 });
    vi.advanceTimersByTime(10);
    expect((await again).source).toBe('timeout');
  });

  it('an early decision is kept only briefly', async () => {
    let now = 1_000;
    const pending = new PendingPermissions({ now: () => now });
    pending.resolve(event({ decision: 'approve_once' }));
    now += EARLY_DECISION_TTL_MS + 1;
    vi.useFakeTimers();
    const w = pending.wait('k1', { timeoutMs: 5 });
    vi.advanceTimersByTime(5);
    expect(await w).toMatchObject({ decision: 'deny', source: 'timeout' });
  });

  it('wakes every waiter of the same relay key', async () => {
    const pending = new PendingPermissions();
    const a = pending.wait('k1');
    const b = pending.wait('k1');
    pending.resolve(event({ decision: 'approve_once' }));
    expect((await a).decision).toBe('approve_once');
    expect((await b).decision).toBe('approve_once');
  });

  it('a timeout resolves as denied (and a late decision is then kept, not delivered twice)', async () => {
    vi.useFakeTimers();
    const pending = new PendingPermissions();
    const w = pending.wait('k1', { timeoutMs: 1_000 });
    vi.advanceTimersByTime(999);
    expect(pending.pending).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await w).toMatchObject({ decision: 'deny', source: 'timeout' });
    expect(pending.pending).toBe(0);
  });

  it('an abort resolves as denied and never rejects', async () => {
    const pending = new PendingPermissions();
    const ac = new AbortController();
    const w = pending.wait('k1', { signal: ac.signal });
    ac.abort();
    expect(await w).toMatchObject({ decision: 'deny', source: 'aborted' });
    expect(await pending.wait('k2', { signal: AbortSignal.abort() })).toMatchObject({ source: 'aborted' });
  });

  it('denyAll resolves every pending wait as denied (shutdown)', async () => {
    const pending = new PendingPermissions();
    const waits = [pending.wait('a'), pending.wait('b'), pending.wait('b')];
    pending.denyAll('bridge stopping');
    const all = await settled(Promise.all(waits));
    expect(all).not.toBe('pending');
    for (const d of all === 'pending' ? [] : all) {
      expect(d).toMatchObject({ decision: 'deny', source: 'shutdown', reason: 'bridge stopping' });
    }
    expect(pending.pending).toBe(0);
    // denyAll does not close: later waits still work
    const later = pending.wait('c');
    pending.resolve(event({ relay_key: 'c', decision: 'approve_once' }));
    expect((await later).decision).toBe('approve_once');
  });

  it('close() denies pending waits, then refuses new ones at once; the signal option closes it', async () => {
    const ac = new AbortController();
    const pending = new PendingPermissions({ signal: ac.signal });
    const w = pending.wait('a');
    ac.abort();
    expect(await settled(w)).toMatchObject({ decision: 'deny', source: 'shutdown' });
    expect(await settled(pending.wait('b'))).toMatchObject({ decision: 'deny', source: 'shutdown' });
    expect(pending.resolve(event({ relay_key: 'b', decision: 'approve_once' }))).toBe(false);
    expect(await settled(pending.wait('b'))).toMatchObject({ decision: 'deny' });
    pending.close(); // idempotent
  });
});

describe('PendingPermissions: every decision ends in a woken call or a reported reason', () => {
  function recorder() {
    const seen: UnclaimedDecision[] = [];
    return { seen, onUnclaimed: (info: UnclaimedDecision) => void seen.push(info) };
  }

  it('a decision nobody waits for is reported kept, then expired with its relay_key when unused', () => {
    vi.useFakeTimers();
    const r = recorder();
    const pending = new PendingPermissions({ onUnclaimed: r.onUnclaimed });
    expect(pending.resolve(event({ relay_key: 'rk_stale', decision: 'approve_once' }))).toBe(false);
    expect(r.seen).toEqual([{ relay_key: 'rk_stale', decision: 'approve_once', why: 'kept' }]);
    vi.advanceTimersByTime(EARLY_DECISION_TTL_MS - 1);
    expect(r.seen.some((u) => u.why === 'expired')).toBe(false);
    vi.advanceTimersByTime(1);
    expect(r.seen.at(-1)).toEqual({ relay_key: 'rk_stale', decision: 'approve_once', why: 'expired' });
  });

  it('a kept decision a wait takes in time is not reported as expired', async () => {
    vi.useFakeTimers();
    const r = recorder();
    const pending = new PendingPermissions({ onUnclaimed: r.onUnclaimed });
    pending.resolve(event({ relay_key: 'rk', decision: 'approve_once' }));
    expect((await pending.wait('rk')).decision).toBe('approve_once');
    // A second decision for the same key, kept later, gets its own full TTL.
    vi.advanceTimersByTime(EARLY_DECISION_TTL_MS / 2);
    pending.resolve(event({ relay_key: 'rk', decision: 'deny', note: 'second' }));
    vi.advanceTimersByTime(EARLY_DECISION_TTL_MS / 2);
    expect(r.seen.map((u) => u.why)).not.toContain('expired');
    expect(await pending.wait('rk')).toMatchObject({ note: 'second' });
  });

  it('kept decisions dropped at shutdown, and decisions after it, are reported closed', () => {
    const r = recorder();
    const pending = new PendingPermissions({ onUnclaimed: r.onUnclaimed });
    pending.resolve(event({ relay_key: 'rk1' }));
    pending.close();
    pending.resolve(event({ relay_key: 'rk2' }));
    expect(r.seen.slice(1).map((u) => [u.relay_key, u.why])).toEqual([
      ['rk1', 'closed'],
      ['rk2', 'closed'],
    ]);
  });
});

describe('denialText (P-6)', () => {
  it('includes the note and the subjects of mails that arrived while waiting', () => {
    const text = denialText({
      note: 'not on prod',
      freshMails: [
        { subject: 'use staging', from_name: 'ann' },
        { subject: 'release moved', from_name: 'bob' },
      ],
    });
    expect(text).toContain('A person denied');
    expect(text).toContain('not on prod');
    expect(text).toContain('"use staging" from ann');
    expect(text).toContain('"release moved" from bob');
    expect(text).toMatch(/Change course/);
  });

  it('without note or mails it still says what happened', () => {
    const text = denialText({});
    expect(text).toContain('A person denied');
    expect(text).not.toContain('note');
    expect(text).not.toContain('arrived while');
  });

  it('a shutdown denial does not forbid asking again: the mail runs again after the restart (P-7)', () => {
    const en = denialText({ cause: 'shutdown' });
    expect(en).toMatch(/shutting down/);
    expect(en).toMatch(/No person refused it/);
    expect(en).toMatch(/delivered again when the agent restarts/);
    expect(en).not.toMatch(/Do not ask again/i);
    const zh = denialText({ cause: 'shutdown', locale: 'zh-CN' });
    expect(zh).toContain('重启后会再次投递');
    expect(zh).not.toContain('不要为同一次调用再次请求');
    expect(denialText({ cause: 'person' }), 'a person’s denial still says so').toMatch(/Do not ask again/);
  });

  it('names a bridge-side cause and is localised', () => {
    expect(denialText({ cause: 'timeout' })).toMatch(/Nobody answered/);
    expect(denialText({ cause: 'shutdown' })).toMatch(/shutting down/);
    const zh = denialText({
      note: '换个方法',
      freshMails: [{ subject: '暂停', from_name: '安' }],
      locale: 'zh-CN',
    });
    expect(zh).toContain('换个方法');
    expect(zh).toContain('“暂停”，来自 安');
  });
});
