/**
 * The pi bridge daemon (see SPEC §6): the kit (`createBridge`) runs the connection loop and the
 * turn logic; this host adds what is pi's: the probe child (P-8, catalogue), the catalogue cache,
 * and ONE WORKER CHILD PROCESS PER MAIL (B-12) — delegated turns: each worker runs the kit's
 * `runTurnJob` on the job the kit hands over, so no model work ever runs on the loop that reads SSE.
 */
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type Bridge,
  type BridgeLogger,
  createBridge,
  type DelegatedTurn,
  type HostSnapshot,
  type MailTurnReport,
  type TurnJob,
  TurnLostError,
  turnProcessEnv,
} from '@agentmail/bridge-kit';
import type { HeartbeatRequest } from '@agentmail/protocol';
import type { PiBridgeConfig } from './config.js';
import {
  BRIDGE_VERSION,
  FIRST_SSE_OPEN_WAIT_MS,
  PROBE_TIMEOUT_MS,
  WORKER_NICE,
  WORKER_NICE_ENV,
  WORKER_SETTINGS_ENV,
  WORKER_STOP_GRACE_MS,
} from './constants.js';
import type { PiEvent } from './events.js';
import type { DaemonMessage, ProbeJob, ProbeReport, TurnReport, WorkerJob, WorkerMessage } from './ipc.js';
import { type WorkerHandle, WorkerLauncher } from './launcher.js';
import { listPiSessions } from './session-files.js';

/**
 * The daemon: the pi adapter of the kit. `start()` registers first, then the first heartbeat
 * probes pi (P-8, catalogue), then SSE and catch-up (B-1, B-20); it resolves after the start
 * catch-up. `stop()` is the graceful shutdown (B-15, P-7).
 */
