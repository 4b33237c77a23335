/**
 * Configuration of the opencode bridge: the plugin's options (the second element of its
 * `plugin` entry in opencode.json) over the environment, in the one naming scheme of SPEC §8.
 */
import { homedir } from 'node:os';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import { type BridgeConfig, readBridgeConfig, type SettingSource } from '@agentmail/shared-policy/bridge';

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
export type OpencodeBridgeConfig = BridgeConfig;

/**
 * Read the configuration: plugin options first, then the environment. Options are the camelCase
 * names of {@link OPTION_VARIABLES} (strings or numbers); the data directory (`dataDir` /
 * `AGENTMAIL_OPENCODE_DATA_DIR`) defaults to `$XDG_DATA_HOME/agentmail/opencode` (or
 * `~/.local/share/agentmail/opencode`), the kit's rule for every bridge.
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
  try {
    return readBridgeConfig('opencode', source as SettingSource, homedir());
  } catch (err) {
    throw invalid(
      `${(err as Error).message} (plugin option or environment variable; see the bridge-opencode README)`,
    );
  }
}
