/**
 * The configuration every bridge reads, in the one naming scheme of SPEC §8
 * (`AGENTMAIL_GATEWAY_URL`, `AGENTMAIL_AGENT_NAME`, `AGENTMAIL_AGENT_KEY` …). A bridge adds its
 * platform's own settings on top.
 */
import { Name } from '@agentmail/protocol';
import {
  AgentMailError,
  bridgeDataDir,
  dataDirVariable,
  ERROR_CODES,
  type SettingSource,
} from '@agentmail/shared-policy';
import { readAgentKey } from '@agentmail/shared-policy/client';

/** Heartbeat period when none is configured, in ms (see SPEC G-25). @default 30_000 */
export const BRIDGE_HEARTBEAT_MS_DEFAULT = 30_000;
/** Turn timeout when none is configured, in ms (see SPEC B-7: generous). @default 600_000 */
export const BRIDGE_TURN_TIMEOUT_MS_DEFAULT = 600_000;
/** Sessions that run turns at the same time when none is configured (see SPEC B-13). @default 4 */
export const BRIDGE_CONCURRENCY_DEFAULT = 4;

/** The settings shared by every bridge. */
export interface BridgeSettings {
  /** Gateway origin, `http(s)://host:port`. */
  gatewayUrl: string;
  /** The agent name the bridge registers (the part before `@` of its addresses). */
  agentName: string;
  /** The agent key (`agentmail agent key <name>`). */
  agentKey: string;
  /** `provider/model` used when the admin allowed no model (see SPEC B-8), or ''. */
  hostDefault: string;
  /** Sessions running turns at the same time (see SPEC B-13). */
  concurrency: number;
  /** Time one turn may take, in ms (see SPEC B-7). */
  turnTimeoutMs: number;
  /** Heartbeat period, in ms (see SPEC G-25). */
  heartbeatMs: number;
  /**
   * How long a question of a mail-driven turn waits for the person's answer, in ms (see SPEC
   * P-9): then the model is answered with a timeout error and the turn goes on. Set only when
   * `AGENTMAIL_QUESTION_TIMEOUT_MS` is given. @default half the turn timeout ({@link questionTimeoutOf})
   */
  questionTimeoutMs?: number;
  /**
   * How long the bridge lock of a bridge that died without letting go (SIGKILL, a crash) keeps a
   * new bridge of the agent waiting, in ms (see SPEC G-22): the holder refreshes it at half this.
   * Set only when `AGENTMAIL_BRIDGE_LOCK_STALE_MS` is given. @default BRIDGE_LOCK_STALE_MS (15 s)
   */
  lockStaleMs?: number;
  /** Locale of the texts (`en`, `zh-CN`). */
  locale: string;
  /**
   * The workspace sandbox (SPEC P-1, P-12; `AGENTMAIL_SANDBOX`): `workspace` runs the self-check at
   * start and, once verified, lets the host's confined tools run unasked in `workspace` mode; `off`
   * asks per call as always. @default 'off'
   */
  sandbox?: 'off' | 'workspace';
}

/** `AGENTMAIL_SANDBOX`, exactly `off` or `workspace` (P-2's rule: nothing else means either). */
function sandboxSetting(value: string): 'off' | 'workspace' {
  if (value === 'off' || value === 'workspace') return value;
  throw invalid(
    `AGENTMAIL_SANDBOX must be "workspace" (confine workspace-mode turns, SPEC P-12) or "off" (got "${value}")`,
  );
}

/**
 * The question wait of a bridge (see SPEC P-9): the configured one, else half the turn timeout,
 * so a person who never answers leaves the model time to finish with what it has.
 */
export function questionTimeoutOf(
  settings: Pick<BridgeSettings, 'turnTimeoutMs' | 'questionTimeoutMs'>,
): number {
  return settings.questionTimeoutMs ?? Math.max(1, Math.floor(settings.turnTimeoutMs / 2));
}

function invalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

