/**
 * Build the `agentmail` CLI (and optionally more entries) into a runnable ESM bundle for tests and
 * the bench, so they run the CLI as a real child process — with the package build's own options
 * (tsup.config.ts: `@agentmail/*` inlined from their sources, the gateway's dependencies external),
 * in a directory of their own under packages/gateway/node_modules/.cache, where those external
 * imports resolve.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleOptions, GATEWAY_ROOT } from '../../tsup.config.js';

export { bundleOptions, GATEWAY_ROOT } from '../../tsup.config.js';

/** Directory that holds the test and bench builds (inside node_modules so imports resolve). */
export const BUILD_CACHE_DIR = join(GATEWAY_ROOT, 'node_modules', '.cache');

/**
 * Bundle the CLI into a fresh directory under {@link BUILD_CACHE_DIR} and return the path of its
 * `main.js`. Call `remove()` when done.
 */
export async function buildCli(tag: string): Promise<{ mainJs: string; remove: () => Promise<void> }> {
  const { build } = await import('tsup');
  const outDir = join(BUILD_CACHE_DIR, `agentmail-${tag}-${process.pid}-${Date.now()}`);
  await mkdir(outDir, { recursive: true });
  await build({ ...bundleOptions({ main: 'src/cli/main.ts' }, outDir), clean: true });
  return { mainJs: join(outDir, 'main.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}
