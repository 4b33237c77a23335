/**
 * The bridge as the tests run it (host-tools' `buildDriver`): the plugin directory copied into a
 * directory under this package's node_modules/.cache with its scripts bundled into it, and the
 * daemon bundled next to it. Built once per source version and shared by every test file
 * (testkit's `cachedBuild`); `remove()` leaves it in place.
 */
import { type BuiltDriver, buildDriver, builtDriverAt } from '@agentmail/host-tools/bundle';
import { cachedBuild } from '@agentmail/testkit';
import { BRIDGE_ROOT, DAEMON_ENTRIES, HOOK_ENTRY } from '../tsup.config.js';

/** A built bridge. */
export type BuiltBridge = BuiltDriver;

/** The daemon and a plugin copy, built once per source version. */
export async function buildBridge(): Promise<BuiltBridge> {
  const root = await cachedBuild({
    packageRoot: BRIDGE_ROOT,
    name: 'bridge-claude-driver',
    build: async (dir) => {
      await buildDriver({
        packageRoot: BRIDGE_ROOT,
        name: 'bridge-claude',
        daemonEntries: DAEMON_ENTRIES,
        hookEntry: HOOK_ENTRY,
        root: dir,
      });
    },
  });
  return { ...builtDriverAt(root), remove: async () => {} };
}
