/**
 * The bridge as the tests run it: the plugin directory copied into a fresh directory under this
 * package's node_modules/.cache with its scripts bundled into it (the package build's own options,
 * tsup.config.ts), and the daemon bundled next to it. Built once per test file.
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HOST_TOOL_ENTRIES, nodeBundleOptions } from '@agentmail/host-tools/bundle';
import { BRIDGE_ROOT, DAEMON_ENTRIES } from '../tsup.config.js';

/** A built bridge. */
export interface BuiltBridge {
  /** The daemon entry (`node <daemonJs>`). */
  daemonJs: string;
  /** The plugin directory with `dist/mcp.js` and `dist/hook.js`. */
  pluginDir: string;
  remove(): Promise<void>;
}

/** Build the daemon and a plugin copy into a fresh directory. */
export async function buildBridge(): Promise<BuiltBridge> {
  const { build } = await import('tsup');
  const root = join(BRIDGE_ROOT, 'node_modules', '.cache', `bridge-claude-${process.pid}-${Date.now()}`);
  const pluginDir = join(root, 'plugin');
  await mkdir(root, { recursive: true });
  await cp(join(BRIDGE_ROOT, 'plugin'), pluginDir, {
    recursive: true,
    filter: (src) => !src.endsWith('/dist'),
  });
  await Promise.all([
    build({ ...nodeBundleOptions(DAEMON_ENTRIES, join(root, 'daemon')), config: false }),
    build({ ...nodeBundleOptions(HOST_TOOL_ENTRIES, join(pluginDir, 'dist')), config: false }),
  ]);
  return {
    daemonJs: join(root, 'daemon', 'daemon-main.js'),
    pluginDir,
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
