/**
 * Build of the standalone pi extension (`pnpm --filter @agentmail/bridge-pi build:extension`):
 * src/extension.ts with everything it imports inlined (the `@agentmail/*` packages from their
 * TypeScript sources, their dependencies too) into ONE file, `dist/agentmail-pi-extension.js`, that
 * a person's own pi loads with `pi -e <file>` from anywhere. pi itself is only imported as types.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The file `pi -e` loads (see the README, section "pi extension"). */
export const EXTENSION_BUNDLE = join(ROOT, 'dist', 'agentmail-pi-extension.js');

export default defineConfig({
  entry: { 'agentmail-pi-extension': join(ROOT, 'src', 'extension.ts') },
  outDir: dirname(EXTENSION_BUNDLE),
  format: ['esm'],
  platform: 'node',
  target: 'node22',
  tsconfig: join(ROOT, 'tsconfig.json'),
  dts: false,
  sourcemap: false,
  splitting: false,
  // The package build (`build`) cleans dist/ itself; this one only adds its file.
  clean: false,
  silent: true,
  noExternal: [/.*/],
  // Inlined CommonJS packages (undici) require node builtins: give the ESM bundle a require.
  banner: {
    js: "import { createRequire as __amCreateRequire } from 'node:module'; const require = __amCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.conditions = ['@agentmail/source'];
    options.mainFields = ['module', 'main'];
  },
});
