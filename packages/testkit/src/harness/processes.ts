/**
 * Child processes of the harness: each in its own process group (so a stop also ends its
 * children, e.g. a bridge's workers and their tool processes), output kept line by line for
 * waits and for failure messages, and killed on every path out: `stop()`, `kill()`, or the exit
 * of the test process itself.
 */

import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import type { BridgeEvent, BridgeEventType } from '@agentmail/bridge-kit';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';

/** Lines of output kept per process (older ones are dropped). @default 5_000 */
export const PROCESS_LOG_MAX_LINES = 5_000;

/** Time `stop()` waits after SIGTERM before SIGKILL, in ms. @default 10_000 */
export const PROCESS_STOP_GRACE_MS = 10_000;

/** Set to `1` to echo every child's output to stderr as `[name] line` while it runs. */
export const VERBOSE_ENV = 'AGENTMAIL_TESTKIT_VERBOSE';

/** How a process ended. */
export interface ProcessExit {
  /** Exit code, `null` when ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

/**
 * Last resort: the test process is ending (also after a failed test, or when vitest ends its
 * worker with SIGTERM, which skips 'exit' handlers), so kill every group now. On a signal the
 * default action is restored afterwards unless someone else handles it.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = (): void => {
    for (const proc of live) proc.kill();
  };
  process.once('exit', killAll);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAll();
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/** Sends `signal` to the process group `-pid`, or to `pid` alone when it leads no group. */
function signalRunning(pid: number, signal: NodeJS.Signals): void {
  try {
    // A negative pid signals the whole group (children spawned `detached` lead their own group).
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Environment of the current process without any `AGENTMAIL_*` variable, plus `extra`. */
export function cleanEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('AGENTMAIL_') && value !== undefined) env[key] = value;
  return { ...env, ...extra };
}

/**
 * A child process owned by the harness. Spawned with {@link ManagedProcess.spawn} (its own process
 * group) or adopted with {@link ManagedProcess.adopt} (a process an adapter spawned itself; it is
 * then killed as a group only if it leads one).
 */
/** A logged bridge event: the event's fields plus `event` (its type) and pino's own fields. */
export type LoggedEvent<T extends string> = (T extends BridgeEventType
  ? Omit<Extract<BridgeEvent, { type: T }>, 'type'>
  : Record<string, unknown>) & { event: T; level?: number; time?: number; msg?: string } & Record<
    string,
    unknown
  >;

/** One pino JSON line (possibly prefixed, e.g. `[stderr] `), or undefined. */
function parseLogLine(line: string): Record<string, unknown> | undefined {
  const at = line.indexOf('{');
  if (at < 0) return undefined;
  try {
    const entry: unknown = JSON.parse(line.slice(at));
    return typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export class ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once the process has exited (never rejects). */
  readonly exited: Promise<ProcessExit>;
  readonly #lines: string[] = [];
  readonly #events = new EventEmitter();
  /** Spawned by us in its own group (so the group id is ours even after the leader exited). */
  readonly #ownGroup: boolean;
  #exit: ProcessExit | undefined;
  #lineCount = 0;

  private constructor(name: string, child: ChildProcess, ownGroup: boolean) {
    if (child.pid === undefined) {
      child.once('error', () => {}); // the spawn error is reported by the throw below
      throw new TestkitError(
        TESTKIT_ERROR_CODES.PROCESS_START,
        `${name}: the process did not start (no pid); check the command and its path.`,
      );
    }
    this.name = name;
    this.child = child;
    this.pid = child.pid;
    this.#ownGroup = ownGroup;
    this.#events.setMaxListeners(0);
    const verbose = process.env[VERBOSE_ENV] === '1';
    for (const [stream, prefix] of [
      [child.stdout, ''],
      [child.stderr, '[stderr] '],
    ] as const) {
      if (stream === null) continue;
      createInterface({ input: stream }).on('line', (text) => {
        const line = `${prefix}${text}`;
        this.#lines.push(line);
        this.#lineCount++;
        if (this.#lines.length > PROCESS_LOG_MAX_LINES) this.#lines.shift();
        if (verbose) process.stderr.write(`[${name}] ${line}\n`);
        this.#events.emit('line', line, this.#lineCount - 1);
      });
    }
    this.exited = new Promise<ProcessExit>((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.#exit !== undefined) return;
        this.#exit = { code, signal };
        live.delete(this);
        this.#events.emit('exit', this.#exit);
        resolve(this.#exit);
      };
      child.once('exit', done);
      // E.g. a failed kill; the process itself is followed through 'exit'.
      child.on('error', (error) => {
        this.#lines.push(`[process error] ${error.message}`);
      });
    });
    live.add(this);
    installExitHook();
  }

  /**
   * Spawn `command args` in a new process group with piped output.
   * @throws {TestkitError} `AM_TESTKIT_PROCESS_START` when no process could be created.
   */
  static spawn(
    name: string,
    command: string,
    args: readonly string[],
    options: { env: NodeJS.ProcessEnv; cwd?: string },
  ): ManagedProcess {
    const spawnOptions: SpawnOptions = {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    };
    return new ManagedProcess(name, spawn(command, args, spawnOptions), true);
  }

  /** Take ownership of a process spawned elsewhere (its piped output is followed too). */
  static adopt(name: string, child: ChildProcess): ManagedProcess {
    return new ManagedProcess(name, child, false);
  }

  /** How it exited, `undefined` while running. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** Output lines so far (stdout as is, stderr prefixed `[stderr] `), oldest first. */
  lines(): string[] {
    return [...this.#lines];
  }

  /**
   * The bridge events of one type the process logged, oldest first: every bridge logs each kit
   * event (and its host's own) as one JSON line with an `event` field (shared-policy
   * `logBridgeEvents`); a test asserts on those typed fields, never on a message text.
   * @example proc.bridgeEvents('turn_done').map((e) => e.mail_id)
   */
  bridgeEvents<T extends BridgeEventType | (string & {})>(type: T): Array<LoggedEvent<T>> {
    return this.#lines.flatMap((line) => {
      const entry = parseLogLine(line);
      return entry?.event === type ? [entry as LoggedEvent<T>] : [];
    });
  }

  /**
   * The first bridge event of `type` (matching `where`) the process logs, from its output so far
   * or later; rejects after `timeoutMs` naming the awaited type and the output's tail.
   */
  waitForEvent<T extends BridgeEventType | (string & {})>(
    type: T,
    timeoutMs: number,
    where: (event: LoggedEvent<T>) => boolean = () => true,
  ): Promise<LoggedEvent<T>> {
    const hit = this.bridgeEvents(type).find(where);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(
          new Error(
            `${this.name}: no bridge event "${type}" within ${timeoutMs} ms; output:\n${this.tail()}`,
          ),
        );
      }, timeoutMs);
      const off = this.onLine((line) => {
        const entry = parseLogLine(line);
        if (entry?.event !== type || !where(entry as LoggedEvent<T>)) return;
        clearTimeout(timer);
        off();
        resolve(entry as LoggedEvent<T>);
      });
    });
  }

  /** The last `count` output lines joined with newlines, for error messages. */
  tail(count = 40): string {
    return this.#lines.slice(-count).join('\n');
  }

  /** Calls `listener` with each new output line; returns the unsubscribe function. */
  onLine(listener: (line: string) => void): () => void {
    this.#events.on('line', listener);
    return () => this.#events.off('line', listener);
  }

  /**
   * First output line (already printed or to come) matching `pattern`. Event-driven.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` after `timeoutMs`; `AM_TESTKIT_PROCESS_START` when the process exits first.
   */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    const seen = this.#lines.find((line) => pattern.test(line));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#events.off('line', onLine);
        this.#events.off('exit', onExit);
      };
      const onLine = (line: string): void => {
        if (!pattern.test(line)) return;
        cleanup();
        resolve(line);
      };
      const onExit = (exit: ProcessExit): void => {
        cleanup();
        reject(
          new TestkitError(
            TESTKIT_ERROR_CODES.PROCESS_START,
            `${this.name} exited (code ${exit.code}, signal ${exit.signal}) before printing a line matching ${pattern}; its output:\n${this.tail()}`,
          ),
        );
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new TestkitError(
            TESTKIT_ERROR_CODES.WAIT_TIMEOUT,
            `${this.name} printed no line matching ${pattern} within ${timeoutMs} ms; its output:\n${this.tail()}`,
          ),
        );
      }, timeoutMs);
      this.#events.on('line', onLine);
      if (this.#exit !== undefined) onExit(this.#exit);
      else this.#events.on('exit', onExit);
    });
  }

  /**
   * SIGTERM to the process group, SIGKILL after `graceMs`, then SIGKILL to the group again so no
   * child it left behind survives. Resolves with how the process exited. Idempotent.
   */
  async stop(graceMs: number = PROCESS_STOP_GRACE_MS): Promise<ProcessExit> {
    if (this.#exit === undefined) {
      this.#signal('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const forced = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.#signal('SIGKILL');
          resolve();
        }, graceMs);
      });
      await Promise.race([this.exited, forced]);
      clearTimeout(timer);
    }
    const exit = await this.exited;
    this.#signal('SIGKILL');
    return exit;
  }

  /** SIGKILL to the process group now (synchronous; also used by the exit hook). */
  kill(): void {
    this.#signal('SIGKILL');
  }

  #signal(signal: NodeJS.Signals): void {
    if (this.#exit === undefined) {
      signalRunning(this.pid, signal);
      return;
    }
    // Exited and reaped: its pid may belong to someone else now. Only a group we created is
    // still ours (Linux keeps a pid allocated while a group of that id has members), and only
    // the group is signalled: it reaches children the leader left behind.
    if (!this.#ownGroup) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // no member left
    }
  }
}
