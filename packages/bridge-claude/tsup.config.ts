/**
 * `pnpm build`: the daemon (`dist/daemon-main.js`, `dist/index.js` + types) and the plugin's
 * scripts (`plugin/dist/mcp.js`, `plugin/dist/hook.js`), each a self-contained file
 * (`@agentmail/host-tools/bundle`), so the plugin directory works wherever it is copied.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { HOST_TOOL_ENTRIES, nodeBundleOptions } from '../host-tools/src/bundle.js';

/** Root directory of the bridge-claude package. */
export const BRIDGE_ROOT = dirname(fileURLToPath(import.meta.url));

/** The plugin's `hook.js`: this host's hook main (host-tools runner with this host's profile). */
export const HOOK_ENTRY = join(BRIDGE_ROOT, 'src', 'hook-main.ts');

/** The daemon's entry files. */
export const DAEMON_ENTRIES: Readonly<Record<string, string>> = {
  'daemon-main': join(BRIDGE_ROOT, 'src', 'daemon-main.ts'),
};

export default defineConfig([
  nodeBundleOptions(DAEMON_ENTRIES, join(BRIDGE_ROOT, 'dist')),
  {
    // No declarations: a daemon and a plugin, nothing compiles against them (and tsup's declaration
    // step is nearly all of a build's time here).
    ...nodeBundleOptions({ index: join(BRIDGE_ROOT, 'src', 'index.ts') }, join(BRIDGE_ROOT, 'dist')),
    tsconfig: join(BRIDGE_ROOT, 'tsconfig.build.json'),
  },
  nodeBundleOptions({ ...HOST_TOOL_ENTRIES, hook: HOOK_ENTRY }, join(BRIDGE_ROOT, 'plugin', 'dist')),
]);
