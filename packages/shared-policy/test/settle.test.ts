import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hasErrorCode } from '../src/errors.js';
import { STOP_GRACE_MS, settleWithTimeout, TURN_TIMEOUT_MS } from '../src/settle.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const never = () => new Promise<never>(() => undefined);

describe('settleWithTimeout (B-7)', () => {
  it('resolves with the value when the work finishes in time', async () => {
    const stop = vi.fn();
    const kill = vi.fn();
    const r = settleWithTimeout(Promise.resolve(42), { stop, kill });
    expect(await r).toEqual({ ok: true, value: 42 });
    vi.advanceTimersByTime(TURN_TIMEOUT_MS * 2);
    expect(stop).not.toHaveBeenCalled();
    expect(kill).not.toHaveBeenCalled();
  });

  it('resolves (never rejects) with the error of failed work', async () => {
    const err = new Error('model failed');
    expect(await settleWithTimeout(Promise.reject(err), { stop: vi.fn(), kill: vi.fn() })).toEqual({
      ok: false,
      reason: 'error',
      error: err,
    });
  });

  it('defaults to 10 minutes', () => {
    expect(TURN_TIMEOUT_MS).toBe(600_000);
  });

  it('on timeout: stop, then kill after the grace period, then resolve regardless', async () => {
    const stop = vi.fn(); // a stop that does not stop anything
    const kill = vi.fn();
    let result: unknown;
    void settleWithTimeout(never(), { timeoutMs: 1_000, graceMs: 500, stop, kill }).then((r) => {
      result = r;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(stop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(kill).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(499);
    expect(kill).not.toHaveBeenCalled();
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(kill).toHaveBeenCalledTimes(1);
    expect(result).toEqual({ ok: false, reason: 'timeout', killed: true });
  });

  it('settles even when stop hangs and kill throws', async () => {
    const stop = vi.fn(() => never());
    const kill = vi.fn(() => {
      throw new Error('ESRCH');
    });
    const r = settleWithTimeout(never(), { timeoutMs: 10, graceMs: 10, stop, kill });
    await vi.advanceTimersByTimeAsync(20);
    expect(await r).toEqual({ ok: false, reason: 'timeout', killed: true });
  });

  it('settles even when stop throws synchronously or rejects', async () => {
    for (const stop of [
      () => {
        throw new Error('x');
      },
      () => Promise.reject(new Error('y')),
    ]) {
      const kill = vi.fn();
      const r = settleWithTimeout(never(), { timeoutMs: 10, graceMs: 10, stop, kill });
      await vi.advanceTimersByTimeAsync(20);
      expect(await r).toMatchObject({ ok: false, reason: 'timeout' });
      expect(kill).toHaveBeenCalledTimes(1);
    }
  });

  it("a graceful stop that ends the work resolves at once with the work's own value, late, without a kill", async () => {
    let finish!: (v: string) => void;
    const work = new Promise<string>((r) => {
      finish = r;
    });
    const kill = vi.fn();
    const r = settleWithTimeout(work, {
      timeoutMs: 100,
      graceMs: STOP_GRACE_MS,
      stop: () => finish('answer'),
      kill,
    });
    await vi.advanceTimersByTimeAsync(100);
    // One outcome per mail (B-7, B-10): the work ended with its own result; no second "timeout".
    expect(await r).toEqual({ ok: true, value: 'answer', late: true });
    await vi.advanceTimersByTimeAsync(STOP_GRACE_MS);
    expect(kill).not.toHaveBeenCalled();
  });

  it('work that fails during the grace period resolves with its error, late', async () => {
    let fail!: (e: Error) => void;
    const work = new Promise<string>((_r, reject) => {
      fail = reject;
    });
    const r = settleWithTimeout(work, {
      timeoutMs: 10,
      graceMs: 1_000,
      stop: () => undefined,
      kill: () => undefined,
    });
    await vi.advanceTimersByTimeAsync(10);
    fail(new Error('aborted'));
    const out = await r;
    expect(out).toMatchObject({ ok: false, reason: 'error', late: true });
  });

  it('rejects negative or non-finite times', () => {
    for (const opts of [
      { timeoutMs: -1 },
      { graceMs: Number.POSITIVE_INFINITY },
      { timeoutMs: Number.NaN },
    ]) {
      try {
        void settleWithTimeout(Promise.resolve(1), { stop: vi.fn(), kill: vi.fn(), ...opts });
        expect.unreachable('should throw');
      } catch (e) {
        expect(hasErrorCode(e, 'AM_OPTION_OUT_OF_RANGE')).toBe(true);
      }
    }
  });
});
