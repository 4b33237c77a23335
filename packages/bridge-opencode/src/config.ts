/**
 * Configuration of the opencode bridge: the plugin's options (the second element of its
 * `plugin` entry in opencode.json) over the environment, in the one naming scheme of SPEC §8.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import { type BridgeSettings, readBridgeSettings, type SettingSource } from '@agentmail/shared-policy/bridge';

/** Plugin option → the environment variable it overrides. */
export const OPTION_VARIABLES = Object.freeze({
  gatewayUrl: 'AGENTMAIL_GATEWAY_URL',
  agentName: 'AGENTMAIL_AGENT_NAME',
  agentKey: 'AGENTMAIL_AGENT_KEY',
  replyProvider: 'AGENTMAIL_REPLY_PROVIDER',
  replyModel: 'AGENTMAIL_REPLY_MODEL',
  concurrency: 'AGENTMAIL_CONCURRENCY',
  turnTimeoutMs: 'AGENTMAIL_TURN_TIMEOUT_MS',
  heartbeatMs: 'AGENTMAIL_HEARTBEAT_MS',
  locale: 'AGENTMAIL_LOCALE',
  dataDir: 'AGENTMAIL_OPENCODE_DATA_DIR',
} as const);

function invalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

/** The bridge's configuration. */
export interface OpencodeBridgeConfig extends BridgeSettings {
  /** Absolute data directory: session bindings, grants, fallback workspaces, send records. */
  dataDir: string;
}

/**
 * Read the configuration: plugin options first, then the environment. Options are the camelCase
 * names of {@link OPTION_VARIABLES} (strings or numbers); `AGENTMAIL_OPENCODE_DATA_DIR` /
 * `dataDir` defaults to `$XDG_DATA_HOME/agentmail/opencode` (or `~/.local/share/agentmail/opencode`).
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the option or variable and the fix.
 */
export function readOpencodeConfig(
  options: Readonly<Record<string, unknown>> | undefined,
  env: NodeJS.ProcessEnv,
): OpencodeBridgeConfig {
  const source: Record<string, string | undefined> = { ...env };
  for (const [name, value] of Object.entries(options ?? {})) {
    const variable = (OPTION_VARIABLES as Record<string, string>)[name];
    if (variable === undefined)
      throw invalid(
        `unknown AgentMail plugin option "${name}": use one of ${Object.keys(OPTION_VARIABLES).join(', ')}`,
      );
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number')
      throw invalid(`AgentMail plugin option "${name}" must be a string or a number`);
    source[variable] = String(value);
  }
  let settings: BridgeSettings;
  try {
    settings = readBridgeSettings(source as SettingSource, { agentName: 'opencode' });
  } catch (err) {
    throw invalid(
      `${(err as Error).message} (plugin option or environment variable; see the bridge-opencode README)`,
    );
  }
  const rawDir = source.AGENTMAIL_OPENCODE_DATA_DIR;
  if (rawDir && !isAbsolute(rawDir))
    throw invalid(`AGENTMAIL_OPENCODE_DATA_DIR / dataDir must be an absolute path (got "${rawDir}")`);
  const xdg =
    env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME)
      ? env.XDG_DATA_HOME
      : join(homedir(), '.local', 'share');
  return { ...settings, dataDir: rawDir ? resolve(rawDir) : join(xdg, 'agentmail', 'opencode') };
}
