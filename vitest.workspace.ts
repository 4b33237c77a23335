import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The test projects: every package under `packages/` with a `test/` directory, discovered (a new
 * package — a new host's bridge — is a project without an edit here; its name is the directory's).
 * vitest 4 silently ignores a `vitest.workspace.ts` file, so `vitest.config.ts` imports this list
 * into `test.projects`.
 */
const PACKAGES = join(import.meta.dirname, 'packages');

export const projects: string[] = readdirSync(PACKAGES, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(PACKAGES, d.name, 'test')))
  .map((d) => `packages/${d.name}`)
  .sort();
