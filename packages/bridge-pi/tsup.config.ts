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
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

const ROOT = dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const own = Object.keys(pkg.dependencies)
  .filter((name) => !name.startsWith('@agentmail/'))
  .map(escapeRegExp);

export default defineConfig({
  entry: Object.fromEntries(
    ['index', 'daemon-main', 'worker-main', 'launcher-main', 'extension'].map((name) => [
      name,
      join(ROOT, 'src', `${name}.ts`),
    ]),
  ),
  outDir: join(ROOT, 'dist'),
  format: ['esm'],
  platform: 'node',
  target: 'node22',
  tsconfig: join(ROOT, 'tsconfig.build.json'),
  dts: false,
  clean: true,
  splitting: true,
  // Everything but the bridge's own dependencies is inlined.
  noExternal: [new RegExp(`^(?!(${own.join('|')})(/|$))`)],
  external: own.map((name) => new RegExp(`^${name}(?:/|$)`)),
  // Inlined CommonJS packages (undici) require node builtins: give the ESM bundle a require.
  banner: {
    js: "import { createRequire as __amCreateRequire } from 'node:module'; const require = __amCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.conditions = ['@agentmail/source'];
  },
});
