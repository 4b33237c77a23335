/**
 * The child-process turn runner (see SPEC B-12): ONE WORKER CHILD PROCESS PER MAIL, for a host
 * whose turns must not run on the loop that reads SSE (pi: its SDK runs in the process). Each
 * delegated turn forks a worker (through the launcher child, launcher.ts) that runs the kit's
 * `runTurnJob` on the job the kit hands over (worker.ts, `runChildTurnWorker`); its events,
 * commit round trips and reconnects come back over IPC. A worker that exits before reporting is a
 * lost turn (B-14, redelivered); a turn timeout asks the worker to stop and kills its process group
 * after the grace period (B-7); a shutdown stops every worker within the grace period (B-15, P-7).
 */
import type { PermissionDecisionEvent } from '@agentmail/protocol';
import { TurnLostError } from '../bridge-runtime.js';
import type { BridgeAdapter, DelegatedTurn } from '../create-bridge.js';
import type { BridgeEvent } from '../events.js';
import { turnProcessEnv } from '../turn-env.js';
import type { TurnJob } from '../turn-job.js';
import type { MailTurnReport } from '../turn-report.js';
import { ChildLauncher, type WorkerEntry, type WorkerHandle } from './launcher.js';
import type { ChildTurnEvent, RunnerMessage, WorkerMessage, WorkerReport } from './messages.js';

/** Time a worker gets to stop after `abort` or `shutdown` before it is killed, in ms (B-7, B-15). @default 5_000 */
export const CHILD_STOP_GRACE_MS = 5_000;

/** What the runner needs of the bridge it serves (read when used: the bridge is made after the runner). */
export interface ChildTurnsBridge {
  /** The bridge's bus: the runner's {@link ChildTurnEvent}s and the workers' events. */
  emit(event: BridgeEvent | ChildTurnEvent | { type: string }): void;
  /** B-18: a worker's connect_to_server switched Gateway. */
  reconnect(url: string, key: string): void;
  /** Aborted once the bridge stops: no worker is forked from then on. */
  readonly stopSignal: AbortSignal;
}

/** Options of {@link childProcessTurns}. */
export interface ChildProcessTurnsOptions {
  /** The worker entry: a module that calls `runChildTurnWorker` (`@agentmail/bridge-kit/child-worker`). */
  worker: WorkerEntry;
  /** Absolute path of the launcher entry: a module that imports `@agentmail/bridge-kit/child-launcher`. */
  launcherPath: string;
  /**
   * The environment of the launcher and so of every worker, read at each launcher fork. A worker's
   * environment is its tools' (a shell the model runs): no key, no credential (B-21).
   * @default turnProcessEnv(process.env)
   */
  env?: () => NodeJS.ProcessEnv;
  /** The bridge (a getter: `() => bridge`, the bridge is created with the runner's adapter). */
  bridge: () => ChildTurnsBridge;
  /** Time a worker gets after `abort`/`shutdown` before it is killed, in ms. @default CHILD_STOP_GRACE_MS */
  stopGraceMs?: number;
}

/** How a one-shot task ended: not started (the bridge is stopping), or its result (undefined: none came). */
export type ChildTaskOutcome<R> = { started: false } | { started: true; result: R | undefined };

/** The runner: its adapter part for `createBridge`, one-shot tasks, and the launcher's end. */
export interface ChildProcessTurns {
  /** The delegated-turn part of the bridge's adapter (`delegateTurn`, `onDecision`, `stop`): spread it in. */
  readonly adapter: Required<Pick<BridgeAdapter, 'delegateTurn' | 'onDecision' | 'stop'>>;
  /**
   * Run `task` (JSON) in a worker of its own (the worker's `task` handler; pi: the permission-hook
   * check and the catalogue, so the host's SDK never loads in the bridge's process). Killed after
   * `timeoutMs`, or by the shutdown. Never rejects.
   */
  runTask<R>(task: unknown, options: { timeoutMs: number }): Promise<ChildTaskOutcome<R>>;
  /** Let the launcher go (after the bridge stopped); later forks fail. Idempotent. */
  close(): void;
}

