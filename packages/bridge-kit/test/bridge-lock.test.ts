import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '@agentmail/shared-policy';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeLock } from '../src/bridge-lock.js';

// SPEC G-22: the Gateway fans each event out to every stream of an agent, so only one process per
// agent and bridge data directory may be the bridge. Real child processes, real files, real SIGKILL.

const HOLDER = fileURLToPath(new URL('./support/lock-holder.ts', import.meta.url));
const STALE_MS = 3_000;
const RETRY_MS = 200;

interface Holder {
  proc: ChildProcess;
  /** Resolves with the first line of this event (and its arrival time). */
  next(event: string, timeoutMs?: number): Promise<{ line: Record<string, unknown>; at: number }>;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'am-bridge-lock-'));
  dirs.push(dir);
  return dir;
}

function startHolder(dir: string, agent = 'alice'): Holder {
  const proc = spawn(
    process.execPath,
    [
      '--conditions=@agentmail/source',
      '--import',
      'tsx',
      HOLDER,
      dir,
      agent,
      String(STALE_MS),
      String(RETRY_MS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: fileURLToPath(new URL('..', import.meta.url)) },
  );
  children.push(proc);
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (text) => {
    lines.push({ ...(JSON.parse(text) as Record<string, unknown>), at: Date.now() });
    for (const w of waiters.splice(0)) w();
  });
  return {
    proc,
    next: (event, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${event}" from pid ${proc.pid}`)), timeoutMs);
        const check = (): void => {
          const line = lines.find((l) => l.event === event);
          if (line) {
            clearTimeout(timer);
            resolve({ line, at: line.at as number });
          } else waiters.push(check);
        };
        check();
        proc.once('exit', () => waiters.length > 0 && check());
      }),
  };
}

function exited(proc: ChildProcess): Promise<void> {
  return proc.exitCode !== null || proc.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => proc.once('exit', () => resolve()));
}

afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill('SIGKILL');
    await exited(c);
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('BridgeLock (SPEC G-22)', () => {
  it('two processes: one holds, the other waits naming the holder; SIGKILL of the holder → takeover within stale + retry', async () => {
    const dir = tempDir();
    const a = startHolder(dir);
    await a.next('held');
    const b = startHolder(dir);
    const waiting = await b.next('waiting');
    expect((waiting.line.owner as { pid: number }).pid).toBe(a.proc.pid);

    const killedAt = Date.now();
    a.proc.kill('SIGKILL');
    await exited(a.proc);
    const { at } = await b.next('held');
    const takeoverMs = at - killedAt;
    // Stale after at most STALE_MS without a refresh, then the next attempt (RETRY_MS) takes it;
    // plus slack for a loaded machine.
    expect(takeoverMs).toBeLessThanOrEqual(STALE_MS + RETRY_MS + 2_000);
    console.info(
      `bridge lock takeover after SIGKILL: ${takeoverMs} ms (stale ${STALE_MS} ms, retry ${RETRY_MS} ms)`,
    );
  });

  it('a graceful stop hands over at the next attempt, long before the lock would be stale', async () => {
    const dir = tempDir();
    const a = startHolder(dir);
    await a.next('held');
    const b = startHolder(dir);
    await b.next('waiting');
    const stoppedAt = Date.now();
    a.proc.kill('SIGTERM');
    const { at } = await b.next('held');
    expect(at - stoppedAt).toBeLessThan(STALE_MS);
  });

  it('one lock per agent: another agent in the same directory is not blocked', async () => {
    const dir = tempDir();
    const a = startHolder(dir, 'alice');
    await a.next('held');
    const b = startHolder(dir, 'bob');
    await b.next('held');
  });

  it('in one process: a second lock object is refused while the first holds; release frees it', async () => {
    const dir = tempDir();
    const first = new BridgeLock({ dir, agentName: 'alice', staleMs: STALE_MS });
    const second = new BridgeLock({ dir, agentName: 'alice', staleMs: STALE_MS });
    expect(await first.tryAcquire()).toBe(true);
    expect(await first.tryAcquire()).toBe(true); // already ours
    expect(await second.tryAcquire()).toBe(false);
    expect(second.owner()?.pid).toBe(process.pid);
    const stop = new AbortController();
    stop.abort();
    expect(await second.acquire(stop.signal)).toBe(false);
    await first.release();
    expect(first.held).toBe(false);
    expect(await second.tryAcquire()).toBe(true);
    await second.release();
  });

  it('a directory that can not be created is AM_BRIDGE_LOCK_FAILED naming the lock', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const lock = new BridgeLock({ dir: join(file, 'data'), agentName: 'alice' });
    await expect(lock.tryAcquire()).rejects.toMatchObject({
      code: ERROR_CODES.BRIDGE_LOCK_FAILED,
      message: expect.stringContaining('bridge-alice.lock'),
    });
  });
});
