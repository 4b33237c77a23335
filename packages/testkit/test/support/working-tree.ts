/** The repository's working tree as the docs tests read it: what git tracks or would track. */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root directory. */
export const REPO = resolve(import.meta.dirname, '../../../..');

/**
 * Tracked (or trackable: untracked and not ignored) files of the working tree, relative to the
 * repository, limited to `paths` (git pathspecs) when given; files deleted but not yet staged are left out.
 */
export function workingTreeFiles(...paths: string[]): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...paths], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '' && existsSync(join(REPO, f)));
}

/** A file of the repository as UTF-8 text, by its repository-relative path. */
export function readRepoFile(file: string): string {
  return readFileSync(join(REPO, file), 'utf8');
}
