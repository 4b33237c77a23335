import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findPiSessionFile, listPiSessions, mailSessionFile, readFirstLine } from '../src/session-files.js';

const roots: string[] = [];
function agentDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'pi-sessions-'));
  roots.push(root);
  return root;
}
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function writeSession(
  dir: string,
  name: string,
  id: string,
  cwd: string,
  rest: string,
  mtimeS: number,
): string {
  const folder = join(dir, 'sessions', '--srv-app--');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, name);
  writeFileSync(path, `${JSON.stringify({ type: 'session', version: 3, id, timestamp: 't', cwd })}\n${rest}`);
  utimesSync(path, mtimeS, mtimeS);
  return path;
}

describe('pi session files (SPEC G-25, B-4, §7 pi: first lines only)', () => {
  it('lists sessions newest first from the header line, ignoring a broken rest of the file', async () => {
    const dir = agentDir();
    writeSession(dir, 'a.jsonl', 'id-old', '/srv/app', '{not json at all', 1_000);
    writeSession(dir, 'b.jsonl', 'id-new', '/srv/other', '', 2_000);
    writeFileSync(join(dir, 'sessions', '--srv-app--', 'junk.jsonl'), 'garbage\n');
    const list = await listPiSessions(dir);
    expect(list?.map((s) => [s.platform_id, s.path])).toEqual([
      ['id-new', '/srv/other'],
      ['id-old', '/srv/app'],
    ]);
  });

  it('answers [] for a missing session folder (really empty) and caps the count', async () => {
    const dir = agentDir();
    expect(await listPiSessions(dir)).toEqual([]);
    for (let i = 0; i < 5; i++) writeSession(dir, `${i}.jsonl`, `id-${i}`, '/x', '', 1_000 + i);
    expect(await listPiSessions(dir, 3)).toHaveLength(3);
  });

  it('reads only the first line, even of a file with a huge second line', async () => {
    const dir = agentDir();
    const path = writeSession(dir, 'big.jsonl', 'id-big', '/srv/app', 'x'.repeat(2_000_000), 1_000);
    expect(JSON.parse(await readFirstLine(path)).id).toBe('id-big');
    expect(await findPiSessionFile(dir, 'id-big')).toBe(path);
    expect(await findPiSessionFile(dir, 'gone')).toBeUndefined();
  });

  it('maps a Gateway session id to a stable file that cannot climb out of the data dir', () => {
    expect(mailSessionFile('/data', 's_1')).toBe(mailSessionFile('/data', 's_1'));
    expect(mailSessionFile('/data', '../../etc/passwd').startsWith('/data/sessions/')).toBe(true);
  });
});
