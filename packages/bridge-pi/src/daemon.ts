/**
 * The pi bridge daemon (see SPEC §6): the kit (`createBridge`) runs the connection loop and the
 * turn logic; this host adds what is pi's: the probe child (P-8, catalogue), the catalogue cache,
 * and ONE WORKER CHILD PROCESS PER MAIL (B-12) — delegated turns on the kit's child-process runner
 * (`childProcessTurns`): each worker runs the kit's `runTurnJob` on the job the kit hands over, so
 * no model work ever runs on the loop that reads SSE.
 */
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type Bridge,
  type BridgeLogger,
  type ChildProcessTurns,
  childProcessTurns,
  createBridge,
  type HostSnapshot,
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
import { PLATFORM } from './host.js';
import type { ProbeReport, ProbeTask } from './probe.js';
import { PI_SANDBOX_CONFINES, piSandboxPolicy } from './sandbox.js';
import { listPiSessions } from './session-files.js';

/**
 * The daemon: the pi adapter of the kit. `start()` registers first, then the first heartbeat
 * probes pi (P-8, catalogue), then SSE and catch-up (B-1, B-20); it resolves after the start
 * catch-up. `stop()` is the graceful shutdown (B-15, P-7).
 */
export class PiBridgeDaemon {
  readonly bridge: Bridge<PiEvent>;
  #config: PiBridgeConfig;
  /** The kit's child-process runner: one worker per mail, forked by its launcher child (B-12). */
  readonly #children: ChildProcessTurns;
  #enforcement: { mode: 'native' | 'advisory'; reason?: string } = {
    mode: 'advisory',
    reason: 'permission hook not verified yet',
  };
  /** The last probed catalogue and the stats of the files it came from. */
  #catalogueCache: { files: string; models: HeartbeatRequest['models'] } | undefined;
  /** Called when the bridge lock was lost and the kit stopped (SPEC G-22); daemon-main exits 1. */
  lockLostHandler: () => void = () => undefined;

  constructor(config: PiBridgeConfig, log?: BridgeLogger) {
    this.#config = config;
    this.#children = childProcessTurns({
      worker: { path: config.workerPath },
      launcherPath: config.launcherPath ?? join(dirname(config.workerPath), 'launcher-main.js'),
      // A worker's environment is its shell's (pi's bash tool): no key, no credential (B-21).
      env: () =>
        turnProcessEnv(process.env, {
          keep: WORKER_SETTINGS_ENV,
          extra: {
            PI_CODING_AGENT_DIR: config.agentDir,
            [WORKER_NICE_ENV]: String(config.workerNice ?? WORKER_NICE),
          },
        }),
      bridge: () => this.bridge,
      stopGraceMs: WORKER_STOP_GRACE_MS,
    });
    this.bridge = createBridge<PiEvent>({
      platform: PLATFORM,
      version: BRIDGE_VERSION,
      config,
      ...(log ? { log } : {}),
      timing: { stopGraceMs: WORKER_STOP_GRACE_MS, firstSseOpenWaitMs: FIRST_SSE_OPEN_WAIT_MS },
      adapter: {
        snapshot: () => this.#snapshot(),
        ...this.#children.adapter,
        onReconnect: (url, key) => {
          this.#config = { ...this.#config, gatewayUrl: url, agentKey: key };
        },
        onLockLost: () => this.lockLostHandler(),
        // P-12: pi's bash, write and edit can run in the workspace sandbox (src/sandbox.ts).
        sandbox: {
          policy: (workspace) => piSandboxPolicy(workspace, this.#config.agentDir),
          confines: PI_SANDBOX_CONFINES,
        },
      },
    });
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
    try {
      await this.bridge.stop();
    } finally {
      this.#children.close();
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
   * Run the probe in a worker of its own (the kit runner's task, src/probe.ts): it checks that the
   * permission hook registers (P-8) and reads pi's catalogue. pi is never loaded in this process (B-12).
   */
  async #probe(): Promise<HeartbeatRequest['models']> {
    const task: ProbeTask = { dataDir: this.#config.dataDir, agentDir: this.#config.agentDir };
    const outcome = await this.#children.runTask<ProbeReport>(task, { timeoutMs: PROBE_TIMEOUT_MS });
    // A heartbeat that was under way when the shutdown began started no probe.
    if (!outcome.started) return this.#catalogueCache?.models;
    const report = outcome.result;
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
}
