/**
 * The pi bridge daemon (see SPEC §6): shared-policy's BridgeRuntime runs the connection loop
 * (register, heartbeat, SSE, de-duplication, catch-up, per-session queue, timeouts, redelivery);
 * this host adds what is pi's: the probe child, the catalogue cache, and ONE WORKER CHILD PROCESS
 * PER MAIL (B-12) so no model work ever runs on the event loop that reads SSE.
 */
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { HeartbeatRequest, PermissionDecisionEvent } from '@agentmail/protocol';
import {
  type BridgeHost,
  BridgeRuntime,
  type HeartbeatSnapshot,
  type MailRun,
  type MailTurnReport,
  TurnLostError,
} from '@agentmail/shared-policy/bridge';
import type { PiBridgeConfig } from './config.js';
import {
  BRIDGE_VERSION,
  FIRST_SSE_OPEN_WAIT_MS,
  PROBE_TIMEOUT_MS,
  WORKER_STOP_GRACE_MS,
} from './constants.js';
import type { DaemonMessage, ProbeJob, ProbeReport, TurnReport, WorkerJob, WorkerMessage } from './ipc.js';
import { type WorkerHandle, WorkerLauncher } from './launcher.js';
import type { Logger } from './log.js';
import { listPiSessions } from './session-files.js';

/**
 * The daemon: the pi side of the shared {@link BridgeRuntime} (register, heartbeat, SSE, catch-up,
 * queue, timeouts, redelivery: shared-policy). It adds the probe child (P-8, catalogue), the
 * catalogue cache, one worker process per mail (B-12) and its IPC. `start()` resolves after the
 * catch-up pass (B-20); `stop()` is the graceful shutdown (B-15, P-7).
 */
export class PiBridgeDaemon implements BridgeHost {
  readonly #log: Logger;
  #config: PiBridgeConfig;
  readonly #runtime: BridgeRuntime;
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

