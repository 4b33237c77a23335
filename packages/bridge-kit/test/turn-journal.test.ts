/** The started-turn record (SPEC B-10, B-14): one file per mail id, whatever the id holds. */
import { mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StartedTurns } from '../src/turn-journal.js';

const dir = mkdtempSync(join(tmpdir(), 'am-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('StartedTurns', () => {
  it('keeps any id apart: dots, separators, very long ids', () => {
    const journal = new StartedTurns(dir);
    const ids = ['.', '..', 'a/b', '../../x', 'm_01ABC', 'x'.repeat(400), 'y'.repeat(400)];
    for (const id of ids) expect(journal.has(id), id.slice(0, 10)).toBe(false);
    for (const id of ids) journal.add(id);
    for (const id of ids) expect(journal.has(id), id.slice(0, 10)).toBe(true);
    expect(readdirSync(join(dir, 'turns-started'))).toHaveLength(ids.length);
    for (const id of ids) journal.delete(id);
    for (const id of ids) expect(journal.has(id)).toBe(false);
    expect(readdirSync(join(dir, 'turns-started'))).toEqual([]);
  });

  it('drops records older than its age limit when opened', () => {
    const journal = new StartedTurns(dir);
    journal.add('old');
    journal.add('new');
    const file = join(dir, 'turns-started', 'old');
    const weekAgo = (Date.now() - 8 * 24 * 3600_000) / 1000;
    utimesSync(file, weekAgo, weekAgo);
    const reopened = new StartedTurns(dir);
    expect([reopened.has('old'), reopened.has('new')]).toEqual([false, true]);
  });
});
