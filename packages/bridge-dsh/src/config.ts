/**
 * Configuration of the DSH bridge: the plugin row's `config` (validated by DSH's loader with the
 * schemastery {@link Config}) over the environment, in the one naming scheme of SPEC §8 (the kit's
 * {@link withPluginOptions}), plus the one DSH-specific setting, `agentPreset`.
 */
import { homedir } from 'node:os';
import { type BridgeConfig, readBridgeConfig, withPluginOptions } from '@agentmail/bridge-kit';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import Schema from '@deepseek-ai/schemastery';

/** A setting given as a string or a number (YAML writes both). */
const scalar = () => Schema.union([Schema.string(), Schema.number()]);

/**
 * The plugin row's `config` (all optional; each falls back to its `AGENTMAIL_*` variable). DSH's
 * loader rejects a row whose config does not fit, naming the field.
 */
export const Config = Schema.object({
  gatewayUrl: Schema.string().description('Gateway base URL (AGENTMAIL_GATEWAY_URL)'),
  agentKey: Schema.string().description('agent key (AGENTMAIL_AGENT_KEY); prefer the environment'),
  agentName: Schema.string().description('agent name (AGENTMAIL_AGENT_NAME), default dsh'),
  replyProvider: Schema.string().description('host-default provider route (AGENTMAIL_REPLY_PROVIDER)'),
  replyModel: Schema.string().description('host-default model (AGENTMAIL_REPLY_MODEL)'),
  concurrency: scalar().description('sessions running turns at once (AGENTMAIL_CONCURRENCY)'),
  turnTimeoutMs: scalar().description('time one turn may take, ms (AGENTMAIL_TURN_TIMEOUT_MS)'),
  questionTimeoutMs: scalar().description(
    'time a question waits for its answer, ms (AGENTMAIL_QUESTION_TIMEOUT_MS)',
  ),
  heartbeatMs: scalar().description('heartbeat period, ms (AGENTMAIL_HEARTBEAT_MS)'),
  locale: Schema.string().description('en or zh-CN (AGENTMAIL_LOCALE)'),
  dataDir: Schema.string().description('bridge data directory (AGENTMAIL_DSH_DATA_DIR)'),
  agentPreset: Schema.string().description(
    'agent preset of mail sessions where dsh has a preset roster (web): default the roster default',
  ),
});

/** The plugin row's `config` as DSH hands it to `apply`. */
export type DshPluginOptions = Partial<Record<string, string | number | undefined>>;

/** The bridge's configuration: the kit's plus the agent preset. */
export interface DshBridgeConfig extends BridgeConfig {
  /** Preset id for mail sessions (profiles with a preset roster, e.g. `web`); undefined = the roster's default. */
  agentPreset?: string;
}

function invalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

/**
 * Read the configuration: the plugin row's options first, then the environment
 * (`AGENTMAIL_AGENT_PRESET` for `agentPreset`). The data directory defaults to
 * `$XDG_DATA_HOME/agentmail/dsh` (or `~/.local/share/agentmail/dsh`), the kit's rule.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the option or variable and the fix.
 */
export function readDshConfig(
  options: DshPluginOptions | undefined,
  env: NodeJS.ProcessEnv,
): DshBridgeConfig {
  const { agentPreset, ...kitOptions } = options ?? {};
  const preset = agentPreset ?? env.AGENTMAIL_AGENT_PRESET;
  if (preset !== undefined && (typeof preset !== 'string' || preset.trim() === ''))
    throw invalid('AgentMail plugin option "agentPreset" must be a preset id such as "standard"');
  try {
    const config = readBridgeConfig('dsh', withPluginOptions('dsh', kitOptions, env), homedir());
    return preset === undefined ? config : { ...config, agentPreset: preset.trim() };
  } catch (err) {
    throw invalid(
      `${(err as Error).message} (the agentmail row's config in the dsh profile, or the environment of dsh; see the bridge-dsh README)`,
    );
  }
}
