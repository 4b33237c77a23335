/**
 * The daemon's configuration from the environment (SPEC §8): the settings every bridge shares
 * (`readBridgeConfig`, data directory `AGENTMAIL_CLAUDE_CODE_DATA_DIR`), plus where Claude Code
 * and the plugin are and which models the admin may choose from.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BridgeConfig, readBridgeConfig } from '@agentmail/bridge-kit';
import { absolutePathSetting, checkPluginDir, configInvalid } from '@agentmail/host-tools/driver';
import { pinnedClaudeBinary } from './claude-bin.js';
import { PLATFORM } from './constants.js';

/** Models offered to the admin when `AGENTMAIL_CLAUDE_MODELS` is not set: Claude Code's own aliases. */
export const DEFAULT_CLAUDE_MODELS: readonly string[] = ['sonnet', 'opus', 'haiku'];

/** The daemon's configuration. */
export interface ClaudeBridgeConfig extends BridgeConfig {
  /**
   * The `claude` executable (`AGENTMAIL_CLAUDE_BIN`).
   * @default the pinned Claude Code `pnpm install` put in this checkout ({@link pinnedClaudeBinary}), else `claude` on PATH
   */
  claudeBin: string;
  /** The AgentMail plugin directory given to every run with `--plugin-dir` (`AGENTMAIL_CLAUDE_PLUGIN_DIR`). */
  pluginDir: string;
  /** Claude Code's home: transcripts under `<home>/.claude/projects` (`HOME`). */
  claudeHome: string;
  /** The provider part of the catalogue keys (`AGENTMAIL_CLAUDE_PROVIDER`). @default 'anthropic' */
  modelProvider: string;
  /** Model names offered to the admin (`AGENTMAIL_CLAUDE_MODELS`, comma separated). */
  models: readonly string[];
  /** Node.js for the plugin's tool and hook processes (`AGENTMAIL_NODE`). @default this process's node */
  nodeBin: string;
}

/**
 * The plugin directory shipped with this package: `plugin/` next to `src/` (sources) or `dist/`
 * (built), whichever holds `.claude-plugin/plugin.json`.
 */
export function defaultPluginDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'plugin');
}

/**
 * Read the configuration: the shared `AGENTMAIL_*` settings (agent name defaults to
 * `claude-code`) and `AGENTMAIL_CLAUDE_BIN`, `AGENTMAIL_CLAUDE_PLUGIN_DIR`,
 * `AGENTMAIL_CLAUDE_PROVIDER`, `AGENTMAIL_CLAUDE_MODELS`, `AGENTMAIL_NODE`.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the variable and the fix.
 */
export function readClaudeConfig(env: NodeJS.ProcessEnv, home: string): ClaudeBridgeConfig {
  const base = readBridgeConfig(PLATFORM, env, home);
  const pluginDir = absolutePathSetting(env, 'AGENTMAIL_CLAUDE_PLUGIN_DIR') ?? defaultPluginDir();
  checkPluginDir(pluginDir, {
    variable: 'AGENTMAIL_CLAUDE_PLUGIN_DIR',
    manifest: join('.claude-plugin', 'plugin.json'),
    sourceDir: 'packages/bridge-claude/plugin',
    packageName: '@agentmail/bridge-claude',
  });
  const provider = env.AGENTMAIL_CLAUDE_PROVIDER?.trim() || 'anthropic';
  if (provider.includes('/'))
    throw configInvalid(`AGENTMAIL_CLAUDE_PROVIDER must not contain "/" (got "${provider}")`);
  const models = (env.AGENTMAIL_CLAUDE_MODELS ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  // A day is the hooks' own timeout (plugin/hooks/hooks.json): a longer turn would be cut by it.
  if (base.turnTimeoutMs > 86_400_000)
    throw configInvalid(
      `AGENTMAIL_TURN_TIMEOUT_MS must be at most 86400000 (a day) for Claude Code (got ${base.turnTimeoutMs})`,
    );
  return {
    ...base,
    claudeBin: absolutePathSetting(env, 'AGENTMAIL_CLAUDE_BIN') ?? pinnedClaudeBinary() ?? 'claude',
    pluginDir,
    claudeHome: home,
    modelProvider: provider,
    models: models.length > 0 ? models : DEFAULT_CLAUDE_MODELS,
    nodeBin: absolutePathSetting(env, 'AGENTMAIL_NODE') ?? process.execPath,
  };
}
