/**
 * Bundle the daemon and worker entries for child processes (tests, `pnpm demo`): `@agentmail/*`
 * inlined from their TypeScript sources, the bridge's own dependencies (pi, pino, typebox) left as
 * imports (pi must stay unbundled: its config reads the nearest package.json). The output lives
 * under this package's node_modules so those imports resolve; it is made once per source version
 * and shared by every test file (testkit's `cachedBuild`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild } from '@agentmail/testkit';
import { nodeBundle, ownDependencies } from '../../../tooling/node-bundle.js';

/**
 * Root of the bridge-pi package: the nearest package.json named `@agentmail/bridge-pi` above this
 * file, so it is found from `harness/` (tests) and from a bundle under `node_modules/.cache` (demo).
 */
function bridgeRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (
      existsSync(pkg) &&
      (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === '@agentmail/bridge-pi'
    )
      return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`no @agentmail/bridge-pi package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Root directory of the bridge-pi package. */
export const BRIDGE_ROOT = bridgeRoot();

/**
 * Bundles `src/daemon-main.ts`, `src/worker-main.ts` and `src/launcher-main.ts` (once per source
 * version, see the module comment). `remove()` leaves the shared build in place (kept for the
 * signature of the other harness builds).
 */
export async function buildBridge(): Promise<{
  daemonJs: string;
  workerJs: string;
  launcherJs: string;
  remove: () => Promise<void>;
}> {
  const { build } = await import('tsup');
  const outDir = await cachedBuild({
    packageRoot: BRIDGE_ROOT,
    name: 'bridge-pi-daemon',
    build: async (dir) => {
      await build(
        nodeBundle({
          entries: {
            'daemon-main': join(BRIDGE_ROOT, 'src/daemon-main.ts'),
            'worker-main': join(BRIDGE_ROOT, 'src/worker-main.ts'),
            'launcher-main': join(BRIDGE_ROOT, 'src/launcher-main.ts'),
          },
          outDir: dir,
          tsconfig: join(BRIDGE_ROOT, 'tsconfig.json'),
          keep: ownDependencies(BRIDGE_ROOT),
          sourcemap: true,
          splitting: true,
          clean: true,
        }),
      );
    },
  });
  return {
    daemonJs: join(outDir, 'daemon-main.js'),
    workerJs: join(outDir, 'worker-main.js'),
    launcherJs: join(outDir, 'launcher-main.js'),
    remove: async () => {},
  };
}
