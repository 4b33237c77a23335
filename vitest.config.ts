import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// vitest 4 ignores vitest.workspace.ts: the list lives there, the wiring here.

/** Projects whose tests run real hosts or a real browser. */
const slow = (root: string): boolean => root.startsWith('packages/bridge-') || root === 'packages/web';
export default defineConfig({
  test: {
    // Two test files at a time even on 2 cores (vitest's default there is 1): the bridge suites
    // mostly wait on child processes (Gateway, pi workers, opencode), so two overlap well.
    maxWorkers: 2,
    projects: projects.map((root) => ({
      extends: true,
      // Run on sources: every package's `exports` has an `@agentmail/source` condition first.
      ssr: { resolve: { conditions: ['@agentmail/source'] } },
      resolve: { conditions: ['@agentmail/source'] },
      test: {
        name: root.replace(/^packages\//, ''),
        root,
        include: ['test/**/*.test.ts'],
        // Bridge tests start real Gateways, bridges and platform binaries: on a loaded 2-core CI
        // machine one test can take minutes; the tests themselves bound every wait.
        // The web mailbox's tests drive real Chromium against a Gateway and a pi bridge, likewise.
        testTimeout: slow(root) ? 240_000 : 30_000,
        hookTimeout: slow(root) ? 120_000 : 10_000,
      },
    })),
  },
});
