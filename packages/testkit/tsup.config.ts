/**
 * `pnpm build`: the harness entries and the two programs (`agentmail-model-server`,
 * `agentmail-zcode-standin`) in `dist/`. Self-contained like the Gateway's and the bridges' builds:
 * the `@agentmail/*` packages are inlined from their TypeScript sources (the `@agentmail/source`
 * condition), so `pnpm --filter @agentmail/testkit build` works on a fresh clone without building
 * them first; the kit's own dependencies stay imports. No declarations: a private package whose
 * users (the workspace's tests) read its sources.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { nodeBundle, ownDependencies } from '../../tooling/node-bundle.js';

const ROOT = dirname(fileURLToPath(import.meta.url));

export default defineConfig(
  nodeBundle({
    entries: {
      index: join(ROOT, 'src/index.ts'),
      'model-server-cli': join(ROOT, 'src/model-server-cli.ts'),
      'conformance/index': join(ROOT, 'src/conformance/index.ts'),
      'zcode/index': join(ROOT, 'src/zcode/index.ts'),
      'zcode/main': join(ROOT, 'src/zcode/main.ts'),
    },
    outDir: join(ROOT, 'dist'),
    tsconfig: join(ROOT, 'tsconfig.build.json'),
    clean: true,
    splitting: true,
    keep: ownDependencies(ROOT),
  }),
);
