/**
 * The test run's own tools: the build cache (one build per source version, a damaged one made
 * anew) and the committed durations file that orders the files (a broken one is reported, never
 * trusted).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILD_MANIFEST, cachedBuild } from '../src/harness/build-cache.js';
import { readTestDurations, TEST_DURATIONS_FILE } from '../src/sequencer.js';

const roots: string[] = [];
function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'am-run-tools-'));
  roots.push(root);
  return root;
}
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('cachedBuild', () => {
  it('builds once per source version, and builds again when a file of the build was damaged', async () => {
    const packageRoot = tempRoot();
    let builds = 0;
    const options = {
      packageRoot,
      name: 'run-tools',
      build: async (dir: string) => {
        builds += 1;
        mkdirSync(join(dir, 'chunks'));
        writeFileSync(join(dir, 'main.js'), 'export const main = 1;\n');
        writeFileSync(join(dir, 'chunks', 'a.js'), 'export const a = 2;\n');
      },
    };
    const [first, concurrent] = await Promise.all([cachedBuild(options), cachedBuild(options)]);
    expect(concurrent).toBe(first);
    expect(builds).toBe(1);
    expect(readdirSync(first).sort()).toEqual([BUILD_MANIFEST, 'chunks', 'main.js']);

    // A later call: the whole build is reused.
    expect(await cachedBuild(options)).toBe(first);
    expect(builds).toBe(1);

    truncateSync(join(first, 'chunks', 'a.js'), 0);
    expect(await cachedBuild(options)).toBe(first);
    expect(builds, 'an emptied file makes the build be made anew').toBe(2);
    expect(readdirSync(join(packageRoot, 'node_modules', '.cache')), 'nothing set aside is left').toEqual([
      first.split('/').at(-1),
    ]);
  });

  it('removes a half-made build when the build throws, and builds on the next call', async () => {
    const packageRoot = tempRoot();
    let fail = true;
    const options = {
      packageRoot,
      name: 'run-tools-fails',
      build: async (dir: string) => {
        writeFileSync(join(dir, 'main.js'), 'half');
        if (fail) throw new Error('bundler failed');
      },
    };
    await expect(cachedBuild(options)).rejects.toThrow('bundler failed');
    expect(readdirSync(join(packageRoot, 'node_modules', '.cache'))).toEqual([]);
    fail = false;
    const dir = await cachedBuild(options);
    expect(readdirSync(dir).sort()).toEqual([BUILD_MANIFEST, 'main.js']);
  });
});

describe('readTestDurations', () => {
  const write = (root: string, text: string): void => {
    mkdirSync(join(root, '.ci'), { recursive: true });
    writeFileSync(join(root, TEST_DURATIONS_FILE), text);
  };

  it('reads an object of ms; a missing file is no figures, not a problem', () => {
    const root = tempRoot();
    expect(readTestDurations(root)).toEqual({ ok: true, durations: {} });
    write(root, JSON.stringify({ 'gateway packages/gateway/test/a.test.ts': 1200 }));
    expect(readTestDurations(root)).toEqual({
      ok: true,
      durations: { 'gateway packages/gateway/test/a.test.ts': 1200 },
    });
  });

  it.each([
    ['not JSON', '{ "broken": ', 'is not JSON'],
    ['null', 'null', 'must be an object'],
    ['an array', '[1, 2, 3]', 'must be an object'],
    ['a number', '42', 'must be an object'],
    ['a string of ms', JSON.stringify({ 'web packages/web/test/a.test.ts': '9532ms' }), 'not a number of ms'],
    ['a negative figure', JSON.stringify({ 'web packages/web/test/a.test.ts': -1 }), 'not a number of ms'],
  ])('%s: no figures, and a problem naming the file and how to restore it', (_, text, says) => {
    const root = tempRoot();
    write(root, text);
    const read = readTestDurations(root);
    expect(read.ok).toBe(false);
    expect(read.durations).toEqual({});
    if (read.ok) return;
    expect(read.problem).toContain(says);
    expect(read.problem).toContain(TEST_DURATIONS_FILE);
    expect(read.problem).toContain(`git checkout ${TEST_DURATIONS_FILE}`);
  });
});
