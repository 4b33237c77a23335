import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasErrorCode } from '@agentmail/shared-policy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GrantStore } from '../src/grant-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'am-grants-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('GrantStore (P-4)', () => {
  it('remembers "always" per (session, tool) in memory', async () => {
    const grants = new GrantStore();
    await grants.grant('s1', 'bash');
    expect(await grants.has('s1', 'bash')).toBe(true);
    expect(await grants.has('s1', 'write')).toBe(false);
    expect(await grants.has('s2', 'bash')).toBe(false);
  });

  it('a plain approval is one call only; only approve_always is stored', async () => {
    const grants = new GrantStore();
    await grants.record('s1', 'bash', 'approve_once');
    await grants.record('s1', 'write', 'deny');
    expect(await grants.has('s1', 'bash')).toBe(false);
    expect(await grants.has('s1', 'write')).toBe(false);
    await grants.record('s1', 'bash', 'approve_always');
    expect(await grants.has('s1', 'bash')).toBe(true);
  });

  it('a grant written by one process is seen by another (a fresh store on the same file)', async () => {
    const file = join(dir, 'state', 'grants.json');
    const hookA = new GrantStore({ file });
    await hookA.grant('s1', 'Bash');
    const hookB = new GrantStore({ file }); // a later short-lived hook process
    expect(await hookB.has('s1', 'Bash')).toBe(true);
    expect(await hookB.has('s1', 'Write')).toBe(false);
    // and B's grant is merged with A's, not written over it
    await hookB.grant('s2', 'Write');
    const hookC = new GrantStore({ file });
    expect(await hookC.has('s1', 'Bash')).toBe(true);
    expect(await hookC.has('s2', 'Write')).toBe(true);
  });

  it('a store sees grants another process added after its own first read', async () => {
    const file = join(dir, 'grants.json');
    const longLived = new GrantStore({ file });
    expect(await longLived.has('s1', 'bash')).toBe(false);
    await new GrantStore({ file }).grant('s1', 'bash');
    expect(await longLived.has('s1', 'bash')).toBe(true);
  });

  it('writes atomically: temp file + rename (the file is replaced, no temp left behind)', async () => {
    const file = join(dir, 'grants.json');
    const grants = new GrantStore({ file });
    await grants.grant('s1', 'bash');
    const before = await stat(file);
    await grants.grant('s1', 'edit');
    const after = await stat(file);
    expect(after.ino).not.toBe(before.ino); // rename put a new file in place; an in-place write keeps the inode
    expect(await readdir(dir)).toEqual(['grants.json']);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      grants: { s1: ['bash', 'edit'] },
    });
  });

  it('concurrent grants in one process are all kept', async () => {
    const file = join(dir, 'grants.json');
    const grants = new GrantStore({ file });
    await Promise.all(['a', 'b', 'c', 'd'].map((t) => grants.grant('s1', t)));
    const fresh = new GrantStore({ file });
    for (const t of ['a', 'b', 'c', 'd']) expect(await fresh.has('s1', t)).toBe(true);
  });

  it('a corrupt grant file counts as no grants (fail closed) and is repaired by the next grant', async () => {
    const file = join(dir, 'grants.json');
    await writeFile(file, '{"version":1,"grants":{"s1":["bash"');
    const grants = new GrantStore({ file });
    expect(await grants.has('s1', 'bash')).toBe(false);
    await grants.grant('s1', 'edit');
    expect(JSON.parse(await readFile(file, 'utf8')).grants).toEqual({ s1: ['edit'] });
  });

  it('refuses a relative file path', () => {
    expect(() => new GrantStore({ file: 'grants.json' })).toThrow(/absolute/);
    try {
      new GrantStore({ file: 'grants.json' });
    } catch (err) {
      expect(hasErrorCode(err, 'AM_STATE_FILE_RELATIVE')).toBe(true);
    }
  });

  it('an unwritable grant file fails with AM_GRANT_WRITE_FAILED but keeps the grant in memory', async () => {
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    const grants = new GrantStore({ file: join(blocker, 'grants.json') });
    await expect(grants.grant('s1', 'bash')).rejects.toSatisfy((e) =>
      hasErrorCode(e, 'AM_GRANT_WRITE_FAILED'),
    );
    expect(await grants.has('s1', 'bash')).toBe(true);
  });
});
