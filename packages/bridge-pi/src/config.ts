/**
 * Daemon configuration from the environment (see SPEC §8): the settings every bridge shares come
 * from shared-policy `readBridgeSettings`; pi adds its directories and the worker entry.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { type BridgeConfig, readBridgeConfig } from '@agentmail/bridge-kit';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import { WORKER_NICE, WORKER_NICE_ENV } from './constants.js';

/** The daemon's configuration. */
export interface PiBridgeConfig extends BridgeConfig {
  /** Absolute pi agent directory. */
  agentDir: string;
  /** Absolute path of the worker entry (a `.js` file forked per mail). */
  workerPath: string;
  /**
   * Absolute path of the launcher entry (src/launcher-main.ts, forked once; it forks the workers).
   * @default `launcher-main.js` next to {@link workerPath}
   */
  launcherPath?: string;
  /** Nice value of the worker processes and their autogroup, 0–19 (`AGENTMAIL_PI_WORKER_NICE`). @default WORKER_NICE (10) */
  workerNice?: number;
}

function workerNice(env: NodeJS.ProcessEnv): number {
  const raw = env[WORKER_NICE_ENV];
  if (raw === undefined || raw === '') return WORKER_NICE;
  if (!/^\d{1,2}$/.test(raw.trim()) || Number(raw) > 19)
    throw new AgentMailError(
      ERROR_CODES.BRIDGE_CONFIG_INVALID,
      `${WORKER_NICE_ENV} must be a whole number from 0 (workers compete like any process) to 19 (they yield the most) (got ${JSON.stringify(raw)}); unset it for the default ${WORKER_NICE}`,
    );
  return Number(raw);
}

function absDir(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (!raw) return fallback;
  if (!isAbsolute(raw))
    throw new AgentMailError(
      ERROR_CODES.BRIDGE_CONFIG_INVALID,
      `${name} must be an absolute path (got "${raw}")`,
    );
  return resolve(raw);
}

/**
 * Read the configuration: the shared bridge settings (`AGENTMAIL_GATEWAY_URL`,
 * `AGENTMAIL_AGENT_KEY`/`SECRET`, `AGENTMAIL_AGENT_NAME` (default `pi`),
 * `AGENTMAIL_REPLY_PROVIDER` + `AGENTMAIL_REPLY_MODEL`, `AGENTMAIL_CONCURRENCY` (4),
 * `AGENTMAIL_TURN_TIMEOUT_MS` (600000), `AGENTMAIL_HEARTBEAT_MS` (30000), `AGENTMAIL_LOCALE`),
 * plus `AGENTMAIL_PI_DATA_DIR` (default `$XDG_DATA_HOME/agentmail/pi`, else
 * `~/.local/share/agentmail/pi`: the kit's rule for every bridge), `AGENTMAIL_PI_AGENT_DIR` or
 * `PI_CODING_AGENT_DIR` (default `~/.pi/agent`), `AGENTMAIL_PI_WORKER` (worker entry; the launcher
 * entry `launcher-main.js` is taken from the same directory), `AGENTMAIL_PI_WORKER_NICE` (0–19,
 * default 10: workers yield the CPU to the daemon, B-12).
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the variable and the fix.
 */
export function readConfig(env: NodeJS.ProcessEnv, defaultWorkerPath: string): PiBridgeConfig {
  return {
    ...readBridgeConfig('pi', env, homedir()),
    agentDir: absDir(
      env,
      'AGENTMAIL_PI_AGENT_DIR',
      absDir(env, 'PI_CODING_AGENT_DIR', join(homedir(), '.pi', 'agent')),
    ),
    workerPath: env.AGENTMAIL_PI_WORKER ? resolve(env.AGENTMAIL_PI_WORKER) : defaultWorkerPath,
    workerNice: workerNice(env),
  };
}
