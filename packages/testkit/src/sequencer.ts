/**
 * Longest test files first, across projects (vitest's own order is by project name, then by file
 * size on a fresh clone: the one-line conformance files, the longest of all, would start last and
 * leave one worker running alone at the end). A file's expected time is the larger of vitest's own
 * cached duration and the committed figure of the last full run (`.ci/test-durations.json`,
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

/** What {@link readTestDurations} found. */
export type TestDurations =
  | { ok: true; durations: Record<string, number> }
  | { ok: false; durations: Record<string, number>; problem: string };

/**
 * `<project> <path>` → ms, from {@link TEST_DURATIONS_FILE}. A missing file is `{}`; a file that is
 * not such an object (bad JSON, an array, a value that is not a finite number of ms ≥ 0) gives
 * `{}` too, with `problem` saying what is wrong and how to restore it.
 */
export function readTestDurations(root: string): TestDurations {
  const file = `${root}/${TEST_DURATIONS_FILE}`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { ok: true, durations: {} };
  }
  const fix = `restore it with: git checkout ${TEST_DURATIONS_FILE}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      durations: {},
      problem: `${TEST_DURATIONS_FILE} is not JSON (${String(error)}); ${fix}`,
    };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return {
      ok: false,
      durations: {},
      problem: `${TEST_DURATIONS_FILE} must be an object of "<project> <file>": ms; ${fix}`,
    };
  for (const [key, value] of Object.entries(parsed))
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      return {
        ok: false,
        durations: {},
        problem: `${TEST_DURATIONS_FILE}: ${JSON.stringify(key)} is ${JSON.stringify(value)}, not a number of ms; ${fix}`,
      };
  return { ok: true, durations: parsed as Record<string, number> };
}

/** The key of a file in {@link TEST_DURATIONS_FILE}: `<project> <path relative to the workspace root>`. */
export function durationKey(project: string, root: string, moduleId: string): string {
  return `${project} ${relative(root, moduleId)}`;
}

/** See the module comment. Set as `test.sequence.sequencer` in the root vitest config. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const read = readTestDurations(root);
    // The order only saves time; a broken figures file is reported, not fatal.
    if (!read.ok) process.stderr.write(`test order: ${read.problem}; ordering by file size\n`);
    const committed = read.durations;
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
      // The larger figure: a run filtered with -t leaves a short time in vitest's cache.
      expected.set(
        spec,
        cached === undefined && known === undefined ? guess : Math.max(cached ?? 0, known ?? 0),
      );
    }
    return [...files].sort((a, b) => (expected.get(b) ?? 0) - (expected.get(a) ?? 0));
  }
}
