import { describe, expect, it } from 'vitest';
import { hasErrorCode } from '../src/errors.js';
import { SessionQueue } from '../src/session-queue.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}
function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let every pending promise callback run (no timers involved). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
}

describe('SessionQueue (B-13)', () => {
  it('turns of one session run strictly one after another, in order', async () => {
    const q = new SessionQueue({ concurrency: 4 });
    const log: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((g, i) =>
      q.run('s1', async () => {
        log.push(`start ${i}`);
        await g.promise;
        log.push(`end ${i}`);
        return i;
      }),
    );
    await flush();
    expect(log).toEqual(['start 0']);
    expect(q.running).toBe(1);
    expect(q.queued).toBe(2);
    gates[1]!.resolve(); // finishing out of order must not start turn 2 early
    await flush();
    expect(log).toEqual(['start 0']);
    gates[0]!.resolve();
    await flush();
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2']);
    gates[2]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
  });

  it('different sessions run in parallel up to the global limit', async () => {
    const q = new SessionQueue({ concurrency: 2 });
    const started: string[] = [];
    const gates = new Map(['a', 'b', 'c'].map((s) => [s, deferred()]));
    const runs = ['a', 'b', 'c'].map((s) =>
      q.run(s, async () => {
        started.push(s);
        await gates.get(s)!.promise;
      }),
    );
    await flush();
    expect(started).toEqual(['a', 'b']);
    expect(q.running).toBe(2);
    gates.get('b')!.resolve();
    await flush();
    expect(started).toEqual(['a', 'b', 'c']);
    gates.get('a')!.resolve();
    gates.get('c')!.resolve();
    await Promise.all(runs);
  });

  it('a free slot goes to the next job whose session is not busy', async () => {
    const q = new SessionQueue({ concurrency: 2 });
    const started: string[] = [];
    const a1 = deferred();
    const b1 = deferred();
    const jobs = [
      q.run('a', async () => {
        started.push('a1');
        await a1.promise;
      }),
      q.run('b', async () => {
        started.push('b1');
        await b1.promise;
      }),
      q.run('a', async () => {
        started.push('a2');
      }),
      q.run('c', async () => {
        started.push('c1');
      }),
    ];
    await flush();
    b1.resolve(); // a is still busy: c1 must start, a2 must wait
    await flush();
    expect(started).toEqual(['a1', 'b1', 'c1']);
    a1.resolve();
    await Promise.all(jobs);
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2']);
  });

  it('a failing turn rejects its own run only; the session goes on', async () => {
    const q = new SessionQueue();
    const failed = q.run('s', () => {
      throw new Error('boom');
    });
    const next = q.run('s', async () => 'ok');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ok');
  });

  it('idle() resolves when nothing runs or waits', async () => {
    const q = new SessionQueue();
    await q.idle();
    const g = deferred();
    void q.run('s', () => g.promise);
    let idle = false;
    const waiting = q.idle().then(() => {
      idle = true;
    });
    await flush();
    expect(idle).toBe(false);
    g.resolve();
    await waiting;
    expect(idle).toBe(true);
  });

  it('close() rejects queued work and refuses new work; running work finishes', async () => {
    const q = new SessionQueue({ concurrency: 1 });
    const g = deferred<string>();
    const running = q.run('a', () => g.promise);
    const queued = q.run('b', async () => 'never');
    await flush();
    q.close();
    let queuedError: unknown = 'still queued';
    queued.catch((e: unknown) => {
      queuedError = e;
    });
    await flush();
    expect(hasErrorCode(queuedError, 'AM_QUEUE_CLOSED')).toBe(true);
    await expect(q.run('c', async () => 'x')).rejects.toSatisfy((e) => hasErrorCode(e, 'AM_QUEUE_CLOSED'));
    g.resolve('done');
    expect(await running).toBe('done');
    await q.idle();
  });

  it('rejects a bad concurrency', () => {
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => new SessionQueue({ concurrency })).toThrow(/concurrency/);
    }
  });
});
