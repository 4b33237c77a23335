/**
 * Builds the Gateway's `agentmail` CLI from its TypeScript sources into a runnable ESM bundle, so
 * the harness runs the Gateway as a real child process without a prior `pnpm build`.
 *
 * Same approach as the Gateway's own test helper (packages/gateway/test/helpers/cli-build.ts),
 * which cannot be imported from here: it is test code of another package, and the Gateway cannot
 * depend on the test kit in return (the project references would form a cycle). Why a bundle and
 * not `node src/cli/main.ts`: Node's type stripping does not map our `.js`-suffixed relative
 * imports to `.ts` files. tsup inlines the `@agentmail/*` packages from their sources (the
 * `@agentmail/source` export condition, what vitest runs) and every pure-JS dependency too, so a
 * Gateway child starts without resolving hundreds of module files (0.65 instead of 1.05 CPU-s per
 * start here; a suite starts dozens); native modules ({@link NATIVE_MODULES}) stay imports and
 * resolve from packages/gateway/node_modules at run time, which is why the bundle is written under
 * packages/gateway/node_modules/.cache. The package build (`pnpm build`) keeps its dependencies
 * external; the Gateway's own tests run that bundle.
 *
 * The bundle is cached under a hash of the workspace's sources (build-cache.ts), so a run reuses it
 * until a source changes, and nothing has to be removed at exit.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBundle } from '../../../../tooling/node-bundle.js';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { cachedBuild } from './build-cache.js';

/** Environment variable naming a prebuilt CLI (`…/dist/cli/main.js`) to run instead of building one. */
export const GATEWAY_JS_ENV = 'AGENTMAIL_TESTKIT_GATEWAY_JS';

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/**
 * Root of this package, found by walking up from this file (works from src/ and from dist/), or,
 * when this file is inlined into another package's bundle (e.g. bridge-pi's `pnpm demo` under its
 * node_modules/.cache), through that package's `node_modules/@agentmail/testkit` link.
 */
function testkitRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && readJson(pkg).name === '@agentmail/testkit') return dir;
    const link = join(dir, 'node_modules', '@agentmail', 'testkit');
    if (existsSync(join(link, 'package.json'))) return realpathSync(link);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the @agentmail/testkit package root');
    dir = parent;
  }
}

/**
 * Root directory of the `@agentmail/gateway` package: the test kit's sibling in the workspace's
 * `packages/` folder. Found by the layout, not through a package dependency: the kit builds the
 * Gateway from its sources and needs nothing the Gateway's own build makes, and a dependency would
 * close a cycle in the workspace's build order (the Gateway's CLI serves host-tools' mail tools,
 * whose tests run on this kit).
 * @throws {TestkitError} `AM_TESTKIT_GATEWAY_BUILD` when the sibling or its sources are missing.
 */
export function gatewayPackageRoot(): string {
  const root = join(dirname(testkitRoot()), 'gateway');
  const pkg = join(root, 'package.json');
  if (!existsSync(pkg) || readJson(pkg).name !== '@agentmail/gateway')
    throw new TestkitError(
      TESTKIT_ERROR_CODES.GATEWAY_BUILD,
      `cannot find @agentmail/gateway at ${root}: the harness runs in the AgentMail workspace, beside packages/gateway; set ${GATEWAY_JS_ENV} to a built dist/cli/main.js instead.`,
    );
  if (!existsSync(join(root, 'src', 'cli', 'main.ts')))
    throw new TestkitError(
      TESTKIT_ERROR_CODES.GATEWAY_BUILD,
      `${root} has no src/cli/main.ts: the harness builds the Gateway from a source checkout; set ${GATEWAY_JS_ENV} to a built dist/cli/main.js instead.`,
    );
  return root;
}

/** Dependencies with a native addon: loaded from node_modules, never inlined. */
export const NATIVE_MODULES: readonly string[] = ['better-sqlite3'];

let built: Promise<string> | undefined;

/**
 * Path of a runnable `agentmail` CLI (`main.js`): `$AGENTMAIL_TESTKIT_GATEWAY_JS` when set, else
 * a bundle of the Gateway's sources, built when no cached bundle of the same sources exists.
 * @throws {TestkitError} `AM_TESTKIT_GATEWAY_BUILD` when the sources cannot be found or bundled.
 */
export function gatewayCliPath(): Promise<string> {
  const prebuilt = process.env[GATEWAY_JS_ENV];
  if (prebuilt) return Promise.resolve(prebuilt);
  built ??= buildGatewayCli().catch((error: unknown) => {
    built = undefined; // let a later call try again
    throw error;
  });
  return built;
}

async function buildGatewayCli(): Promise<string> {
  const root = gatewayPackageRoot();
  const dir = await cachedBuild({
    packageRoot: root,
    name: 'agentmail-testkit-gw',
    build: async (outDir) => {
      try {
        const { build } = await import('tsup');
        await build(
          nodeBundle({
            entries: { main: join(root, 'src', 'cli', 'main.ts') },
            outDir,
            tsconfig: join(root, 'tsconfig.json'),
            keep: NATIVE_MODULES,
            sourcemap: true,
            splitting: true,
            clean: true,
          }),
        );
      } catch (error) {
        throw new TestkitError(
          TESTKIT_ERROR_CODES.GATEWAY_BUILD,
          `bundling the Gateway CLI from ${root}/src/cli/main.ts failed: ${error instanceof Error ? error.message : String(error)}; check that the Gateway typechecks (pnpm exec tsc -b).`,
          { cause: error },
        );
      }
    },
  });
  return join(dir, 'main.js');
}
