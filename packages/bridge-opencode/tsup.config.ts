/**
 * The one build of the opencode plugin: `src/plugin.ts` bundled into a single ESM file
 * `plugin.js` with every `@agentmail/*` package inlined from its TypeScript sources (the
 * `@agentmail/source` condition) and only this package's own registry dependencies
 * (`@opencode-ai/*`, `pino`) left as imports, so the file resolves them from this package's
 * node_modules wherever it is loaded by path. Used by `pnpm build` (this file is tsup's default
 * config: `dist/plugin.js`) and by the test harness (`harness/build.ts`, into
 * node_modules/.cache).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

/** Root directory of the bridge-opencode package. */
export const BRIDGE_ROOT = dirname(fileURLToPath(import.meta.url));

/** Where `pnpm build` writes the distributable plugin (`plugin.js`). */
export const DIST_DIR = join(BRIDGE_ROOT, 'dist');

const pkg = JSON.parse(readFileSync(join(BRIDGE_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** This package's registry dependencies (subpaths included): the only imports left in the bundle. */
export const PLUGIN_EXTERNALS: readonly RegExp[] = Object.keys(pkg.dependencies)
  .filter((name) => !name.startsWith('@agentmail/'))
  .map((name) => new RegExp(`^${escapeRegExp(name)}(?:/|$)`));

/**
 * tsup options that bundle `entry` (default `src/plugin.ts`) into `<outDir>/plugin.js`.
 */
export function pluginBuildOptions(
  outDir: string,
  { entry = join(BRIDGE_ROOT, 'src', 'plugin.ts') }: { entry?: string } = {},
): Options {
  return {
    entry: { plugin: entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node22',
    tsconfig: join(BRIDGE_ROOT, 'tsconfig.build.json'),
    sourcemap: true,
    splitting: false,
    clean: true,
    silent: true,
    noExternal: [/^@agentmail\//],
    external: [...PLUGIN_EXTERNALS],
    // Inlined CommonJS packages (undici) require node builtins: give the ESM bundle a `require`
    // (Bun, which runs opencode, has one; Node.js does not).
    banner: {
      js: "import { createRequire as __amCreateRequire } from 'node:module'; const require = __amCreateRequire(import.meta.url);",
    },
    esbuildOptions(options) {
      options.conditions = ['@agentmail/source'];
      options.mainFields = ['module', 'main'];
    },
  };
}

// No declarations: opencode loads the plugin's JavaScript; nothing compiles against it.
export default defineConfig(pluginBuildOptions(DIST_DIR));
