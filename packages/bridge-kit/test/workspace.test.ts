import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasErrorCode } from '@agentmail/shared-policy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fallbackDirName, resolveWorkspace } from '../src/workspace.js';

let dir: string;
let root: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'am-ws-'));
  root = join(dir, 'fallback');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

describe('resolveWorkspace (B-3)', () => {
  it('uses the address path when it is absolute and an existing directory', async () => {
    const project = join(dir, 'project');
    await mkdir(project);
    expect(await resolveWorkspace({ addressPath: project, fallbackRoot: root, sessionKey: 's1' })).toEqual({
      cwd: project,
      usedFallback: false,
    });
    expect(await exists(root)).toBe(false);
  });

  it('never creates a missing address directory; falls back to a per-session directory', async () => {
    const typo = join(dir, 'projcet');
    const r = await resolveWorkspace({ addressPath: typo, fallbackRoot: root, sessionKey: 's1' });
    expect(await exists(typo)).toBe(false);
    expect(r.usedFallback).toBe(true);
    expect(r.reason).toBe('missing');
    expect(r.cwd.startsWith(`${root}/`)).toBe(true);
    expect((await stat(r.cwd)).isDirectory()).toBe(true);
  });

  it('falls back for a relative path, an empty path and a file', async () => {
    const file = join(dir, 'file.txt');
    await writeFile(file, 'x');
    const cases: Array<[string | undefined, string]> = [
      ['src/app', 'relative_path'],
      ['', 'no_path'],
      [undefined, 'no_path'],
      [file, 'not_directory'],
      [join(file, 'sub'), 'missing'],
    ];
    for (const [addressPath, reason] of cases) {
      const r = await resolveWorkspace({ addressPath, fallbackRoot: root, sessionKey: 's1' });
      expect(r, String(addressPath)).toMatchObject({ usedFallback: true, reason });
    }
    expect(await exists(join(process.cwd(), 'src/app'))).toBe(false);
  });

  it('gives each session its own fallback directory, the same one every time', async () => {
    const a1 = await resolveWorkspace({ addressPath: '', fallbackRoot: root, sessionKey: 'a' });
    const a2 = await resolveWorkspace({ addressPath: '', fallbackRoot: root, sessionKey: 'a' });
    const b = await resolveWorkspace({ addressPath: '', fallbackRoot: root, sessionKey: 'b' });
    expect(a1.cwd).toBe(a2.cwd);
    expect(a1.cwd).not.toBe(b.cwd);
    expect((await readdir(root)).length).toBe(2);
  });

  it('sanitises the session key: no escape from the root, distinct keys stay distinct', async () => {
    for (const key of ['../../etc', '/abs/path', 'a/b', 'a:b', '.hidden', '', '会话 一']) {
      const r = await resolveWorkspace({ addressPath: '', fallbackRoot: root, sessionKey: key });
      expect(r.cwd.startsWith(`${root}/`), key).toBe(true);
      expect(r.cwd.slice(root.length + 1), key).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
    }
    expect(fallbackDirName('a/b')).not.toBe(fallbackDirName('a:b'));
    expect(fallbackDirName('pi-fix-imports')).toMatch(/^pi-fix-imports-[0-9a-f]{8}$/);
  });

  it('refuses a relative fallback root', async () => {
    await expect(
      resolveWorkspace({ addressPath: '', fallbackRoot: 'ws', sessionKey: 's' }),
    ).rejects.toSatisfy((e) => hasErrorCode(e, 'AM_WORKSPACE_ROOT_RELATIVE'));
  });

  it('reports a fallback root it cannot create', async () => {
    const blocker = join(dir, 'blocker');
    await writeFile(blocker, 'x');
    await expect(
      resolveWorkspace({ addressPath: '', fallbackRoot: join(blocker, 'ws'), sessionKey: 's' }),
    ).rejects.toSatisfy((e) => hasErrorCode(e, 'AM_WORKSPACE_FALLBACK_FAILED'));
  });
});
