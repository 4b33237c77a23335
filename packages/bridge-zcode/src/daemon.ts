/**
 * The `agentmail-zcode` bridge: the kit's `createBridge` with the turn RPC on (the plugin's tool
 * and hook processes reach the running turn through it, SPEC B-21), the ZCode turn adapter, and
 * the heartbeat facts: ZCode's sessions from its session database (G-25, G-37), the models of its
 * configuration (G-26), and `mode_enforcement` from the setup check (P-8).
 */

import type { Bridge, BridgeLogger } from '@agentmail/bridge-kit';
import { createDriverBridge, type SetupCheckResult } from '@agentmail/host-tools/driver';
import { HEARTBEAT_MAX_SESSIONS } from '@agentmail/protocol';
import type { ZcodeBridgeConfig } from './config.js';
import { BRIDGE_VERSION, PLATFORM } from './constants.js';
import type { ZcodeEvent } from './events.js';
import { SANDBOX_UNSUPPORTED } from './host.js';
import { selfCheck } from './self-check.js';
import { zcodeTurns } from './turns.js';
import { readZcodeModels, readZcodeSessions } from './zcode-home.js';

/** The bridge's event bus type. */
export type ZcodeBridge = Bridge<ZcodeEvent>;

/** Options of {@link createZcodeBridge}. */
export interface ZcodeBridgeOptions {
  log?: BridgeLogger;
  /** The setup check's outcome (P-8); run {@link selfCheck} before {@link Bridge.start}. */
  enforcement: SetupCheckResult;
}

/**
 * The bridge over `config` (not started).
 * @example
 * const check = await selfCheck(config);
 * const bridge = createZcodeBridge(config, { log, enforcement: check });
 * await bridge.start();
 */
export function createZcodeBridge(config: ZcodeBridgeConfig, options: ZcodeBridgeOptions): ZcodeBridge {
  // A failed check is repeated before the next turn: a plugin added to plugins.dirs meanwhile
  // makes the bridge native again; while it still fails, turns fail before any run.
  return createDriverBridge<ZcodeEvent>({
    platform: PLATFORM,
    version: BRIDGE_VERSION,
    config,
    ...(options.log ? { log: options.log } : {}),
    enforcement: options.enforcement,
    recheck: (signal) => selfCheck(config, signal),
    turns: (emit, setup) => zcodeTurns(config, emit, setup),
    sandbox: { unsupported: SANDBOX_UNSUPPORTED },
    snapshot: {
      sessions: async () => readZcodeSessions(config.zcodeHome, HEARTBEAT_MAX_SESSIONS),
      models: async () => readZcodeModels(config.zcodeHome),
    },
  });
}

export { selfCheck };
