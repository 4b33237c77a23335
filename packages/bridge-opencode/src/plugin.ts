/**
 * The AgentMail opencode plugin — the module opencode loads (`plugin` in opencode.json). opencode
 * calls every export of this module as a plugin (SPEC §7 opencode), so it exports ONLY the default
 * plugin module; all logic lives in the modules it imports.
 *
 * Every opencode instance (project directory) that loads the plugin calls `server`; the first one
 * sets up the process-wide bridge (the kit's `runPluginBridge`) and connects it to the Gateway,
 * every one adds its hooks (mail tools, permission seam, event feed).
 */

import { type PluginBridge, runPluginBridge } from '@agentmail/bridge-kit';
import type { PluginInput, PluginModule } from '@opencode-ai/plugin';
import { OpencodeBridge } from './bridge.js';
import { type OpencodeBridgeConfig, readOpencodeConfig } from './config.js';
import { BRIDGE_GLOBAL_KEY } from './constants.js';
import { createLogger, opencodeHostLog } from './log.js';

type Global = typeof globalThis & {
  [BRIDGE_GLOBAL_KEY]?: PluginBridge<OpencodeBridgeConfig, OpencodeBridge>;
};

function obtainBridge(
  input: PluginInput,
  options: Record<string, unknown> | undefined,
): PluginBridge<OpencodeBridgeConfig, OpencodeBridge> {
  const g = globalThis as Global;
  const existing = g[BRIDGE_GLOBAL_KEY];
  if (existing) return existing;
  const plugin = runPluginBridge({
    readConfig: () => readOpencodeConfig(options, process.env),
    log: createLogger(),
    create: (config, log) => new OpencodeBridge(config, input.client, log),
    hostLog: (config) => opencodeHostLog(input.client, config.agentName),
    // opencode does not call the plugin's dispose on SIGTERM of `serve`: the bridge stops on the
    // signal too (B-15), which is then raised again.
    signals: 'reraise',
  });
  g[BRIDGE_GLOBAL_KEY] = plugin;
  void plugin.start();
  return plugin;
}

const plugin: PluginModule = {
  id: 'agentmail',
  server: async (input, options) => {
    const bridge = obtainBridge(input, options);
    return {
      ...bridge.host.hooks(input),
      dispose: () => bridge.stop(),
    };
  },
};

export default plugin;
