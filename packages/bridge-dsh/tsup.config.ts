/**
 * The one build of the DSH plugin: `src/index.ts` bundled into a single ESM file `plugin.js` with
 * every `@agentmail/*` package inlined from its TypeScript sources (the `@agentmail/source`
 * condition); `pino` and every `@deepseek-ai/*` import stay imports — DSH's own copies, resolved
 * from where the file lies (this package's node_modules, or the dsh profile's), so the bundle is
 * small and the plugin shares DSH's service classes. Used by `pnpm build` (`dist/plugin.js`) and
 * by the test harness (`harness/build.ts`, into node_modules/.cache).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { nodeBundle, ownDependencies } from '../../tooling/node-bundle.js';

/** Root directory of the bridge-dsh package. */
export const DSH_BRIDGE_ROOT = dirname(fileURLToPath(import.meta.url));

/** tsup options that bundle the plugin into `<outDir>/plugin.js`. */
export function dshPluginBuild(outDir: string): Options {
  return nodeBundle({
    entries: { plugin: join(DSH_BRIDGE_ROOT, 'src', 'index.ts') },
    outDir,
    tsconfig: join(DSH_BRIDGE_ROOT, 'tsconfig.build.json'),
    sourcemap: true,
    clean: true,
    keep: [...ownDependencies(DSH_BRIDGE_ROOT), '@deepseek-ai/'],
  });
}

// No declarations: dsh loads the plugin's JavaScript; nothing compiles against it.
export default defineConfig(dshPluginBuild(join(DSH_BRIDGE_ROOT, 'dist')));
