import { AgentMailError } from './errors.js';

/** Turns running at once across all sessions. @default 4 */
export const SESSION_QUEUE_CONCURRENCY = 4;

/** Options of {@link SessionQueue}. */
export interface SessionQueueOptions {
  /** Global limit of tasks running at once (different sessions). @default SESSION_QUEUE_CONCURRENCY */
  concurrency?: number;
}

interface Job {
  sessionKey: string;
  task: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs turns: strictly one after another within a session, sessions in parallel up to a global
 * limit (see SPEC B-13). Waiting work starts in arrival order, skipping jobs whose session is busy.
 *
 * `close()` rejects every queued job with `AM_QUEUE_CLOSED` and refuses new ones; running tasks
 * are not interrupted (stop them through their own signal, see {@link settleWithTimeout}).
 *
 * @example
 * const queue = new SessionQueue({ concurrency: 2 });
 * await queue.run(sessionId, () => runTurn(mail));
 */
export class SessionQueue {
  readonly concurrency: number;
  readonly #waiting: Job[] = [];
  readonly #busy = new Set<string>();
  #idleWaiters: Array<() => void> = [];
  #closed = false;

  /** @throws AgentMailError `AM_OPTION_OUT_OF_RANGE` when `concurrency` is not an integer ≥ 1. */
  constructor(options: SessionQueueOptions = {}) {
    const concurrency = options.concurrency ?? SESSION_QUEUE_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new AgentMailError(
        'AM_OPTION_OUT_OF_RANGE',
        `SessionQueue option "concurrency" must be an integer >= 1 (got ${concurrency})`,
      );
    }
    this.concurrency = concurrency;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#busy.size;
  }

  /** Tasks waiting to start. */
  get queued(): number {
    return this.#waiting.length;
  }

  /**
   * Queue `task` for `sessionKey`; resolves or rejects with the task's own outcome.
   * @throws AgentMailError `AM_QUEUE_CLOSED` (as a rejection) after {@link SessionQueue.close}, or
   *   when the queue closes before the task started.
   */
  run<T>(sessionKey: string, task: () => Promise<T> | T): Promise<T> {
    if (this.#closed) return Promise.reject(closedError());
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({
        sessionKey,
        task: async () => task(),
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#pump();
    });
  }

  /** Resolves once nothing is running or queued. */
  idle(): Promise<void> {
    if (this.#busy.size === 0 && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Reject queued (not started) work with `AM_QUEUE_CLOSED` and refuse new work. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const dropped = this.#waiting.splice(0);
    for (const job of dropped) job.reject(closedError());
    this.#checkIdle();
  }

  #pump(): void {
    for (let i = 0; i < this.#waiting.length && this.#busy.size < this.concurrency; ) {
      const job = this.#waiting[i]!;
      if (this.#busy.has(job.sessionKey)) {
        i += 1;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#start(job);
    }
  }

  #start(job: Job): void {
    this.#busy.add(job.sessionKey);
    job
      .task()
      .then(job.resolve, job.reject)
      .finally(() => {
        this.#busy.delete(job.sessionKey);
        this.#pump();
        this.#checkIdle();
      });
  }

  #checkIdle(): void {
    if (this.#busy.size > 0 || this.#waiting.length > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function closedError(): AgentMailError {
  return new AgentMailError(
    'AM_QUEUE_CLOSED',
    'the session queue is closed (the bridge is shutting down); the turn was not started',
  );
}
