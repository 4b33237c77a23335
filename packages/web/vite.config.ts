/**
 * Build of the web mailbox: `index.html` plus content-hashed files under `assets/` (the Gateway
 * caches those for a year and revalidates `index.html` on each load). Our packages are bundled
 * from their TypeScript sources (the `@agentmail/source` condition), so no other package has to
 * be built first. Vite prints each file's size, raw and gzipped, at the end of `pnpm build`.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  // Relative asset URLs: the page also works when a proxy serves the Gateway under a path prefix.
  base: './',
  resolve: { conditions: ['@agentmail/source', 'browser', 'module', 'import', 'default'] },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    // The polyfill would be the only script not in a file of ours; every browser we support has modulepreload.
    modulePreload: { polyfill: false },
  },
});