/** A missing or empty Gateway URL: say it is not set and how to set it (not "got \"\""). */
function gatewayUrlNotSet(setting: string): string {
  return `${setting} is not set: set it to the Gateway's base URL, e.g. \`export AGENTMAIL_GATEWAY_URL=http://127.0.0.1:8787\``;
}

export type { SettingSource };

/** Shortest heartbeat period and turn timeout a bridge accepts, in ms: shorter ones flood or kill every turn. @default 1_000 */
export const BRIDGE_MIN_PERIOD_MS = 1_000;

/** The shortest bridge-lock stale time a setting may give, in ms (the holder refreshes at half). */
const BRIDGE_LOCK_MIN_STALE_MS = 2_000;

/** The longest time a setting may give, in ms (Node's timers hold 2^31 - 1 ms, about 24.8 days). */
const BRIDGE_MAX_MS = 2_147_483_647;

function positiveInt(source: SettingSource, name: string, fallback: number, min = 1): number {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  // Digits only: `5e3`, ` 5000` and `0x10` are typos here, not numbers. Every such setting is a
  // count or a time a timer takes, so it is capped where Node's timers would fire at once.
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > BRIDGE_MAX_MS)
    throw invalid(`${name} must be an integer >= ${min} and <= ${BRIDGE_MAX_MS} (got "${raw}")`);
  return n;
}

const LOCALES = new Set(['en', 'zh-CN']);

/**
 * Check a bridge's settings however they were made (read from the environment, or built by hand
 * in code): every problem names the setting and the fix.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID`.
 */
export function checkBridgeSettings(settings: BridgeSettings): void {
  if (settings.gatewayUrl.trim() === '')
    throw invalid(gatewayUrlNotSet('gatewayUrl (AGENTMAIL_GATEWAY_URL)'));
  if (!/^https?:\/\/[^/]/.test(settings.gatewayUrl))
    throw invalid(
      `gatewayUrl (AGENTMAIL_GATEWAY_URL) must be an http(s) URL such as http://127.0.0.1:8787 (got "${settings.gatewayUrl}")`,
    );
  if (/\/api\/v1\/?$/.test(settings.gatewayUrl))
    throw invalid(
      `gatewayUrl (AGENTMAIL_GATEWAY_URL) ends in /api/v1: give the Gateway's base URL, e.g. ${settings.gatewayUrl.replace(/\/api\/v1\/?$/, '')}`,
    );
  if (settings.agentKey.trim() === '') throw invalid('agentKey (AGENTMAIL_AGENT_KEY) is empty');
  if (!Name.safeParse(settings.agentName).success)
    throw invalid(
      `agentName (AGENTMAIL_AGENT_NAME) "${settings.agentName}" is not a valid name: letters, digits, "_", "-" and "." only, not starting with "-" or "."`,
    );
  const ints: Array<[string, number, number]> = [
    ['concurrency (AGENTMAIL_CONCURRENCY)', settings.concurrency, 1],
    // Code may choose short turn timeouts (tests); the environment's minimum is BRIDGE_MIN_PERIOD_MS.
    ['turnTimeoutMs (AGENTMAIL_TURN_TIMEOUT_MS)', settings.turnTimeoutMs, 1],
    ['heartbeatMs (AGENTMAIL_HEARTBEAT_MS)', settings.heartbeatMs, BRIDGE_MIN_PERIOD_MS],
  ];
  for (const [what, value, min] of ints)
    if (!Number.isInteger(value) || value < min || value > BRIDGE_MAX_MS)
      throw invalid(`${what} must be an integer >= ${min} and <= ${BRIDGE_MAX_MS} (got ${value})`);
  if (!LOCALES.has(settings.locale))
    throw invalid(
      `locale (AGENTMAIL_LOCALE) must be one of ${[...LOCALES].join(', ')} (got "${settings.locale}")`,
    );
}

