import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// vitest 4 ignores vitest.workspace.ts: the list lives there, the wiring here.
export default defineConfig({
  test: {
    projects: projects.map((root) => ({
      extends: true,
      // Run on sources: every package's `exports` has an `@agentmail/source` condition first.
      ssr: { resolve: { conditions: ['@agentmail/source'] } },
      resolve: { conditions: ['@agentmail/source'] },
      test: {
        name: root.replace(/^packages\//, ''),
        root,
        include: ['test/**/*.test.ts'],
        testTimeout: 30_000,
      },
    })),
  },
});
