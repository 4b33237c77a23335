/**
 * The pi bridge daemon (see SPEC §6): shared-policy's BridgeRuntime runs the connection loop
 * (register, heartbeat, SSE, de-duplication, catch-up, per-session queue, timeouts, redelivery);
 * this host adds what is pi's: the probe child, the catalogue cache, and ONE WORKER CHILD PROCESS
 * PER MAIL (B-12) so no model work ever runs on the event loop that reads SSE.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { HeartbeatRequest, PermissionDecisionEvent } from '@agentmail/protocol';
import {
  type BridgeHost,
  BridgeRuntime,
  type HeartbeatSnapshot,
  type MailRun,
  type MailTurnReport,
  TurnLostError,
} from '@agentmail/shared-policy';
import type { PiBridgeConfig } from './config.js';
import {
  BRIDGE_VERSION,
  FIRST_SSE_OPEN_WAIT_MS,
  PROBE_TIMEOUT_MS,
  WORKER_STOP_GRACE_MS,
} from './constants.js';
import type { DaemonMessage, ProbeJob, ProbeReport, TurnReport, WorkerJob, WorkerMessage } from './ipc.js';
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
  readonly #workers = new Set<ChildProcess>();
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
  }

  /** Probe (P-8, catalogue), then register, first heartbeat, SSE, catch-up (B-1, B-20). */
  async start(): Promise<void> {
    await this.#catalogue(); // the probe: permission hook (P-8) and catalogue, before anything else
    await this.#runtime.start();
  }

  /** Graceful shutdown (B-15, P-7): the runtime stops reading and turns; {@link onShutdown} ends the workers. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    await this.#runtime.stop();
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
      (child) =>
        new Promise<void>((resolve) =>
          child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
        ),
    );
    this.#broadcast({ type: 'shutdown' });
    const grace = setTimeout(() => {
      for (const child of this.#workers) this.#kill(child);
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
    const job: ProbeJob = {
      type: 'probe',
      gatewayUrl: this.#config.gatewayUrl,
      agentKey: this.#config.agentKey,
      agentName: this.#config.agentName,
      dataDir: this.#config.dataDir,
      agentDir: this.#config.agentDir,
      locale: this.#config.locale,
    };
    const report = await new Promise<ProbeReport | undefined>((resolve) => {
      let result: ProbeReport | undefined;
      const child = fork(this.#config.workerPath, [], {
        detached: true,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        env: { ...process.env, PI_CODING_AGENT_DIR: this.#config.agentDir },
      });
      this.#workers.add(child);
      const timer = setTimeout(() => this.#kill(child), PROBE_TIMEOUT_MS);
      child.on('message', (m: WorkerMessage) => {
        if (m.type === 'ready') this.#send(child, job);
        else if (m.type === 'probe_result') result = m;
      });
      const done = (): void => {
        clearTimeout(timer);
        this.#workers.delete(child);
        resolve(result);
      };
      child.once('error', done);
      child.once('exit', done);
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
   * Resolves in an event-loop turn of its own, one caller per turn: a `fork` blocks the loop for
   * 5–15 ms (more with pi loaded), so three mails arriving in one SSE chunk must not fork in one turn.
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
    // detached: the worker leads its own process group, so a kill also ends its tool processes.
    const child = fork(this.#config.workerPath, [], {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, PI_CODING_AGENT_DIR: this.#config.agentDir },
    });
    this.#workers.add(child);
    this.#log.info({ mail_id: mail.mail_id, attempt, pid: child.pid }, 'worker spawned');
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      if (run.signal.reason !== 'shutdown') this.#send(child, { type: 'abort', reason: 'turn timeout' });
      killTimer = setTimeout(() => this.#kill(child), WORKER_STOP_GRACE_MS);
    };
    run.signal.addEventListener('abort', onAbort, { once: true });
    let report: TurnReport | undefined;
    try {
      report = await new Promise<TurnReport>((resolve, reject) => {
        child.on('message', (m: WorkerMessage) => {
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
        child.once('error', (err) => reject(new TurnLostError(`worker could not run: ${err.message}`)));
        child.once('exit', (code, signal) => {
          this.#workers.delete(child);
          if (report) resolve(report);
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

  #send(child: ChildProcess, message: DaemonMessage): void {
    if (child.connected)
      child.send(message, (err) => err && this.#log.warn({ err: err.message }, 'ipc send failed'));
  }

  #broadcast(message: DaemonMessage): void {
    for (const child of this.#workers) this.#send(child, message);
  }

  #kill(child: ChildProcess): void {
    if (child.pid === undefined || child.exitCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
}
