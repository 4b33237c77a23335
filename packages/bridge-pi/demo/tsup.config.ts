/**
 * Build for `pnpm demo`: demo/demo.ts bundled with the `@agentmail/*` packages inlined from their
 * TypeScript sources (the `@agentmail/source` condition, as vitest runs them) into this package's
 * node_modules/.cache, so the packages left as imports resolve from here: tsup (the harness bundles
 * the Gateway CLI and the bridge daemon with it at run time; a root devDependency) and the bridge's
 * own dependencies.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the demo build goes; the `demo` script runs `demo.js` from here. */
export const DEMO_BUILD_DIR = join(ROOT, 'node_modules', '.cache', 'agentmail-demo');

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const external = ['tsup', ...Object.keys(pkg.dependencies).filter((n) => !n.startsWith('@agentmail/'))];

export default defineConfig({
  entry: { demo: join(ROOT, 'demo', 'demo.ts') },
  outDir: DEMO_BUILD_DIR,
  format: ['esm'],
  platform: 'node',
  target: 'node22',
  tsconfig: join(ROOT, 'tsconfig.json'),
  dts: false,
  sourcemap: true,
  clean: true,
  silent: true,
  noExternal: [/^@agentmail\//],
  external: external.map((name) => new RegExp(`^${escapeRegExp(name)}(?:/|$)`)),
  // Inlined CommonJS packages (undici) require node builtins: give the ESM bundle a require.
  banner: {
    js: "import { createRequire as __amCreateRequire } from 'node:module'; const require = __amCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.conditions = ['@agentmail/source'];
    options.mainFields = ['module', 'main'];
  },
});
