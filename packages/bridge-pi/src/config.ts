/**
 * Daemon configuration from the environment (see SPEC §8): one naming scheme for every bridge.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { HEARTBEAT_INTERVAL_MS_DEFAULT } from './constants.js';

/** Code of a configuration error (listed in docs/errors.md). */
export const CONFIG_ERROR_CODE = 'AM_PI_CONFIG_INVALID';

/** A missing or malformed environment variable; `code` is {@link CONFIG_ERROR_CODE}. */
export class PiConfigError extends Error {
  readonly code = CONFIG_ERROR_CODE;
  constructor(message: string) {
    super(message);
    this.name = 'PiConfigError';
  }
}

/** The daemon's configuration. */
export interface PiBridgeConfig {
  gatewayUrl: string;
  agentName: string;
  agentKey: string;
  /** `provider/model` from AGENTMAIL_REPLY_PROVIDER + AGENTMAIL_REPLY_MODEL, or ''. */
  hostDefault: string;
  /** Absolute bridge data directory. */
  dataDir: string;
  /** Absolute pi agent directory. */
  agentDir: string;
  concurrency: number;
  turnTimeoutMs: number;
  heartbeatMs: number;
  locale: string;
  /** Absolute path of the worker entry (a `.js` file forked per mail). */
  workerPath: string;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new PiConfigError(`${name} must be an integer >= 1 (got "${raw}")`);
  return n;
}

function absDir(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (!raw) return fallback;
  if (!isAbsolute(raw)) throw new PiConfigError(`${name} must be an absolute path (got "${raw}")`);
  return resolve(raw);
}

/**
 * Read the configuration:
 * `AGENTMAIL_GATEWAY_URL` (required), `AGENTMAIL_AGENT_KEY` or `AGENTMAIL_AGENT_SECRET` (required),
 * `AGENTMAIL_AGENT_NAME` (default `pi`), `AGENTMAIL_REPLY_PROVIDER` + `AGENTMAIL_REPLY_MODEL`
 * (the model used when the admin allowed none), `AGENTMAIL_PI_DATA_DIR`
 * (default `~/.local/share/agentmail/pi`), `AGENTMAIL_PI_AGENT_DIR` or `PI_CODING_AGENT_DIR`
 * (default `~/.pi/agent`), `AGENTMAIL_PI_CONCURRENCY` (4), `AGENTMAIL_TURN_TIMEOUT_MS` (600000),
 * `AGENTMAIL_HEARTBEAT_MS` (30000), `AGENTMAIL_LOCALE` (en), `AGENTMAIL_PI_WORKER` (worker entry).
 * @throws PiConfigError `AM_PI_CONFIG_INVALID` naming the variable and the fix.
 */
export function readConfig(env: NodeJS.ProcessEnv, defaultWorkerPath: string): PiBridgeConfig {
  const gatewayUrl = env.AGENTMAIL_GATEWAY_URL ?? '';
  if (!/^https?:\/\//.test(gatewayUrl))
    throw new PiConfigError(`AGENTMAIL_GATEWAY_URL must be an http(s) URL (got "${gatewayUrl}")`);
  const agentKey = env.AGENTMAIL_AGENT_KEY || env.AGENTMAIL_AGENT_SECRET || '';
  if (!agentKey)
    throw new PiConfigError('AGENTMAIL_AGENT_KEY is not set: create one with `agentmail agent key <name>`');
  const provider = env.AGENTMAIL_REPLY_PROVIDER ?? '';
  const model = env.AGENTMAIL_REPLY_MODEL ?? '';
  if (Boolean(provider) !== Boolean(model))
    throw new PiConfigError('set both AGENTMAIL_REPLY_PROVIDER and AGENTMAIL_REPLY_MODEL, or neither');
  return {
    gatewayUrl,
    agentName: env.AGENTMAIL_AGENT_NAME || 'pi',
    agentKey,
    hostDefault: provider ? `${provider}/${model}` : '',
    dataDir: absDir(env, 'AGENTMAIL_PI_DATA_DIR', join(homedir(), '.local', 'share', 'agentmail', 'pi')),
    agentDir: absDir(
      env,
      'AGENTMAIL_PI_AGENT_DIR',
      absDir(env, 'PI_CODING_AGENT_DIR', join(homedir(), '.pi', 'agent')),
    ),
    concurrency: positiveInt(env, 'AGENTMAIL_PI_CONCURRENCY', 4),
    turnTimeoutMs: positiveInt(env, 'AGENTMAIL_TURN_TIMEOUT_MS', 600_000),
    heartbeatMs: positiveInt(env, 'AGENTMAIL_HEARTBEAT_MS', HEARTBEAT_INTERVAL_MS_DEFAULT),
    locale: env.AGENTMAIL_LOCALE ?? 'en',
    workerPath: env.AGENTMAIL_PI_WORKER ? resolve(env.AGENTMAIL_PI_WORKER) : defaultWorkerPath,
  };
}
