/**
 * The AgentMail opencode plugin — the module opencode loads (`plugin` in opencode.json). opencode
 * calls every export of this module as a plugin (SPEC §7 opencode), so it exports ONLY the default
 * plugin module; all logic lives in the modules it imports.
 *
 * Every opencode instance (project directory) that loads the plugin calls `server`; the first one
 * creates the process-wide bridge and connects it to the Gateway, every one adds its hooks (mail
 * tools, permission seam, event feed).
 */

import { dropCredentialVariables } from '@agentmail/bridge-kit';
import type { PluginInput, PluginModule } from '@opencode-ai/plugin';
import { OpencodeBridge } from './bridge.js';
import { readOpencodeConfig } from './config.js';
import { BRIDGE_GLOBAL_KEY } from './constants.js';
import { createLogger, feedOpencodeLog } from './log.js';

type Global = typeof globalThis & { [BRIDGE_GLOBAL_KEY]?: OpencodeBridge };

function obtainBridge(input: PluginInput, options: Record<string, unknown> | undefined): OpencodeBridge {
  const g = globalThis as Global;
  const existing = g[BRIDGE_GLOBAL_KEY];
  if (existing) return existing;
  const config = readOpencodeConfig(options, process.env);
  // opencode's shell tool spawns with opencode's environment: the key is read, now out of it (B-21).
  dropCredentialVariables(process.env);
  const opencodeBridge = new OpencodeBridge(config, input.client, createLogger());
  feedOpencodeLog(opencodeBridge.bridge.events, input.client, config.agentName);
  g[BRIDGE_GLOBAL_KEY] = opencodeBridge;
  // opencode does not call the plugin's dispose on SIGTERM of `serve`: stop on the signal too
  // (B-15), then raise it again. This listener is gone by then (`once`), so the signal gets what
  // it would have got without us: opencode's own handling, or the default action (exit). Other
  // libraries' listeners (e.g. signal-exit, which only acts when it is the last listener) see a
  // signal again too, instead of waiting for us to exit.
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      void opencodeBridge.stop().finally(() => {
        process.kill(process.pid, signal);
      });
    });
  void opencodeBridge.start();
  return opencodeBridge;
}

const plugin: PluginModule = {
  id: 'agentmail',
  server: async (input, options) => {
    const opencodeBridge = obtainBridge(input, options);
    return {
      ...opencodeBridge.hooks(input),
      dispose: async () => {
        await opencodeBridge.stop();
      },
    };
  },
};

export default plugin;
