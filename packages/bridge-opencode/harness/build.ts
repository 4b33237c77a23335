/**
 * Bundles the bridge's plugin entry for the real opencode binary with the package's own build
 * (`tsup.config.ts`: `@agentmail/*` inlined from sources, the package's registry dependencies left
 * as imports), into a fresh directory under node_modules/.cache so the imports resolve from this
 * package's node_modules, as they do for `dist/plugin.js`.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BRIDGE_ROOT, pluginBuildOptions } from '../tsup.config.js';

export { BRIDGE_ROOT };

/** Bundles `entry` (default src/plugin.ts) into a fresh directory; `remove()` deletes it. */
export async function buildPlugin(
  entry: string = join(BRIDGE_ROOT, 'src/plugin.ts'),
): Promise<{ pluginJs: string; remove: () => Promise<void> }> {
  const { build } = await import('tsup');
  const outDir = join(BRIDGE_ROOT, 'node_modules', '.cache', `bridge-opencode-${process.pid}-${Date.now()}`);
  await mkdir(outDir, { recursive: true });
  await build({ ...pluginBuildOptions(outDir, { entry }), config: false });
  return { pluginJs: join(outDir, 'plugin.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}