/**
 * Read the shared bridge settings: `AGENTMAIL_GATEWAY_URL` (required, http(s)),
 * the agent key (required: `AGENTMAIL_AGENT_KEY`, `AGENTMAIL_AGENT_SECRET`, the file
 * `AGENTMAIL_AGENT_KEY_FILE` names or systemd's credential, see {@link readAgentKey}), `AGENTMAIL_AGENT_NAME`
 * (default `defaults.agentName`), `AGENTMAIL_REPLY_PROVIDER` + `AGENTMAIL_REPLY_MODEL` (both or
 * neither), `AGENTMAIL_CONCURRENCY` (4), `AGENTMAIL_TURN_TIMEOUT_MS` (600000),
 * `AGENTMAIL_HEARTBEAT_MS` (30000), `AGENTMAIL_LOCALE` (en), `AGENTMAIL_QUESTION_TIMEOUT_MS`
 * (optional: half the turn timeout when absent), `AGENTMAIL_BRIDGE_LOCK_STALE_MS` (optional, at
 * least 2000: 15 s when absent).
 * @param source Environment-style values, e.g. `process.env` merged with a plugin's options.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the setting and the fix.
 */
export function readBridgeSettings(source: SettingSource, defaults: { agentName: string }): BridgeSettings {
  const gatewayUrl = source.AGENTMAIL_GATEWAY_URL ?? '';
  if (gatewayUrl.trim() === '') throw invalid(gatewayUrlNotSet('AGENTMAIL_GATEWAY_URL'));
  if (!/^https?:\/\/[^/]/.test(gatewayUrl))
    throw invalid(
      `AGENTMAIL_GATEWAY_URL must be an http(s) URL such as http://127.0.0.1:8787 (got "${gatewayUrl}")`,
    );
  const agentName = source.AGENTMAIL_AGENT_NAME || defaults.agentName;
  const agentKey = readAgentKey(source) ?? '';
  if (!agentKey)
    throw invalid(`AGENTMAIL_AGENT_KEY is not set: create one with \`agentmail agent key ${agentName}\``);
  const provider = source.AGENTMAIL_REPLY_PROVIDER ?? '';
  const model = source.AGENTMAIL_REPLY_MODEL ?? '';
  if (Boolean(provider) !== Boolean(model))
    throw invalid('set both AGENTMAIL_REPLY_PROVIDER and AGENTMAIL_REPLY_MODEL, or neither');
  const settings: BridgeSettings = {
    gatewayUrl: gatewayUrl.replace(/\/+$/, ''),
    agentName,
    agentKey,
    hostDefault: provider ? `${provider}/${model}` : '',
    concurrency: positiveInt(source, 'AGENTMAIL_CONCURRENCY', BRIDGE_CONCURRENCY_DEFAULT),
    turnTimeoutMs: positiveInt(
      source,
      'AGENTMAIL_TURN_TIMEOUT_MS',
      BRIDGE_TURN_TIMEOUT_MS_DEFAULT,
      BRIDGE_MIN_PERIOD_MS,
    ),
    heartbeatMs: positiveInt(
      source,
      'AGENTMAIL_HEARTBEAT_MS',
      BRIDGE_HEARTBEAT_MS_DEFAULT,
      BRIDGE_MIN_PERIOD_MS,
    ),
    locale: source.AGENTMAIL_LOCALE || 'en',
    ...(source.AGENTMAIL_QUESTION_TIMEOUT_MS
      ? { questionTimeoutMs: positiveInt(source, 'AGENTMAIL_QUESTION_TIMEOUT_MS', 1) }
      : {}),
    ...(source.AGENTMAIL_BRIDGE_LOCK_STALE_MS
      ? { lockStaleMs: positiveInt(source, 'AGENTMAIL_BRIDGE_LOCK_STALE_MS', 1, BRIDGE_LOCK_MIN_STALE_MS) }
      : {}),
    ...(source.AGENTMAIL_SANDBOX ? { sandbox: sandboxSetting(source.AGENTMAIL_SANDBOX) } : {}),
  };
  checkBridgeSettings(settings);
  return settings;
}

