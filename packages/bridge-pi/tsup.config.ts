/**
 * `pnpm build`: the daemon, its launcher and worker, the library entry and the in-process
 * extension entry, in `dist/`; then the standalone extension bundle (harness/extension.tsup.config.ts).
 *
 * Self-contained like the Gateway's build: the `@agentmail/*` packages are inlined from their
 * TypeScript sources (the `@agentmail/source` condition), so `pnpm --filter @agentmail/bridge-pi
 * build` works on a fresh clone without building them first, and nothing in `dist/` imports a
 * sibling's `dist`. The bridge's own dependencies (pi, pino, typebox) stay imports — pi must stay
 * unbundled (its config reads the nearest package.json); a dependency only an inlined package
 * declares cannot be resolved from here under pnpm, so it is inlined too. No declarations: a
 * daemon, nothing compiles against it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { nodeBundle, ownDependencies } from '../../tooling/node-bundle.js';

const ROOT = dirname(fileURLToPath(import.meta.url));

export default defineConfig(
  nodeBundle({
    entries: Object.fromEntries(
      ['index', 'daemon-main', 'worker-main', 'launcher-main', 'extension'].map((name) => [
        name,
        join(ROOT, 'src', `${name}.ts`),
      ]),
    ),
    outDir: join(ROOT, 'dist'),
    tsconfig: join(ROOT, 'tsconfig.build.json'),
    clean: true,
    splitting: true,
    keep: ownDependencies(ROOT),
  }),
);
