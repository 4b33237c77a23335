/**
 * Longest test files first, across projects (vitest's own order is by project name, then by file
 * size on a fresh clone: the one-line conformance files, the longest of all, would start last and
 * leave one worker running alone at the end). A file's expected time is vitest's own cached
 * duration when there is one, else the committed figure of the last full run (`.ci/test-durations.json`,
 * written by the summary reporter with `AGENTMAIL_TEST_DURATIONS_WRITE=1`), else a guess from
 * the file size.
 *
 * Kept free of the rest of the kit (only vitest): the root vitest config loads it.
 */
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/** The committed durations file, relative to the workspace root. */
export const TEST_DURATIONS_FILE = '.ci/test-durations.json';

/** Expected ms of a file vitest has no figure for, per byte of source (a rough guess). */
const MS_PER_BYTE_GUESS = 0.5;

/** `project:path` → ms, from {@link TEST_DURATIONS_FILE}; `{}` when it is missing or unreadable. */
export function readTestDurations(root: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(`${root}/${TEST_DURATIONS_FILE}`, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** The key of a file in {@link TEST_DURATIONS_FILE}: `<project> <path relative to the workspace root>`. */
export function durationKey(project: string, root: string, moduleId: string): string {
  return `${project} ${relative(root, moduleId)}`;
}

/** See the module comment. Set as `test.sequence.sequencer` in the root vitest config. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const committed = readTestDurations(root);
    const expected = new Map<TestSpecification, number>();
    for (const spec of files) {
      const cached = this.ctx.cache.getFileTestResults(
        `${spec.project.name}:${relative(root, spec.moduleId)}`,
      )?.duration;
      const known = committed[durationKey(spec.project.name, root, spec.moduleId)];
      let guess = 0;
      if (cached === undefined && known === undefined)
        try {
          guess = statSync(spec.moduleId).size * MS_PER_BYTE_GUESS;
        } catch {
          guess = 0;
        }
      expected.set(spec, cached ?? known ?? guess);
    }
    return [...files].sort((a, b) => (expected.get(b) ?? 0) - (expected.get(a) ?? 0));
  }
}
