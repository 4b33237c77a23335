/**
 * The bridge as the tests run it: the daemon and a plugin copy (host-tools' `buildDriver`, the
 * package build's own options), and the ZCode stand-in of the testkit bundled into one executable
 * file next to them. Built once per test file (and shared by its tests).
 */
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { type BuiltDriver, buildDriver, nodeBundleOptions } from '@agentmail/host-tools/bundle';
import { ZCODE_STANDIN_ENTRY } from '@agentmail/testkit/zcode';
import { BRIDGE_ROOT, DAEMON_ENTRIES, DAEMON_EXTERNAL } from '../tsup.config.js';

/** A built bridge and stand-in. */
export interface BuiltBridge extends BuiltDriver {
  /** The stand-in `zcode` executable (a Node.js script with a shebang). */
  zcodeBin: string;
}

/** Build the daemon, a plugin copy and the stand-in into a fresh directory. */
export async function buildBridge(): Promise<BuiltBridge> {
  const built = await buildDriver({
    packageRoot: BRIDGE_ROOT,
    name: 'bridge-zcode',
    daemonEntries: DAEMON_ENTRIES,
    external: DAEMON_EXTERNAL,
  });
  const { build } = await import('tsup');
  const dir = join(built.root, 'zcode');
  await build({
    ...nodeBundleOptions({ zcode: ZCODE_STANDIN_ENTRY }, dir, { external: ['better-sqlite3'] }),
    config: false,
  });
  const zcodeBin = join(dir, 'zcode.js');
  await chmod(zcodeBin, 0o755);
  return { ...built, zcodeBin };
}
