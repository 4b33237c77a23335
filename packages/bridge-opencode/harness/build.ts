/**
 * Bundles the bridge's plugin entry for the real opencode binary with the package's own build
 * (`tsup.config.ts`: `@agentmail/*` inlined from sources, the package's registry dependencies left
 * as imports), under node_modules/.cache so the imports resolve from this package's node_modules,
 * as they do for `dist/plugin.js`; made once per source version and entry, shared by every test
 * file (testkit's `cachedBuild`).
 */
import { join } from 'node:path';
import { cachedBuild } from '@agentmail/testkit';
import { BRIDGE_ROOT, pluginBuildOptions } from '../tsup.config.js';

export { BRIDGE_ROOT };

/** Bundles `entry` (default src/plugin.ts); `remove()` leaves the shared build in place. */
export async function buildPlugin(
  entry: string = join(BRIDGE_ROOT, 'src/plugin.ts'),
): Promise<{ pluginJs: string; remove: () => Promise<void> }> {
  const outDir = await cachedBuild({
    packageRoot: BRIDGE_ROOT,
    name: 'bridge-opencode-plugin',
    key: entry,
    build: async (dir) => {
      const { build } = await import('tsup');
      await build({ ...pluginBuildOptions(dir, { entry }), config: false });
    },
  });
  return { pluginJs: join(outDir, 'plugin.js'), remove: async () => {} };
}
