/**
 * Build of the standalone pi extension (`pnpm --filter @agentmail/bridge-pi build:extension`):
 * src/extension.ts with everything it imports inlined (the `@agentmail/*` packages from their
 * TypeScript sources, their dependencies too) into ONE file, `dist/agentmail-pi-extension.js`, that
 * a person's own pi loads with `pi -e <file>` from anywhere. pi itself is only imported as types.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { nodeBundle } from '../../../tooling/node-bundle.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The file `pi -e` loads (see the README, section "pi extension"). */
export const EXTENSION_BUNDLE = join(ROOT, 'dist', 'agentmail-pi-extension.js');

// The package build (`build`) cleans dist/ itself; this one only adds its file.
export default defineConfig(
  nodeBundle({
    entries: { 'agentmail-pi-extension': join(ROOT, 'src', 'extension.ts') },
    outDir: dirname(EXTENSION_BUNDLE),
    tsconfig: join(ROOT, 'tsconfig.json'),
  }),
);
