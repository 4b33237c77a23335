/**
 * Build the `agentmail` CLI (and optionally more entries) into a runnable ESM bundle for tests and
 * the bench, so they run the CLI as a real child process.
 *
 * Why a build and not `node --experimental-strip-types src/cli/main.ts`: Node 22's type stripping
 * does not rewrite our `.js`-suffixed relative imports to the `.ts` files, so the workspace
 * packages' sources cannot be loaded that way without a custom resolve hook. tsup (a root
 * devDependency) bundles in ~0.2 s: the `@agentmail/*` packages are inlined from their TypeScript
 * sources (the `source` export condition, exactly what vitest runs). A package the gateway itself
 * declares (dependencies and devDependencies) stays external and resolves from
 * packages/gateway/node_modules at run time, which is why the output lives under
 * packages/gateway/node_modules/.cache. A dependency that only an inlined `@agentmail/*` package
 * declares (jsonc-parser of protocol) cannot be resolved from there under pnpm, so it is inlined
 * too.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

/** Root of the gateway package. */
export const GATEWAY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Directory that holds the test and bench builds (inside node_modules so imports resolve). */
export const BUILD_CACHE_DIR = join(GATEWAY_ROOT, 'node_modules', '.cache');

/** The packages the gateway declares, minus the workspace ones (those are inlined). */
function declaredPackages(): string[] {
  const pkg = JSON.parse(readFileSync(join(GATEWAY_ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  return Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter(
    (name) => !name.startsWith('@agentmail/'),
  );
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * tsup options for a bundle of `entries` (name → path relative to the gateway package) in
 * `outDir`, with `@agentmail/*` inlined from sources, the gateway's own dependencies external and
 * the rest (dependencies of the inlined packages) inlined.
 */
export function bundleOptions(entries: Readonly<Record<string, string>>, outDir: string): Options {
  return {
    entry: Object.fromEntries(
      Object.entries(entries).map(([name, path]) => [name, join(GATEWAY_ROOT, path)]),
    ),
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node22',
    tsconfig: join(GATEWAY_ROOT, 'tsconfig.json'),
    dts: false,
    sourcemap: true,
    // Chunks keep `serve`'s dynamic import of the server lazy, as in the package build.
    splitting: true,
    clean: true,
    silent: true,
    config: false,
    noExternal: [/^@agentmail\//],
    // The gateway's own packages stay imports (fastify, better-sqlite3, …; node: builtins are
    // external anyway); anything else is inlined.
    external: declaredPackages().map((name) => new RegExp(`^${escapeRegExp(name)}(?:/|$)`)),
    esbuildOptions(options) {
      options.conditions = ['@agentmail/source'];
      // Prefer a package's ESM build: a UMD `main` (jsonc-parser) hides its requires from esbuild.
      options.mainFields = ['module', 'main'];
    },
  };
}

/**
 * Bundle the CLI into a fresh directory under {@link BUILD_CACHE_DIR} and return the path of its
 * `main.js`. Call `remove()` when done.
 */
export async function buildCli(tag: string): Promise<{ mainJs: string; remove: () => Promise<void> }> {
  const { build } = await import('tsup');
  const outDir = join(BUILD_CACHE_DIR, `agentmail-${tag}-${process.pid}-${Date.now()}`);
  await mkdir(outDir, { recursive: true });
  await build(bundleOptions({ main: 'src/cli/main.ts' }, outDir));
  return { mainJs: join(outDir, 'main.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}
