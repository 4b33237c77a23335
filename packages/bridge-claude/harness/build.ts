/**
 * The bridge as the tests run it (host-tools' `buildDriver`): the plugin directory copied into a
 * fresh directory under this package's node_modules/.cache with its scripts bundled into it, and
 * the daemon bundled next to it. Built once per test file.
 */
import { type BuiltDriver, buildDriver } from '@agentmail/host-tools/bundle';
import { BRIDGE_ROOT, DAEMON_ENTRIES } from '../tsup.config.js';

/** A built bridge. */
export type BuiltBridge = BuiltDriver;

/** Build the daemon and a plugin copy into a fresh directory. */
export function buildBridge(): Promise<BuiltBridge> {
  return buildDriver({ packageRoot: BRIDGE_ROOT, name: 'bridge-claude', daemonEntries: DAEMON_ENTRIES });
}
