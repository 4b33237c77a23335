import { afterEach, describe, expect, it, vi } from 'vitest';
import { hasErrorCode } from '../src/errors.js';
import { REDELIVERY_ATTEMPTS, REDELIVERY_BACKOFF_MS, redeliver } from '../src/redelivery.js';

afterEach(() => {
  vi.useRealTimers();
});

function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

describe('redeliver (B-14)', () => {
  it('a worker that reports is not retried', async () => {
    const { waits, sleep } = recordingSleep();
    const run = vi.fn(async () => 'done');
    expect(await redeliver(run, { sleep })).toEqual({ ok: true, value: 'done', attempts: 1 });
    expect(run).toHaveBeenCalledTimes(1);
    expect(waits).toEqual([]);
  });

  it('a worker that dies is retried with 1 s then 2 s backoff, then given up after 3 attempts', async () => {
    const { waits, sleep } = recordingSleep();
    const errors = [new Error('exit 137'), new Error('exit 1'), new Error('SIGKILL')];
    const run = vi.fn(async (attempt: number) => {
      throw errors[attempt - 1];
    });
    const retries: number[] = [];
    const r = await redeliver(run, { sleep, onRetry: (i) => retries.push(i.attempt) });
    expect(r).toEqual({ ok: false, attempts: 3, lastError: errors[2] });
    expect(run.mock.calls.map((c) => c[0])).toEqual([1, 2, 3]);
    expect(waits).toEqual([1_000, 2_000]);
    expect(retries).toEqual([1, 2]);
    expect(REDELIVERY_ATTEMPTS).toBe(3);
    expect(REDELIVERY_BACKOFF_MS).toEqual([1_000, 2_000]);
  });

  it('succeeds on a later attempt', async () => {
    const { waits, sleep } = recordingSleep();
    const r = await redeliver(
      async (attempt) => {
        if (attempt < 2) throw new Error('died');
        return 7;
      },
      { sleep },
    );
    expect(r).toEqual({ ok: true, value: 7, attempts: 2 });
    expect(waits).toEqual([1_000]);
  });

  it('the backoff is bounded: the last value repeats', async () => {
    const { waits, sleep } = recordingSleep();
    await redeliver(
      async () => {
        throw new Error('x');
      },
      { sleep, attempts: 5, backoffMs: [10, 20] },
    );
    expect(waits).toEqual([10, 20, 20, 20]);
  });

  it('shouldRetry=false gives up at once', async () => {
    const { waits, sleep } = recordingSleep();
    const r = await redeliver(
      async () => {
        throw new Error('bad config');
      },
      { sleep, shouldRetry: () => false },
    );
    expect(r).toMatchObject({ ok: false, attempts: 1 });
    expect(waits).toEqual([]);
  });

  it('the default sleep really waits (fake timers)', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const p = redeliver(async () => {
      calls += 1;
      throw new Error('x');
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toBe(3);
    expect(await p).toMatchObject({ ok: false, attempts: 3 });
  });

  it('rejects bad options', () => {
    for (const opts of [{ attempts: 0 }, { attempts: 1.5 }, { backoffMs: [-1] }]) {
      try {
        void redeliver(async () => 1, opts);
        expect.unreachable('should throw');
      } catch (e) {
        expect(hasErrorCode(e, 'AM_OPTION_OUT_OF_RANGE')).toBe(true);
      }
    }
  });
});
