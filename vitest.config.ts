import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// vitest 4 ignores vitest.workspace.ts: the list lives there, the wiring here.
export default defineConfig({
  test: {
    projects: projects.map((root) => ({
      extends: true,
      // Run on sources: every package's `exports` has a `source` condition first.
      ssr: { resolve: { conditions: ['source'] } },
      resolve: { conditions: ['source'] },
      test: {
        name: root.replace(/^packages\//, ''),
        root,
        include: ['test/**/*.test.ts'],
        testTimeout: 30_000,
      },
    })),
  },
});
