/**
 * The bridge of a headless-CLI driver (Claude Code, ZCode): the kit's `createBridge` with the turn
 * RPC on (the plugin's tool and hook processes reach the running turn through it, SPEC B-21), a
 * setup gate over the start's check (P-8: repeated before a turn while it fails), the
 * heartbeat's `mode_enforcement` from that gate with the host's sessions and models (G-25, G-26),
 * and, once it holds the lock, the end of host runs a crashed predecessor left (B-15). Turns pass
 * `runDir: hostRunsDir(config.dataDir)` to `runHostCli` so their runs can be found.
 */

import {
  type Bridge,
  type BridgeConfig,
  type BridgeLogger,
  createBridge,
  type EmitEvent,
  type HostSandbox,
  readSnapshotParts,
  type SnapshotReaders,
  type TurnAdapter,
} from '@agentmail/bridge-kit';
import type { Platform } from '@agentmail/shared-policy';
import { hostRunsDir, sweepHostRuns } from './host-cli.js';
import {
  type DriverEvent,
  driverEventLevel,
  enforcementEvent,
  enforcementOf,
  reportingSetupGate,
  type SetupCheckResult,
} from './setup-gate.js';

/** Options of {@link createDriverBridge}; `H` is the driver's own event union (with {@link DriverEvent}). */
export interface DriverBridgeOptions<H extends { type: string }> {
  platform: Platform;
  /** Bridge version for register and heartbeat, e.g. `agentmail-zcode/0.1.0`. */
  version: string;
  config: BridgeConfig;
  log?: BridgeLogger;
  /** The start's setup check (run before the bridge starts). */
  enforcement: SetupCheckResult;
  /** The check again (before a turn while it fails); `signal` aborts on the bridge's stop. Never throws. */
  recheck: (signal: AbortSignal | undefined) => Promise<SetupCheckResult>;
  /** The turn adapter; its host events go to `emit`; `setup` must be consulted before every attempt. */
  turns: (emit: EmitEvent<H>, setup: () => Promise<SetupCheckResult>) => TurnAdapter;
  /** The heartbeat's sessions and models (a reader that throws omits its part: `snapshot_partial`). */
  snapshot: SnapshotReaders;
  /** How the host's turns can be sandboxed, or why not (SPEC P-12). @default the kit's "not wrapped" */
  sandbox?: HostSandbox;
}

/**
 * The driver's bridge (not started); emits `enforcement` for the start's check at once.
 * @example
 * const bridge = createDriverBridge<ZcodeEvent>({ platform: 'zcode', version, config, enforcement,
 *   recheck: (signal) => selfCheck(config, signal), turns: (emit, setup) => zcodeTurns(config, emit, setup),
 *   snapshot: { models: async () => readZcodeModels(home) } });
 */
export function createDriverBridge<H extends DriverEvent | { type: string }>(
  options: DriverBridgeOptions<H>,
): Bridge<H | DriverEvent> {
  let bridge: Bridge<H | DriverEvent> | undefined;
  const gate = reportingSetupGate({
    initial: options.enforcement,
    recheck: () => options.recheck(bridge?.stopSignal),
    emit: (e) => bridge?.emit(e),
  });
  bridge = createBridge<H | DriverEvent>({
    platform: options.platform,
    version: options.version,
    config: options.config,
    rpc: true,
    ...(options.log ? { log: options.log } : {}),
    hostEventLevel: driverEventLevel,
    adapter: {
      turns: options.turns(
        (e) => bridge?.emit(e),
        () => gate.ensure(),
      ),
      // B-15: a crashed predecessor's runs are ended before this process runs a turn (only the
      // lock holder: a standby must not end the active bridge's runs).
      onLead: () => {
        for (const run of sweepHostRuns(hostRunsDir(options.config.dataDir)))
          bridge?.emit({ type: 'leftover_run', ...run });
      },
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      async snapshot() {
        // G-25: a part that cannot be read is omitted, not sent empty.
        const parts = await readSnapshotParts(options.snapshot, (e) => bridge?.emit(e));
        return { ...enforcementOf(gate.current), ...parts };
      },
    },
  });
  bridge.emit(enforcementEvent(options.enforcement));
  return bridge;
}