/**
 * The child-process turn runner (B-12): give its `adapter` to `createBridge` (delegated turns),
 * call `close()` once the bridge stopped. The launcher is forked at the first worker, not before
 * (a bridge that is refused at registration never forks). Forks go one per event-loop turn.
 * @example
 * const children = childProcessTurns({ worker: { path: workerJs }, launcherPath, bridge: () => bridge });
 * const bridge = createBridge<MyEvent | ChildTurnEvent>({ platform, version, config,
 *   adapter: { snapshot, ...children.adapter } });
 * await bridge.start(); … await bridge.stop(); children.close();
 */
export function childProcessTurns(options: ChildProcessTurnsOptions): ChildProcessTurns {
  const runner = new ChildTurnRunner(options);
  return {
    adapter: {
      delegateTurn: (job, turn) => runner.delegateTurn(job, turn),
      onDecision: (event: PermissionDecisionEvent) =>
        runner.broadcast({ type: 'permission_decision', event: { ...event } }),
      stop: () => runner.stopWorkers(),
    },
    runTask: (task, { timeoutMs }) => runner.runTask(task, timeoutMs),
    close: () => runner.close(),
  };
}

/** The runner's state: its launcher, its running workers, the fork order. */
class ChildTurnRunner {
  readonly #options: ChildProcessTurnsOptions;
  readonly #graceMs: number;
  readonly #workers = new Set<WorkerHandle>();
  readonly #launcher: ChildLauncher;
  #stopped = false;
  /** Forks go one per event-loop turn (each blocks the launcher's loop 5–25 ms): see {@link #forkSlot}. */
  #lastFork: Promise<void> = Promise.resolve();

