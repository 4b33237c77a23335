import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// vitest 4 ignores vitest.workspace.ts: the list lives there, the wiring here.
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
        testTimeout: root.startsWith('packages/bridge-') ? 240_000 : 30_000,
        hookTimeout: root.startsWith('packages/bridge-') ? 120_000 : 10_000,
      },
    })),
  },
});
