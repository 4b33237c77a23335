/**
 * The daemon's configuration from the environment (SPEC §8): the settings every bridge shares
 * (`readBridgeConfig`, data directory `AGENTMAIL_ZCODE_DATA_DIR`), plus where ZCode and the plugin
 * are, and how a `workspace` mail is run.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BridgeConfig, readBridgeConfig } from '@agentmail/bridge-kit';
import { absolutePathSetting, checkPluginDir, configInvalid } from '@agentmail/host-tools/driver';
import { PLATFORM } from './constants.js';

/** ZCode's mode for a `workspace` mail: `build` + the PreToolUse gate, or the `plan` fallback. */
export type WorkspaceMode = 'build' | 'plan';

/** The daemon's configuration. */
export interface ZcodeBridgeConfig extends BridgeConfig {
  /** The `zcode` executable (`AGENTMAIL_ZCODE_BIN`). @default `zcode` on PATH */
  zcodeBin: string;
  /** The AgentMail plugin directory ZCode must load from `plugins.dirs` (`AGENTMAIL_ZCODE_PLUGIN_DIR`). */
  pluginDir: string;
  /** ZCode's home: `~/.zcode/cli/config.json` and the session database (`HOME`). */
  zcodeHome: string;
  /**
   * ZCode's mode for a `workspace` mail (`AGENTMAIL_ZCODE_WORKSPACE_MODE`): `build` (default; the
   * plugin's PreToolUse hook asks the person) or `plan` (fallback for a ZCode whose PreToolUse gate
   * does not hold: guarded built-ins are refused, nobody is asked).
   */
  workspaceMode: WorkspaceMode;
  /** Node.js for the plugin's tool and hook processes, first on their PATH (`AGENTMAIL_NODE`). @default this process's node */
  nodeBin: string;
}

/**
 * The plugin directory shipped with this package: `plugin/` next to `src/` (sources) or `dist/`
 * (built).
 */
export function defaultPluginDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'plugin');
}

/** How long ZCode lets the plugin's hooks run (plugin/hooks/hooks.json `timeoutMs`: a day), in ms. */
export const HOOK_TIMEOUT_MS = 86_400_000;

/**
 * Read the configuration: the shared `AGENTMAIL_*` settings (agent name defaults to `zcode`) and
 * `AGENTMAIL_ZCODE_BIN`, `AGENTMAIL_ZCODE_PLUGIN_DIR`, `AGENTMAIL_ZCODE_WORKSPACE_MODE`,
 * `AGENTMAIL_NODE`.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the variable and the fix.
 */
export function readZcodeConfig(env: NodeJS.ProcessEnv, home: string): ZcodeBridgeConfig {
  const base = readBridgeConfig(PLATFORM, env, home);
  const pluginDir = absolutePathSetting(env, 'AGENTMAIL_ZCODE_PLUGIN_DIR') ?? defaultPluginDir();
  checkPluginDir(pluginDir, {
    variable: 'AGENTMAIL_ZCODE_PLUGIN_DIR',
    manifest: join('.zcode-plugin', 'plugin.json'),
    sourceDir: 'packages/bridge-zcode/plugin',
    packageName: '@agentmail/bridge-zcode',
  });
  const workspaceMode = env.AGENTMAIL_ZCODE_WORKSPACE_MODE?.trim() || 'build';
  if (workspaceMode !== 'build' && workspaceMode !== 'plan')
    throw configInvalid(
      `AGENTMAIL_ZCODE_WORKSPACE_MODE must be "build" (the PreToolUse gate) or "plan" (the fallback), got "${workspaceMode}"`,
    );
  if (base.turnTimeoutMs > HOOK_TIMEOUT_MS)
    throw configInvalid(
      `AGENTMAIL_TURN_TIMEOUT_MS must be at most ${HOOK_TIMEOUT_MS} (a day, the plugin hooks' timeout) for ZCode (got ${base.turnTimeoutMs})`,
    );
  return {
    ...base,
    zcodeBin: absolutePathSetting(env, 'AGENTMAIL_ZCODE_BIN') ?? 'zcode',
    pluginDir,
    zcodeHome: home,
    workspaceMode,
    nodeBin: absolutePathSetting(env, 'AGENTMAIL_NODE') ?? process.execPath,
  };
}
