/**
 * Build for `pnpm bench`: the CLI (the bench starts `agentmail serve` as a child process) and the
 * bench itself, bundled like the CLI tests do (see test/helpers/cli-build.ts for why a build).
 */
import { join } from 'node:path';
import { defineConfig } from 'tsup';
import { BUILD_CACHE_DIR, bundleOptions } from '../test/helpers/cli-build.js';

/** Where the bench build goes; the `bench` script runs `gateway-bench.js` from here. */
export const BENCH_BUILD_DIR = join(BUILD_CACHE_DIR, 'agentmail-bench');

export default defineConfig(
  bundleOptions({ main: 'src/cli/main.ts', 'gateway-bench': 'bench/gateway-bench.ts' }, BENCH_BUILD_DIR),
);