  constructor(config: PiBridgeConfig, log: Logger) {
    this.#config = config;
    this.#log = log;
    this.#runtime = new BridgeRuntime(
      {
        gatewayUrl: config.gatewayUrl,
        agentKey: config.agentKey,
        agentName: config.agentName,
        platform: 'pi',
        version: BRIDGE_VERSION,
        concurrency: config.concurrency,
        heartbeatMs: config.heartbeatMs,
        turnTimeoutMs: config.turnTimeoutMs,
        stopGraceMs: WORKER_STOP_GRACE_MS,
        firstSseOpenWaitMs: FIRST_SSE_OPEN_WAIT_MS,
        locale: config.locale,
        // SPEC G-22: one daemon per agent and data directory is the bridge; a second one waits.
        lockDir: config.dataDir,
      },
      this,
      log,
    );
    this.#launcher = new WorkerLauncher(
      config.launcherPath ?? join(dirname(config.workerPath), 'launcher-main.js'),
      () => ({ ...process.env, PI_CODING_AGENT_DIR: config.agentDir }),
      log,
    );
  }

  /** Probe (P-8, catalogue), then register, first heartbeat, SSE, catch-up (B-1, B-20). */
  async start(): Promise<void> {
    this.#launcher.start(); // its fork blocks this loop once, before the bridge registers
    await this.#catalogue(); // the probe: permission hook (P-8) and catalogue, before anything else
    await this.#runtime.start();
  }

  /** Graceful shutdown (B-15, P-7): the runtime stops reading and turns; {@link onShutdown} ends the workers. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    try {
      await this.#runtime.stop();
    } finally {
      this.#launcher.stop();
    }
  }

  /** BridgeHost: pi's session snapshot and model catalogue (G-25). */
  async heartbeat(): Promise<HeartbeatSnapshot> {
    const sessions = await listPiSessions(this.#config.agentDir);
    if (sessions === undefined) this.#log.warn('pi session folder unreadable: snapshot omitted (G-25)');
    const models = await this.#catalogue();
    return {
      mode_enforcement: this.#enforcement.mode,
      ...(this.#enforcement.reason ? { mode_enforcement_reason: this.#enforcement.reason } : {}),
      ...(sessions === undefined ? {} : { sessions }),
      ...(models === undefined ? {} : { models }),
    };
  }

  /** BridgeHost: decisions go to every worker; the one waiting for the relay key takes it. */
  onPermissionDecision(event: PermissionDecisionEvent): void {
    this.#broadcast({ type: 'permission_decision', event });
  }

  /** BridgeHost: later jobs and probes use the new Gateway (B-18). */
  onReconnect(url: string, key: string): void {
    this.#config = { ...this.#config, gatewayUrl: url, agentKey: key };
  }

  /** BridgeHost (B-15, P-7): workers deny pending questions and stop; stragglers are killed. */
  /** Called when the bridge lock was lost and the runtime stopped (SPEC G-22); daemon-main exits 1. */
  lockLostHandler: () => void = () => undefined;

  /** BridgeHost: the bridge lock was lost (this process was frozen past its staleness). */
  onLockLost(): void {
    this.lockLostHandler();
  }

  async onShutdown(): Promise<void> {
    this.#stopping = true;
    this.#log.info({ workers: this.#workers.size }, 'stopping workers');
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
    const job: ProbeJob = {
      type: 'probe',
      gatewayUrl: this.#config.gatewayUrl,
      agentKey: this.#config.agentKey,
      agentName: this.#config.agentName,
      dataDir: this.#config.dataDir,
      agentDir: this.#config.agentDir,
      locale: this.#config.locale,
    };
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
    if (this.#enforcement.mode === 'advisory')
      this.#log.error({ reason: this.#enforcement.reason }, 'mode enforcement advisory');
    else this.#log.info('permission hook verified: mode enforcement native');
    if (!report?.models)
      this.#log.warn(
        { err: report?.modelsError ?? 'no probe result' },
        'model catalogue unreadable: omitted from the heartbeat (G-25)',
      );
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
   * BridgeHost: one worker process for one mail (B-12). Resolves with its report; rejects with
   * {@link TurnLostError} when it exits before reporting (B-14). An aborted `run.signal` (timeout,
   * shutdown) asks the worker to stop and kills its process group after the grace period.
   */
  async runMail(run: MailRun): Promise<MailTurnReport> {
    const { mail, attempt } = run;
    await this.#forkSlot();
    if (this.#stopping || run.signal.aborted) throw new TurnLostError('the bridge is stopping');
    const job: WorkerJob = {
      type: 'job',
      mail,
      backlog: run.backlog,
      gatewayUrl: run.client.baseUrl,
      agentKey: run.client.key,
      agentName: this.#config.agentName,
      dataDir: this.#config.dataDir,
      agentDir: this.#config.agentDir,
      allowedModels: [...run.allowedModels],
      hostDefault: this.#config.hostDefault,
      attempt,
      locale: this.#config.locale,
      turnTimeoutMs: run.turnTimeoutMs,
    };
    const spawnedAt = Date.now();
    // The launcher forks it detached: it leads its own process group, so a kill also ends its tools.
    const child = await this.#launcher.spawn(this.#config.workerPath);
    this.#workers.add(child);
    this.#log.info({ mail_id: mail.mail_id, attempt, pid: child.pid }, 'worker spawned');
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      if (run.signal.reason !== 'shutdown') child.send({ type: 'abort', reason: 'turn timeout' });
      killTimer = setTimeout(() => child.kill(), WORKER_STOP_GRACE_MS);
    };
    run.signal.addEventListener('abort', onAbort, { once: true });
    if (run.signal.aborted) onAbort(); // aborted while the launcher forked
    let report: TurnReport | undefined;
    try {
      report = await new Promise<TurnReport>((resolve, reject) => {
        child.onMessage((m: WorkerMessage) => {
          switch (m.type) {
            case 'ready':
              child.send(job);
              break;
            case 'result':
              report = m;
              break;
            case 'reconnect':
              this.#runtime.reconnect(m.url, m.key);
              break;
            case 'log':
              this.#log[m.level](
                { ...m.fields, worker: child.pid, since_spawn_ms: Date.now() - spawnedAt },
                m.msg,
              );
              break;
          }
        });
        child.onceExit(({ code, signal, error }) => {
          this.#workers.delete(child);
          if (report) resolve(report);
          else if (error) reject(new TurnLostError(`worker lost: ${error}`));
          else reject(new TurnLostError(`worker exited (code ${code}, signal ${signal}) before reporting`));
        });
      });
    } finally {
      run.signal.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
    }
    const { type: _type, maxRssKb, ...turn } = report;
    return maxRssKb === undefined ? turn : { ...turn, logFields: { worker_max_rss_kb: maxRssKb } };
  }

  #broadcast(message: DaemonMessage): void {
    for (const child of this.#workers) child.send(message);
  }
}
