/**
 * The one build of the Gateway and its `agentmail` CLI, used by `pnpm --filter @agentmail/gateway
 * build` (JS + declarations), `build:cli` (JS only, what `pnpm serve` runs: about two seconds),
 * the CLI tests and the bench ({@link bundleOptions} into a directory of their own).
 *
 * Self-contained on purpose: the `@agentmail/*` packages are inlined from their TypeScript sources
 * (the `@agentmail/source` export condition, what vitest and `tsc -b` read), so a fresh clone
 * builds the Gateway without building its sibling packages first, and `dist/cli/main.js` never
 * imports a sibling's `dist` at run time. The Gateway's own dependencies (fastify, better-sqlite3,
 * …) stay imports and resolve from packages/gateway/node_modules; a dependency only an inlined
 * package declares (jsonc-parser of protocol) cannot be resolved from there under pnpm, so it is
 * inlined too. The declarations are made the same way (tsconfig.build.json resolves siblings
 * through their sources) and keep `@agentmail/*` as imports.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { nodeBundle, ownDependencies } from '../../tooling/node-bundle.js';

/** Root of the gateway package. */
export const GATEWAY_ROOT = dirname(fileURLToPath(import.meta.url));

/** The entries of the package build: the library and the CLI (name → path in the package). */
export const PACKAGE_ENTRIES: Readonly<Record<string, string>> = {
  index: 'src/index.ts',
  'cli/main': 'src/cli/main.ts',
};

/**
 * tsup options for an ESM bundle of `entries` (name → path relative to the gateway package) in
 * `outDir`, `@agentmail/*` inlined from sources, the gateway's own dependencies external, the rest
 * inlined. No declarations (the package build adds them with `--dts`).
 */
export function bundleOptions(entries: Readonly<Record<string, string>>, outDir: string): Options {
  return nodeBundle({
    entries: Object.fromEntries(
      Object.entries(entries).map(([name, path]) => [name, join(GATEWAY_ROOT, path)]),
    ),
    outDir: resolve(GATEWAY_ROOT, outDir),
    tsconfig: join(GATEWAY_ROOT, 'tsconfig.build.json'),
    sourcemap: true,
    // Chunks keep `serve`'s dynamic import of the server lazy: client commands never load Fastify.
    splitting: true,
    // Keep declarations a `--dts` build left: `build:cli` replaces only the JavaScript.
    clean: ['!**/*.d.ts'],
    keep: ownDependencies(GATEWAY_ROOT, { dev: true }),
    requireShim: false,
  });
}

// `tsup` (build:cli) builds the JavaScript; `tsup --dts src/index.ts` (build) adds the library's
// declarations. A flag given on the command line wins over these options.
export default defineConfig(bundleOptions(PACKAGE_ENTRIES, 'dist'));
