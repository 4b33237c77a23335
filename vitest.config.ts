import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './packages/testkit/src/reporter.js';
import { LongestFirstSequencer } from './packages/testkit/src/sequencer.js';
import { projects } from './vitest.workspace.js';

// vitest 4 ignores vitest.workspace.ts: the list lives there, the wiring here.

// Node's compile cache for every process of the run: the test workers and every child they
// spawn (Gateways, bridges, pi workers, hooks, DSH) inherit it, so each module is compiled once
// per machine instead of once per process (it is keyed by content; stale entries are ignored).
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');

/** Projects whose tests run real hosts or a real browser (the bridges; the kit's own tests are fast). */
const slow = (root: string): boolean =>
  (root.startsWith('packages/bridge-') && root !== 'packages/bridge-kit') || root === 'packages/web';
/**
 * The Gateway test files that run on PostgreSQL too: every file whose Gateway keeps a store.
 * Left out: the builds, the CLI's own parsing and output, and the service units (no store).
 */
const POSTGRES_FILES: readonly string[] = readdirSync(join(import.meta.dirname, 'packages/gateway/test'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => f.replace(/\.test\.ts$/, ''))
  .filter(
    (f) => !['build', 'cli-epipe', 'cli-units', 'terminal-text', 'errors', 'storage-sqlite'].includes(f),
  );

/** Gateway test files of several Gateways on one database: PostgreSQL only. */
const POSTGRES_ONLY: readonly string[] = ['races', 'instances', 'proxy'];

export default defineConfig({
  test: {
    // The default report, then the run's summary: the conformance matrix and the slowest files.
    reporters: ['default', new SummaryReporter()],
    // Longest files first, across projects (figures in .ci/test-durations.json).
    sequence: { sequencer: LongestFirstSequencer },
    // Three test files at a time on 2 cores (vitest's default there is 1): the bridge suites mostly
    // wait on child processes (Gateway, pi workers, opencode). Measured on a fresh clone, 2 cores:
    // 453 s with two (the cores ~53 % busy), 345 s with three.
    maxWorkers: 3,
    // A worker runs its files one after another in one process (no fresh module graph per file):
    // every test file starts and closes what it uses, and the builds and caches a harness keeps in
    // its modules are meant to be shared.
    isolate: false,
    projects: [
      ...projects.map(project),
      // The Gateway suite again with the store in PostgreSQL (a throwaway cluster for the run; each
      // test's Gateway gets a database of its own): the same behaviour on both dialects.
      {
        ...project('packages/gateway'),
        test: {
          ...project('packages/gateway').test,
          name: 'gateway-postgres',
          globalSetup: ['./test/postgres-setup.ts'],
          include: POSTGRES_FILES.map((f) => `test/${f}.test.ts`),
          exclude: [],
        },
      },
    ],
  },
});

function project(root: string) {
  return {
    extends: true,
    // Run on sources: every package's `exports` has an `@agentmail/source` condition first.
    ssr: { resolve: { conditions: ['@agentmail/source'] } },
    resolve: { conditions: ['@agentmail/source'] },
    test: {
      name: root.replace(/^packages\//, ''),
      root,
      include: ['test/**/*.test.ts'],
      ...(root === 'packages/gateway' ? { exclude: POSTGRES_ONLY.map((f) => `test/${f}.test.ts`) } : {}),
      // Bridge tests start real Gateways, bridges and platform binaries: on a loaded 2-core CI
      // machine one test can take minutes; the tests themselves bound every wait.
      // The web mailbox's tests drive real Chromium against a Gateway and a pi bridge, likewise.
      testTimeout: slow(root) ? 240_000 : 30_000,
      hookTimeout: slow(root) ? 120_000 : 10_000,
    },
  };
}
