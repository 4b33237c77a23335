/**
 * The AgentMail opencode plugin — the module opencode loads (`plugin` in opencode.json). opencode
 * calls every export of this module as a plugin (SPEC §7 opencode), so it exports ONLY the default
 * plugin module; all logic lives in the modules it imports.
 *
 * Every opencode instance (project directory) that loads the plugin calls `server`; the first one
 * creates the process-wide bridge and connects it to the Gateway, every one adds its hooks (mail
 * tools, permission seam, event feed).
 */
import type { PluginInput, PluginModule } from '@opencode-ai/plugin';
import { OpencodeBridge } from './bridge.js';
import { readOpencodeConfig } from './config.js';
import { BRIDGE_GLOBAL_KEY } from './constants.js';
import { createLogger } from './log.js';

type Global = typeof globalThis & { [BRIDGE_GLOBAL_KEY]?: OpencodeBridge };

function obtainBridge(input: PluginInput, options: Record<string, unknown> | undefined): OpencodeBridge {
  const g = globalThis as Global;
  const existing = g[BRIDGE_GLOBAL_KEY];
  if (existing) return existing;
  const log = createLogger(input.client);
  const bridge = new OpencodeBridge(readOpencodeConfig(options, process.env), input.client, log);
  g[BRIDGE_GLOBAL_KEY] = bridge;
  // opencode does not call the plugin's dispose on SIGTERM of `serve`: stop on the signal too
  // (B-15). When nobody else handles the signal, exit as its default action would have.
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      void bridge.stop().finally(() => {
        if (process.listenerCount(signal) === 0) process.exit(signal === 'SIGTERM' ? 143 : 130);
      });
    });
  void bridge.start();
  return bridge;
}

const plugin: PluginModule = {
  id: 'agentmail',
  server: async (input, options) => {
    const bridge = obtainBridge(input, options);
    return {
      ...bridge.hooks(input),
      dispose: async () => {
        await bridge.stop();
      },
    };
  },
};

export default plugin;