/** A bridge's settings plus its data directory (see SPEC §8: a separate state directory per platform). */
export interface BridgeConfig extends BridgeSettings {
  /** Absolute data directory: bindings, grants, fallback workspaces, the bridge lock, the RPC socket. */
  dataDir: string;
}

/**
 * Read a bridge's whole configuration: {@link readBridgeSettings} (agent name defaults to the
 * platform) plus {@link bridgeDataDir}.
 * @param source environment-style values (`process.env`, merged with a plugin's options)
 * @param home the user's home directory (`os.homedir()`)
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the setting and the fix.
 */
export function readBridgeConfig(platform: string, source: SettingSource, home: string): BridgeConfig {
  return {
    ...readBridgeSettings(source, { agentName: platform }),
    dataDir: bridgeDataDir(platform, source, home),
  };
}

/**
 * Check a whole bridge configuration (settings and an absolute data directory), however it was
 * made.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the setting and the fix.
 */
export function checkBridgeConfig(config: BridgeConfig): void {
  checkBridgeSettings(config);
  if (!config.dataDir.startsWith('/'))
    throw invalid(
      `dataDir (AGENTMAIL_<PLATFORM>_DATA_DIR) must be an absolute path (got "${config.dataDir}")`,
    );
}

/**
 * Plugin option names (camelCase) and the `AGENTMAIL_*` variable each one overrides (SPEC §8),
 * for bridges that run as a plugin of their host and take settings from the host's plugin
 * configuration. `dataDir` maps to the platform's `AGENTMAIL_<PLATFORM>_DATA_DIR`.
 */
export const BRIDGE_OPTION_VARIABLES = Object.freeze({
  gatewayUrl: 'AGENTMAIL_GATEWAY_URL',
  agentName: 'AGENTMAIL_AGENT_NAME',
  agentKey: 'AGENTMAIL_AGENT_KEY',
  replyProvider: 'AGENTMAIL_REPLY_PROVIDER',
  replyModel: 'AGENTMAIL_REPLY_MODEL',
  concurrency: 'AGENTMAIL_CONCURRENCY',
  turnTimeoutMs: 'AGENTMAIL_TURN_TIMEOUT_MS',
  questionTimeoutMs: 'AGENTMAIL_QUESTION_TIMEOUT_MS',
  sandbox: 'AGENTMAIL_SANDBOX',
  heartbeatMs: 'AGENTMAIL_HEARTBEAT_MS',
  locale: 'AGENTMAIL_LOCALE',
} as const);

/** A bridge plugin option name: a key of {@link BRIDGE_OPTION_VARIABLES} or `dataDir`. */
export type BridgeOptionName = keyof typeof BRIDGE_OPTION_VARIABLES | 'dataDir';

/**
 * A plugin's options laid over the environment: each option (a string or a number; `undefined`
 * and `null` mean "not set") replaces the variable it names, so options win over the environment.
 * Read the result with {@link readBridgeConfig}.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` for an unknown option (listing the known
 *   ones) or a value that is neither a string nor a number.
 * @example readBridgeConfig('dsh', withPluginOptions('dsh', { agentKey: 'amk_…' }, process.env), homedir())
 */
export function withPluginOptions(
  platform: string,
  options: Readonly<Record<string, unknown>> | undefined,
  env: SettingSource,
): SettingSource {
  const variables: Record<string, string> = {
    ...BRIDGE_OPTION_VARIABLES,
    dataDir: dataDirVariable(platform),
  };
  const source: Record<string, string | undefined> = { ...env };
  for (const [name, value] of Object.entries(options ?? {})) {
    const variable = variables[name];
    if (variable === undefined)
      throw invalid(
        `unknown AgentMail plugin option "${name}": use one of ${Object.keys(variables).join(', ')}`,
      );
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number')
      throw invalid(`AgentMail plugin option "${name}" must be a string or a number`);
    source[variable] = String(value);
  }
  return source;
}
