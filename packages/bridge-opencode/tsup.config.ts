/**
 * The one build of the opencode plugin: `src/plugin.ts` bundled into a single ESM file
 * `plugin.js` with every `@agentmail/*` package inlined from its TypeScript sources (the
 * `@agentmail/source` condition) and only this package's own registry dependencies
 * (`@opencode-ai/*`, `pino`) left as imports, so the file resolves them from this package's
 * node_modules wherever it is loaded by path. Used by `pnpm build` (this file is tsup's default
 * config: `dist/plugin.js`) and by the test harness (`harness/build.ts`, into
 * node_modules/.cache).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { nodeBundle, ownDependencies } from '../../tooling/node-bundle.js';

/** Root directory of the bridge-opencode package. */
export const BRIDGE_ROOT = dirname(fileURLToPath(import.meta.url));

/** Where `pnpm build` writes the distributable plugin (`plugin.js`). */
export const DIST_DIR = join(BRIDGE_ROOT, 'dist');

/**
 * tsup options that bundle `entry` (default `src/plugin.ts`) into `<outDir>/plugin.js`; this
 * package's registry dependencies (subpaths included) are the only imports left in the bundle
 * (Bun, which runs opencode, has a `require`; the shim is for Node.js).
 */
export function pluginBuildOptions(
  outDir: string,
  { entry = join(BRIDGE_ROOT, 'src', 'plugin.ts') }: { entry?: string } = {},
): Options {
  return nodeBundle({
    entries: { plugin: entry },
    outDir,
    tsconfig: join(BRIDGE_ROOT, 'tsconfig.build.json'),
    sourcemap: true,
    clean: true,
    keep: ownDependencies(BRIDGE_ROOT),
  });
}

// No declarations: opencode loads the plugin's JavaScript; nothing compiles against it.
export default defineConfig(pluginBuildOptions(DIST_DIR));
