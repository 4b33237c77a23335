/**
 * Bundles the bridge's plugin entry (src/plugin.ts) with tsup for the real opencode binary:
 * `@agentmail/*` inlined from sources, `@opencode-ai/*` left as imports (resolved from this
 * package's node_modules, since the bundle lives under node_modules/.cache).
 */
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root directory of the bridge-opencode package. */
export const BRIDGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles `entry` (default src/plugin.ts) into a fresh directory; `remove()` deletes it. */
export async function buildPlugin(
  entry: string = join(BRIDGE_ROOT, 'src/plugin.ts'),
): Promise<{ pluginJs: string; remove: () => Promise<void> }> {
  const { build } = await import('tsup');
  const outDir = join(BRIDGE_ROOT, 'node_modules', '.cache', `bridge-opencode-${process.pid}-${Date.now()}`);
  await mkdir(outDir, { recursive: true });
  await build({
    entry: { plugin: entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node22',
    tsconfig: join(BRIDGE_ROOT, 'tsconfig.json'),
    dts: false,
    sourcemap: true,
    splitting: false,
    clean: true,
    silent: true,
    config: false,
    noExternal: [/^@agentmail\//],
    external: [/^@opencode-ai\//],
    esbuildOptions(options) {
      options.conditions = ['@agentmail/source'];
      options.mainFields = ['module', 'main'];
    },
  });
  return { pluginJs: join(outDir, 'plugin.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}
