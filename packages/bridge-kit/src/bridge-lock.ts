/**
 * One bridge per agent and data directory (see SPEC G-22: the Gateway fans every event out to
 * every open stream of an agent, so two bridges of one agent would run every mail twice).
 *
 * The lock is proper-lockfile's: an atomic `mkdir` of `bridge-<agent>.lock` in the bridge's data
 * directory, whose mtime the holder refreshes every `updateMs`. A lock not refreshed for
 * `staleMs` (its holder crashed or was SIGKILLed) is stale and taken over by the next attempt; a
 * standby process attempts every `retryMs`. No pid checks: works across pid namespaces and with
 * reused pids. Beside the lock, `bridge-<agent>.owner.json` says which process holds it (for
 * logs only; the lock directory itself must stay empty).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import lockfile from 'proper-lockfile';

/** A lock not refreshed for this long is stale and taken over, in ms. @default 15_000 */
export const BRIDGE_LOCK_STALE_MS = 15_000;
/** The holder refreshes the lock this often, in ms. @default 5_000 */
export const BRIDGE_LOCK_UPDATE_MS = 5_000;
/** A standby process tries to take the lock this often, in ms. @default 2_000 */
export const BRIDGE_LOCK_RETRY_MS = 2_000;

/** Who holds a bridge lock (from the owner file; informational). */
export interface BridgeLockOwner {
  pid: number;
  hostname: string;
  /** ISO time the holder took the lock. */
  since: string;
}

/** Options of {@link BridgeLock}. */
export interface BridgeLockOptions {
  /** The bridge's data directory (absolute; created when missing). */
  dir: string;
  /** The agent name: one lock per agent within a data directory. */
  agentName: string;
  /** @default BRIDGE_LOCK_STALE_MS (minimum 2 000) */
  staleMs?: number;
  /** @default BRIDGE_LOCK_UPDATE_MS (at most staleMs / 2) */
  updateMs?: number;
  /** @default BRIDGE_LOCK_RETRY_MS, or a fifth of a shorter `staleMs` (at least 250) */
  retryMs?: number;
  /** The held lock was lost (not refreshed in time, or taken over): stop acting as the bridge. */
  onLost?: (err: Error) => void;
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** File-name-safe form of an agent name (agent names are already `[a-z0-9._-]`; anything else is replaced). */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
}

/**
 * The exclusive "this process is the bridge" lock of one agent in one bridge data directory
 * (see SPEC G-22, B-1).
 * @example
 * const lock = new BridgeLock({ dir: dataDir, agentName: 'alice', onLost: () => runtime.stop() });
 * if (await lock.acquire(signal)) { ... act as the bridge ...; await lock.release(); }
 */
export class BridgeLock {
  /** The lock directory (`<dir>/bridge-<agent>.lock`). */
  readonly path: string;
  /** The owner file beside it. */
  readonly ownerPath: string;
  readonly #dir: string;
  readonly #staleMs: number;
  readonly #updateMs: number;
  readonly #retryMs: number;
  readonly #onLost: ((err: Error) => void) | undefined;
  #release: (() => Promise<void>) | undefined;

  constructor(options: BridgeLockOptions) {
    this.#dir = options.dir;
    const base = join(options.dir, `bridge-${safeName(options.agentName)}`);
    this.path = `${base}.lock`;
    this.ownerPath = `${base}.owner.json`;
    this.#staleMs = Math.max(2_000, options.staleMs ?? BRIDGE_LOCK_STALE_MS);
    this.#updateMs = Math.min(options.updateMs ?? BRIDGE_LOCK_UPDATE_MS, this.#staleMs / 2);
    // A short stale time (a setting) is looked at as often: a standby takes over soon after it.
    this.#retryMs = options.retryMs ?? Math.min(BRIDGE_LOCK_RETRY_MS, Math.max(250, this.#staleMs / 5));
    this.#onLost = options.onLost;
  }

  /** True while this object holds the lock. */
  get held(): boolean {
    return this.#release !== undefined;
  }

  /**
   * One attempt: true when the lock is now held by this object (also when it already was), false
   * when another live holder has it. A stale lock is taken over.
   * @throws AgentMailError `AM_BRIDGE_LOCK_FAILED` when the data directory or the lock can not be written.
   */
  async tryAcquire(): Promise<boolean> {
    if (this.#release) return true;
    try {
      mkdirSync(this.#dir, { recursive: true });
      this.#release = await lockfile.lock(this.#dir, {
        lockfilePath: this.path,
        realpath: false,
        retries: 0,
        stale: this.#staleMs,
        update: this.#updateMs,
        onCompromised: (err) => {
          this.#release = undefined;
          this.#onLost?.(err);
        },
      });
    } catch (err) {
      if (codeOf(err) === 'ELOCKED') return false;
      throw new AgentMailError(
        ERROR_CODES.BRIDGE_LOCK_FAILED,
        `bridge lock ${this.path}: ${(err as Error).message}; give this user write access to the bridge data directory or choose another one`,
      );
    }
    const owner: BridgeLockOwner = {
      pid: process.pid,
      hostname: hostname(),
      since: new Date().toISOString(),
    };
    try {
      writeFileSync(this.ownerPath, `${JSON.stringify(owner)}\n`);
    } catch {
      // informational only
    }
    return true;
  }

  /**
   * Wait until the lock is held (true) or `signal` aborts (false), trying every `retryMs`.
   * `onWaiting` is called once, after the first failed attempt, with the current holder.
   * @throws AgentMailError `AM_BRIDGE_LOCK_FAILED` (see {@link BridgeLock.tryAcquire}).
   */
  async acquire(
    signal?: AbortSignal,
    onWaiting?: (owner: BridgeLockOwner | undefined) => void,
  ): Promise<boolean> {
    let told = false;
    while (!signal?.aborted) {
      if (await this.tryAcquire()) return true;
      if (!told) {
        told = true;
        onWaiting?.(this.owner());
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, this.#retryMs);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    return false;
  }

  /** The process named in the owner file (may be a dead holder's until the lock is taken over). */
  owner(): BridgeLockOwner | undefined {
    try {
      const v = JSON.parse(readFileSync(this.ownerPath, 'utf8')) as Partial<BridgeLockOwner>;
      if (typeof v.pid === 'number' && typeof v.hostname === 'string')
        return { pid: v.pid, hostname: v.hostname, since: String(v.since ?? '') };
    } catch {
      // missing or half written
    }
    return undefined;
  }

  /** Give the lock up (a standby takes it at its next attempt); safe when not held. */
  async release(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    if (!release) return;
    try {
      await release();
    } catch {
      // already lost or removed: nothing to give up
    }
  }
}
