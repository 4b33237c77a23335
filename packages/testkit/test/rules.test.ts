/**
 * docs/RULES.md stays the index of the rule ids the repository cites (issue 21: code, tests and
 * docs cited the behaviour brief's ids some 1,240 times, and the brief is not in the repository):
 *
 * - every id a file of the working tree cites (a range `X-1..X-3` cites each id in between) has an
 *   entry in RULES.md;
 * - every entry is cited by some other file (no stale entries);
 * - every test file an entry lists exists, is a test file and cites that id; an entry says
 *   "no test yet" only while no test file cites it;
 * - every other repository path RULES.md names in backticks (code, docs) exists.
 *
 * RULES.md itself and this file are not citations. Files are read as docs.test.ts reads them:
 * what git tracks or would track in the working tree.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, readRepoFile, workingTreeFiles } from './support/working-tree.js';

const RULES = 'docs/RULES.md';
const SELF = 'packages/testkit/test/rules.test.ts';

/** A rule id or a range of them (`X-1..X-3`, `X-1–X-3`); the prefixes are the brief's. */
const CITATION = /\b([GPBH])-(\d+)(?:\s*(?:\.\.|–)\s*(?:\1-)?(\d+))?\b/g;

/** Files that cannot cite anything. */
const BINARY = /\.(?:png|jpe?g|gif|ico|webp|woff2?|svg)$/;

/** A test file: a vitest file, or the conformance suite every bridge's conformance test runs. */
const isTestFile = (file: string): boolean =>
  /\.test\.tsx?$/.test(file) || file.startsWith('packages/testkit/src/conformance/');

/** Where an id is cited: `file:line`. */
interface Citation {
  file: string;
  line: number;
}

/** The ids `text` cites, with the 1-based line of each citation. */
function citationsIn(text: string): Array<{ id: string; line: number }> {
  const out: Array<{ id: string; line: number }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++)
    for (const m of (lines[i] ?? '').matchAll(CITATION)) {
      const first = Number(m[2]);
      const last = m[3] === undefined ? first : Number(m[3]);
      for (let n = first; n <= Math.max(first, last); n++) out.push({ id: `${m[1]}-${n}`, line: i + 1 });
    }
  return out;
}

/** Every citation of the working tree outside RULES.md and this file, by id. */
function citations(): Map<string, Citation[]> {
  const byId = new Map<string, Citation[]>();
  for (const file of workingTreeFiles()) {
    if (file === RULES || file === SELF || BINARY.test(file)) continue;
    for (const { id, line } of citationsIn(readRepoFile(file))) {
      const list = byId.get(id) ?? [];
      list.push({ file, line });
      byId.set(id, list);
    }
  }
  return byId;
}

/** One entry of RULES.md: `- **X-n** statement` and its `  - tests: …` line. */
interface Entry {
  id: string;
  /** 1-based line of the entry in RULES.md. */
  line: number;
  /** The test files it lists; `undefined` for "no test yet". */
  tests: string[] | undefined;
  /** What is wrong with its shape, if anything. */
  problem?: string;
}

/** The entries of RULES.md, in order. */
function entries(text: string): Entry[] {
  const lines = text.split('\n');
  const out: Entry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const head = /^- \*\*([GPBH]-\d+)\*\* \S/.exec(lines[i] ?? '');
    if (!head) continue;
    // The entry runs over its indented lines; the tests line and its own continuations close it.
    let end = i + 1;
    while (end < lines.length && /^ {2}/.test(lines[end] ?? '')) end++;
    const body = lines.slice(i + 1, end);
    const at = body.findIndex((l) => /^ {2}- tests:/.test(l));
    const entry: Entry = { id: head[1] ?? '', line: i + 1, tests: [] };
    if (at === -1) entry.problem = 'has no "  - tests: …" line';
    else if (body.filter((l) => /^ {2}- tests:/.test(l)).length > 1) entry.problem = 'has two tests lines';
    else {
      const tests = body
        .slice(at)
        .join(' ')
        .replace(/^\s*- tests:\s*/, '');
      if (/^no test yet\s*$/.test(tests)) entry.tests = undefined;
      else {
        entry.tests = [...tests.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
        if (entry.tests.length === 0) entry.problem = 'lists no test file (write "no test yet" if none)';
      }
    }
    out.push(entry);
  }
  return out;
}

const TEXT = readRepoFile(RULES);
const ENTRIES = entries(TEXT);
const CITED = citations();
const where = (id: string): string =>
  (CITED.get(id) ?? [])
    .slice(0, 3)
    .map((c) => `${c.file}:${c.line}`)
    .join(', ');

describe('docs/RULES.md links every cited rule id to its statement and its tests', () => {
  it('finds the entries and the citations (the parsers are not blind)', () => {
    expect(ENTRIES.length).toBeGreaterThan(50);
    expect(CITED.size).toBeGreaterThan(50);
    expect(ENTRIES.filter((e) => e.problem).map((e) => `${RULES}:${e.line} ${e.id} ${e.problem}`)).toEqual(
      [],
    );
    const twice = ENTRIES.filter((e, i) => ENTRIES.findIndex((o) => o.id === e.id) !== i);
    expect(
      twice.map((e) => `${RULES}:${e.line}: a second entry for ${e.id}`),
      'one entry per id',
    ).toEqual([]);
  });

  it('every id cited in code, tests or docs has an entry', () => {
    const known = new Set(ENTRIES.map((e) => e.id));
    const missing = [...CITED.keys()]
      .filter((id) => !known.has(id))
      .sort()
      .map((id) => `${id} (cited at ${where(id)}) has no entry in ${RULES}: add one, or fix the citation`);
    expect(missing).toEqual([]);
  });

  it('every entry is cited somewhere else (none stale)', () => {
    const stale = ENTRIES.filter((e) => !CITED.has(e.id)).map(
      (e) => `${RULES}:${e.line}: ${e.id} is cited by no other file: remove the entry`,
    );
    expect(stale).toEqual([]);
  });

  it('every test file an entry lists exists, is a test file and cites its id', () => {
    const wrong: string[] = [];
    for (const e of ENTRIES) {
      const citing = new Set((CITED.get(e.id) ?? []).map((c) => c.file).filter(isTestFile));
      if (e.tests === undefined) {
        if (citing.size > 0)
          wrong.push(
            `${RULES}:${e.line}: ${e.id} says "no test yet", but ${[...citing].join(', ')} cite(s) it`,
          );
        continue;
      }
      for (const file of e.tests) {
        if (!existsSync(join(REPO, file)))
          wrong.push(`${RULES}:${e.line}: ${e.id} lists ${file}, which does not exist`);
        else if (!isTestFile(file))
          wrong.push(`${RULES}:${e.line}: ${e.id} lists ${file}, which is not a test file`);
        else if (!citing.has(file))
          wrong.push(`${RULES}:${e.line}: ${e.id} lists ${file}, which does not cite ${e.id}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('every other repository path it names exists (code, docs)', () => {
    const tests = new Set(ENTRIES.flatMap((e) => e.tests ?? []));
    const lines = TEXT.split('\n');
    const missing: string[] = [];
    for (let i = 0; i < lines.length; i++)
      for (const m of (lines[i] ?? '').matchAll(/`((?:packages|docs|examples|deploy|scripts)\/[^`\s]*)`/g)) {
        const path = m[1] ?? '';
        if (!tests.has(path) && !existsSync(join(REPO, path)))
          missing.push(`${RULES}:${i + 1}: ${path} does not exist`);
      }
    expect(missing).toEqual([]);
  });
});