  constructor(options: ChildProcessTurnsOptions) {
    this.#options = options;
    this.#graceMs = options.stopGraceMs ?? CHILD_STOP_GRACE_MS;
    this.#launcher = new ChildLauncher(
      options.launcherPath,
      options.env ?? (() => turnProcessEnv(process.env)),
      (e) => this.#emit(e),
    );
  }

  /** One worker for one turn (see {@link ChildProcessTurns.adapter}). */
  async delegateTurn(job: TurnJob, turn: DelegatedTurn): Promise<MailTurnReport> {
    const { signal } = turn;
    await this.#forkSlot();
    if (this.#stopping() || signal.aborted) throw new TurnLostError('the bridge is stopping');
    // The launcher forks it detached: it leads its own process group, so a kill also ends its tools.
    const child = await this.#launcher.spawn(this.#options.worker);
    this.#workers.add(child);
    child.onceExit(() => this.#workers.delete(child));
    this.#emit({
      type: 'worker_spawned',
      mail_id: job.mail.mail_id,
      attempt: job.attempt,
      worker_pid: child.pid ?? 0,
    });
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      if (signal.reason !== 'shutdown') child.send({ type: 'abort', reason: 'turn timeout' });
      killTimer = setTimeout(() => child.kill(), this.#graceMs);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort(); // aborted while the launcher forked
    let report: WorkerReport;
    try {
      report = await workerReport(child, job, turn, this.#options.bridge);
    } finally {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
    }
    const { type: _type, maxRssKb, ...result } = report;
    return maxRssKb === undefined ? result : { ...result, logFields: { worker_max_rss_kb: maxRssKb } };
  }

  /** A one-shot task in a worker of its own (see {@link ChildProcessTurns.runTask}). */
  async runTask<R>(task: unknown, timeoutMs: number): Promise<ChildTaskOutcome<R>> {
    await this.#forkSlot();
    // A heartbeat that was under way when the shutdown began must not start a task nobody stops.
    if (this.#stopping()) return { started: false };
    const child = await this.#launcher.spawn(this.#options.worker);
    const result = await new Promise<R | undefined>((resolve) => {
      let answer: R | undefined;
      this.#workers.add(child);
      if (this.#stopping()) child.kill(); // the shutdown began while it was being forked
      const timer = setTimeout(() => child.kill(), timeoutMs);
      child.onMessage((m) => {
        if (m.type === 'ready') child.send({ type: 'task', task });
        else if (m.type === 'task_result') answer = m.result as R;
      });
      child.onceExit(() => {
        clearTimeout(timer);
        this.#workers.delete(child);
        resolve(answer);
      });
    });
    return { started: true, result };
  }

  /** B-15, P-7: workers deny pending questions and stop; stragglers are killed after the grace. */
  async stopWorkers(): Promise<void> {
    this.#stopped = true;
    this.#emit({ type: 'workers_stopping', workers: this.#workers.size });
    const exits = [...this.#workers].map(
      (child) => new Promise<void>((resolve) => child.onceExit(() => resolve())),
    );
    this.broadcast({ type: 'shutdown' });
    const grace = setTimeout(() => {
      for (const child of this.#workers) child.kill();
    }, this.#graceMs);
    await Promise.all(exits);
    clearTimeout(grace);
  }

  broadcast(message: RunnerMessage): void {
    for (const child of this.#workers) child.send(message);
  }

  close(): void {
    this.#stopped = true;
    this.#launcher.stop();
  }

  #emit(event: ChildTurnEvent | BridgeEvent | { type: string }): void {
    this.#options.bridge().emit(event);
  }

  #stopping(): boolean {
    return this.#stopped || this.#options.bridge().stopSignal.aborted;
  }

  /**
   * Resolves in an event-loop turn of its own, one caller per turn: three mails arriving in one SSE
   * chunk ask the launcher for their forks one after the other.
   */
  #forkSlot(): Promise<void> {
    const slot = this.#lastFork.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.#lastFork = slot;
    return slot;
  }
}

/**
 * The IPC of one turn's worker: the job once it is ready, its events to the bus, its relay through
 * the kit's commit gate (one outcome per mail), its reconnect. Resolves with its report at its
 * exit; rejects with {@link TurnLostError} when it exits before reporting (B-14).
 */
function workerReport(
  child: WorkerHandle,
  job: TurnJob,
  turn: DelegatedTurn,
  bridge: () => ChildTurnsBridge,
): Promise<WorkerReport> {
  /** Commits granted to the worker, waiting for its `commit_done`. */
  const committing = new Map<number, (ok: boolean) => void>();
  let report: WorkerReport | undefined;
  return new Promise<WorkerReport>((resolve, reject) => {
    child.onMessage((m: WorkerMessage) => {
      switch (m.type) {
        case 'ready':
          child.send({ type: 'job', job });
          break;
        case 'result':
          report = m;
          break;
        case 'event':
          bridge().emit(m.event);
          break;
        case 'commit_request': {
          let granted = false;
          void turn.gate.commit(() => {
            granted = true;
            child.send({ type: 'commit_answer', id: m.id, granted: true });
            return new Promise<boolean>((done) => committing.set(m.id, done));
          });
          if (!granted) child.send({ type: 'commit_answer', id: m.id, granted: false });
          break;
        }
        case 'commit_done':
          committing.get(m.id)?.(m.ok);
          committing.delete(m.id);
          break;
        case 'reconnect':
          bridge().reconnect(m.url, m.key);
          break;
        case 'task_result':
          break;
      }
    });
    child.onceExit(({ code, signal, error }) => {
      // A relay cut off by the worker's death may have reached the Gateway: it counts as sent.
      for (const done of committing.values()) done(false);
      if (report) resolve(report);
      else if (error) reject(new TurnLostError(`worker lost: ${error}`));
      else reject(new TurnLostError(`worker exited (code ${code}, signal ${signal}) before reporting`));
    });
  });
}
