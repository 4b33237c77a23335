/**
 * The worker side of the child-process turn runner (see SPEC B-12): a worker entry calls
 * {@link runChildTurnWorker} with the host's turn side; the worker receives one job over IPC, runs
 * one turn (the kit's `runTurnJob`), reports over IPC and exits. Light at load: the kit's turn code
 * is imported when the job arrives, so the host's own loading (its SDK) can start at once.
 */
import { PendingPermissions } from '@agentmail/shared-policy';
import type { TurnAdapter } from '../adapter.js';
import type { CommitFn } from '../turn-gate.js';
import type { TurnJob } from '../turn-job.js';
import type { RunnerMessage, WorkerMessage } from './messages.js';

/**
 * How long a worker whose parent went away lives on, in ms: long enough for a pending request's
 * withdrawal (WITHDRAW_TIMEOUT_MS) to reach the Gateway. @default 6_000
 */
export const ORPHAN_EXIT_MS = 6_000;

/** Where a worker's kit and host events go: the bridge's bus, over IPC (any JSON event with a `type`). */
export type WorkerEmit = <E extends { type: string }>(event: E) => void;

/** What a worker entry gives {@link runChildTurnWorker}. */
export interface ChildTurnWorkerOptions<T, R> {
  /**
   * The host's turn side for `job` (pi: its SDK, loaded at spawn): called once, when the job
   * arrives. Its events go to `emit`. A throw ends the worker without a report (a lost turn, B-14).
   */
  turns(job: TurnJob, emit: WorkerEmit): TurnAdapter | Promise<TurnAdapter>;
  /** A one-shot task instead of a turn (`runTask` of the runner); its result (JSON) is sent back. */
  task?(task: T): Promise<R>;
}

/**
 * Run this process as a worker of the child-process turn runner: listen for its one job (or
 * task), run it, report, exit 0. `abort` stops the turn (B-7: a failure mail follows); `shutdown`
 * denies pending questions and stops it (B-15, P-7: no failure mail); a parent that goes away is a
 * shutdown, and the worker exits 1 after {@link ORPHAN_EXIT_MS}.
 * @example
 * // worker-main.ts, the runner's `worker.path`
 * runChildTurnWorker({ turns: (job, emit) => myHostTurns(job, emit) });
 */
export function runChildTurnWorker<T = unknown, R = unknown>(options: ChildTurnWorkerOptions<T, R>): void {
  const abort = new AbortController();
  const shutdown = new AbortController();
  const pending = new PendingPermissions({ signal: shutdown.signal });
  const commits = commitRoundTrip();
  let started = false;
  /** One job or task per worker; a failure to run it ends the worker unreported (a lost turn). */
  const once = (run: () => Promise<void>): void => {
    if (started) return;
    started = true;
    run().catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  };
  const io = { pending, signal: abort.signal, commit: commits.commit };

  process.on('message', (raw: RunnerMessage) => {
    switch (raw.type) {
      case 'job':
        once(() => runJob(raw.job, options, io));
        break;
      case 'task':
        once(() => runTask(raw.task as T, options));
        break;
      case 'permission_decision':
        pending.resolve(raw.event);
        break;
      case 'abort':
        abort.abort(raw.reason);
        break;
      case 'shutdown':
        // P-7, B-15: pending questions resolve as denied, then the turn is stopped.
        shutdown.abort();
        abort.abort('shutdown');
        break;
      case 'commit_answer':
        commits.answer(raw.id, raw.granted);
        break;
    }
  });
  // The parent (or its launcher) went away: stop at once (the turn cannot be reported any more).
  // This is a shutdown for the turn: no failure mail (the mail stays unread and is delivered
  // again, B-14, B-20), unlike a turn timeout.
  process.on('disconnect', () => {
    commits.refuseAll();
    shutdown.abort();
    abort.abort('shutdown');
    setTimeout(() => process.exit(1), ORPHAN_EXIT_MS).unref();
  });
  void send({ type: 'ready' });
}

/** Send a message to the parent; resolves once it is written (at once when the channel is gone). */
function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

/**
 * The relay's commit gate lives in the runner's process (its runtime gives a timed-out turn up):
 * `commit` asks it before the relay goes out and reports when it settled (one outcome per mail,
 * B-7, B-10); `answer` delivers its reply; no answer (the parent went away: `refuseAll`) is a
 * refusal.
 */
function commitRoundTrip(): {
  commit: CommitFn;
  answer(id: number, granted: boolean): void;
  refuseAll(): void;
} {
  const waiting = new Map<number, (granted: boolean) => void>();
  let nextId = 1;
  const commit: CommitFn = async (fn) => {
    const id = nextId++;
    const granted = await new Promise<boolean>((resolve) => {
      waiting.set(id, resolve);
      void send({ type: 'commit_request', id });
    });
    if (!granted) return undefined;
    let ok = false;
    try {
      const value = await fn();
      ok = true;
      return value;
    } finally {
      void send({ type: 'commit_done', id, ok });
    }
  };
  return {
    commit,
    answer(id, granted) {
      waiting.get(id)?.(granted);
      waiting.delete(id);
    },
    refuseAll() {
      for (const answer of waiting.values()) answer(false);
      waiting.clear();
    },
  };
}

/** The worker's turn: the host's adapter under the kit's `runTurnJob`, reported, then exit 0. */
async function runJob<T, R>(
  job: TurnJob,
  options: ChildTurnWorkerOptions<T, R>,
  io: { pending: PendingPermissions; signal: AbortSignal; commit: CommitFn },
): Promise<void> {
  const emit: WorkerEmit = (event) => void send({ type: 'event', event });
  const adapter = await options.turns(job, emit);
  const { runTurnJob } = await import('../turn-job.js');
  const report = await runTurnJob(job, adapter, {
    ...io,
    emit,
    onReconnect: (url, key) => void send({ type: 'reconnect', url, key }),
  });
  // A stopped turn's pending request is being withdrawn (the person is told): let that finish.
  await (await import('../withdraw.js')).withdrawalsSettled();
  // The peak RSS rides along for the runner's log (and a bench).
  await send({ type: 'result', ...report, maxRssKb: process.resourceUsage().maxRSS });
  process.exit(0);
}

/** The worker's one-shot task, its result sent back, then exit 0. */
async function runTask<T, R>(task: T, options: ChildTurnWorkerOptions<T, R>): Promise<void> {
  if (!options.task) throw new Error('this worker entry runs no tasks');
  await send({ type: 'task_result', result: await options.task(task) });
  process.exit(0);
}