export class PiBridgeDaemon {
  readonly bridge: Bridge<PiEvent>;
  #config: PiBridgeConfig;
  readonly #workers = new Set<WorkerHandle>();
  /** Forks the workers, so no `fork()` blocks this event loop (B-12). */
  readonly #launcher: WorkerLauncher;
  #stopping = false;
  #enforcement: { mode: 'native' | 'advisory'; reason?: string } = {
    mode: 'advisory',
    reason: 'permission hook not verified yet',
  };
  /** The last probed catalogue and the stats of the files it came from. */
  #catalogueCache: { files: string; models: HeartbeatRequest['models'] } | undefined;
  /** Forks go one per event-loop turn (each blocks the loop 5–15 ms; see {@link #forkSlot}). */
  #lastFork: Promise<void> = Promise.resolve();
  /** Called when the bridge lock was lost and the kit stopped (SPEC G-22); daemon-main exits 1. */
  lockLostHandler: () => void = () => undefined;

  constructor(config: PiBridgeConfig, log?: BridgeLogger) {
    this.#config = config;
    this.bridge = createBridge<PiEvent>({
      platform: 'pi',
      version: BRIDGE_VERSION,
      config,
      ...(log ? { log } : {}),
      timing: { stopGraceMs: WORKER_STOP_GRACE_MS, firstSseOpenWaitMs: FIRST_SSE_OPEN_WAIT_MS },
      adapter: {
        snapshot: () => this.#snapshot(),
        delegateTurn: (job, turn) => this.#runTurn(job, turn),
        onDecision: (event) => this.#broadcast({ type: 'permission_decision', event: { ...event } }),
        onReconnect: (url, key) => {
          this.#config = { ...this.#config, gatewayUrl: url, agentKey: key };
        },
        stop: () => this.#stopWorkers(),
        onLockLost: () => this.lockLostHandler(),
      },
    });
    this.#launcher = new WorkerLauncher(
      config.launcherPath ?? join(dirname(config.workerPath), 'launcher-main.js'),
      // A worker's environment is its shell's (pi's bash tool): no key, no credential (B-21).
      () =>
        turnProcessEnv(process.env, {
          keep: WORKER_SETTINGS_ENV,
          extra: {
            PI_CODING_AGENT_DIR: config.agentDir,
            [WORKER_NICE_ENV]: String(config.workerNice ?? WORKER_NICE),
          },
        }),
      (e) => this.bridge.emit(e),
    );
  }

  /**
   * Register first (B-1): a wrong key or a name the key is not bound to is refused at once (a
   * throw, see daemon-main), and a Gateway that is not up yet is retried with backoff (the kit's
   * start, event `start_failed`) — before pi is ever loaded. The first heartbeat's snapshot then
   * probes pi (P-8 permission hook, catalogue; that first spawn forks the launcher), then SSE and
   * catch-up (B-20). Resolves at `ready`.
   */
  async start(): Promise<void> {
    await this.bridge.start();
  }

  /** Graceful shutdown (B-15, P-7): the kit stops reading and turns; the workers are ended. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    try {
      await this.bridge.stop();
    } finally {
      this.#launcher.stop();
    }
  }

  /** pi's session snapshot and model catalogue (G-25). */
  async #snapshot(): Promise<HostSnapshot> {
    const sessions = await listPiSessions(this.#config.agentDir);
    if (sessions === undefined)
      this.bridge.emit({ type: 'snapshot_partial', part: 'sessions', error: 'pi session folder unreadable' });
    const models = await this.#catalogue();
    return {
      mode_enforcement: this.#enforcement.mode,
      ...(this.#enforcement.reason ? { mode_enforcement_reason: this.#enforcement.reason } : {}),
      ...(sessions === undefined ? {} : { sessions }),
      ...(models === undefined ? {} : { models }),
    };
  }

  /** B-15, P-7: workers deny pending questions and stop; stragglers are killed. */
  async #stopWorkers(): Promise<void> {
    this.#stopping = true;
    this.bridge.emit({ type: 'workers_stopping', workers: this.#workers.size });
    const exits = [...this.#workers].map(
      (child) => new Promise<void>((resolve) => child.onceExit(() => resolve())),
    );
    this.#broadcast({ type: 'shutdown' });
    const grace = setTimeout(() => {
      for (const child of this.#workers) child.kill();
    }, WORKER_STOP_GRACE_MS);
    await Promise.all(exits);
    clearTimeout(grace);
  }

  /**
   * The model catalogue (G-25) from a probe child, probed again only when pi's `models.json` or
   * `auth.json` changed (a probe loads pi: about 2 s of CPU).
   */
  async #catalogue(): Promise<HeartbeatRequest['models']> {
    const files = async (): Promise<string> =>
      (
        await Promise.all(
          ['models.json', 'auth.json'].map((f) =>
            stat(join(this.#config.agentDir, f)).then(
              (s) => `${s.mtimeMs}:${s.size}`,
              () => '-',
            ),
          ),
        )
      ).join('|');
    if (this.#catalogueCache?.files === (await files())) return this.#catalogueCache.models;
    const models = await this.#probe();
    // Stat after the probe: pi may have created auth.json.
    this.#catalogueCache = { files: await files(), models };
    return models;
  }

  /**
   * Fork a probe child (worker-main with a `probe` job, src/probe.ts): it checks that the permission
   * hook registers (P-8) and reads pi's catalogue. pi is never loaded in this process (B-12).
   */
  async #probe(): Promise<HeartbeatRequest['models']> {
    await this.#forkSlot();
    // A heartbeat that was under way when the shutdown began must not start a probe nobody stops.
    if (this.#stopping) return this.#catalogueCache?.models;
    const job: ProbeJob = { type: 'probe', dataDir: this.#config.dataDir, agentDir: this.#config.agentDir };
    const child = await this.#launcher.spawn(this.#config.workerPath);
    const report = await new Promise<ProbeReport | undefined>((resolve) => {
      let result: ProbeReport | undefined;
      this.#workers.add(child);
      if (this.#stopping) child.kill(); // the shutdown began while it was being forked
      const timer = setTimeout(() => child.kill(), PROBE_TIMEOUT_MS);
      child.onMessage((m: WorkerMessage) => {
        if (m.type === 'ready') child.send(job);
        else if (m.type === 'probe_result') result = m;
      });
      child.onceExit(() => {
        clearTimeout(timer);
        this.#workers.delete(child);
        resolve(result);
      });
    });
    this.#enforcement = report?.enforcement ?? {
      mode: 'advisory',
      reason: 'permission hook check failed: the probe process gave no result',
    };
    this.bridge.emit({
      type: 'enforcement',
      mode: this.#enforcement.mode,
      ...(this.#enforcement.reason ? { reason: this.#enforcement.reason } : {}),
    });
    if (!report?.models)
      this.bridge.emit({
        type: 'snapshot_partial',
        part: 'models',
        error: report?.modelsError ?? 'no probe result',
      });
    this.bridge.emit({
      type: 'probe_done',
      enforcement: this.#enforcement.mode,
      models: report?.models?.length ?? 0,
      ...(report?.modelsError ? { error: report.modelsError } : {}),
    });
    return report?.models;
  }

  /**
   * Resolves in an event-loop turn of its own, one caller per turn: three mails arriving in one SSE
   * chunk ask the launcher for their forks one after the other (a `fork` blocks the launcher's loop
   * for 5–25 ms; the daemon's loop no longer forks, see launcher.ts).
   */
  #forkSlot(): Promise<void> {
    const slot = this.#lastFork.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.#lastFork = slot;
    return slot;
  }

  /**
   * One worker process for one mail (B-12). Resolves with its report; rejects with
   * {@link TurnLostError} when it exits before reporting (B-14). An aborted signal (timeout,
   * shutdown) asks the worker to stop and kills its process group after the grace period. The
   * worker's relay asks the kit's commit gate first (one outcome per mail).
   */
  async #runTurn(job: TurnJob, turn: DelegatedTurn): Promise<MailTurnReport> {
    const { signal, gate } = turn;
    await this.#forkSlot();
    if (this.#stopping || signal.aborted) throw new TurnLostError('the bridge is stopping');
    const work: WorkerJob = { type: 'job', job, agentDir: this.#config.agentDir };
    // The launcher forks it detached: it leads its own process group, so a kill also ends its tools.
    const child = await this.#launcher.spawn(this.#config.workerPath);
    this.#workers.add(child);
    this.bridge.emit({
      type: 'worker_spawned',
      mail_id: job.mail.mail_id,
      attempt: job.attempt,
      worker_pid: child.pid ?? 0,
    });
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      if (signal.reason !== 'shutdown') child.send({ type: 'abort', reason: 'turn timeout' });
      killTimer = setTimeout(() => child.kill(), WORKER_STOP_GRACE_MS);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort(); // aborted while the launcher forked
    /** Commits granted to the worker, waiting for its `commit_done`. */
    const committing = new Map<number, (ok: boolean) => void>();
    let report: TurnReport | undefined;
    try {
      report = await new Promise<TurnReport>((resolve, reject) => {
        child.onMessage((m: WorkerMessage) => {
          switch (m.type) {
            case 'ready':
              child.send(work);
              break;
            case 'result':
              report = m;
              break;
            case 'event':
              this.bridge.emit(m.event);
              break;
            case 'commit_request': {
              let granted = false;
              void gate.commit(() => {
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
              this.bridge.reconnect(m.url, m.key);
              break;
          }
        });
        child.onceExit(({ code, signal: sig, error }) => {
          this.#workers.delete(child);
          // A relay cut off by the worker's death may have reached the Gateway: it counts as sent.
          for (const done of committing.values()) done(false);
          if (report) resolve(report);
          else if (error) reject(new TurnLostError(`worker lost: ${error}`));
          else reject(new TurnLostError(`worker exited (code ${code}, signal ${sig}) before reporting`));
        });
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
    }
    const { type: _type, maxRssKb, ...result } = report;
    return maxRssKb === undefined ? result : { ...result, logFields: { worker_max_rss_kb: maxRssKb } };
  }

  #broadcast(message: DaemonMessage): void {
    for (const child of this.#workers) child.send(message);
  }
}
