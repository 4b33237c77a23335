/**
 * The bridge as the tests run it: the daemon and a plugin copy (host-tools' `buildDriver`, the
 * package build's own options), and the ZCode stand-in of the testkit bundled into one executable
 * file next to them. Built once per source version (shared by every test file).
 */
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type BuiltDriver,
  buildDriver,
  builtDriverAt,
  nodeBundleOptions,
} from '@agentmail/host-tools/bundle';
import { cachedBuild } from '@agentmail/testkit';
import { ZCODE_STANDIN_ENTRY } from '@agentmail/testkit/zcode';
import { BRIDGE_ROOT, DAEMON_ENTRIES, DAEMON_EXTERNAL, HOOK_ENTRY } from '../tsup.config.js';

/** A built bridge and stand-in. */
export interface BuiltBridge extends BuiltDriver {
  /** The stand-in `zcode` executable (a Node.js script with a shebang). */
  zcodeBin: string;
}

/**
 * The daemon, a plugin copy and the stand-in, built once per source version and shared by every
 * test file (testkit's `cachedBuild`); `remove()` leaves them in place.
 */
export async function buildBridge(): Promise<BuiltBridge> {
  const root = await cachedBuild({ packageRoot: BRIDGE_ROOT, name: 'bridge-zcode-driver', build: buildInto });
  return { ...builtDriverAt(root), zcodeBin: join(root, 'zcode', 'zcode.js'), remove: async () => {} };
}

/** Builds the driver and the stand-in into `root`. */
async function buildInto(root: string): Promise<void> {
  await buildDriver({
    packageRoot: BRIDGE_ROOT,
    name: 'bridge-zcode',
    daemonEntries: DAEMON_ENTRIES,
    hookEntry: HOOK_ENTRY,
    external: DAEMON_EXTERNAL,
    root,
  });
  const { build } = await import('tsup');
  const dir = join(root, 'zcode');
  await build({
    ...nodeBundleOptions({ zcode: ZCODE_STANDIN_ENTRY }, dir, { external: ['better-sqlite3'] }),
    config: false,
  });
  await chmod(join(dir, 'zcode.js'), 0o755);
}
