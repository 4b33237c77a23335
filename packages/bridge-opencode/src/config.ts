/**
 * Configuration of the opencode bridge: the plugin's options (the second element of its
 * `plugin` entry in opencode.json) over the environment, in the one naming scheme of SPEC §8.
 */
import { homedir } from 'node:os';
import { type BridgeConfig, readBridgeConfig, withPluginOptions } from '@agentmail/bridge-kit';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';

function invalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

/** The bridge's configuration. */
export type OpencodeBridgeConfig = BridgeConfig;

/**
 * Read the configuration: plugin options first, then the environment. Options are the kit's
 * camelCase names (`BRIDGE_OPTION_VARIABLES`: strings or numbers); the data directory (`dataDir` /
 * `AGENTMAIL_OPENCODE_DATA_DIR`) defaults to `$XDG_DATA_HOME/agentmail/opencode` (or
 * `~/.local/share/agentmail/opencode`), the kit's rule for every bridge.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the option or variable and the fix.
 */
export function readOpencodeConfig(
  options: Readonly<Record<string, unknown>> | undefined,
  env: NodeJS.ProcessEnv,
): OpencodeBridgeConfig {
  try {
    return readBridgeConfig('opencode', withPluginOptions('opencode', options, env), homedir());
  } catch (err) {
    throw invalid(
      `${(err as Error).message} (plugin option or environment variable; see the bridge-opencode README)`,
    );
  }
}
