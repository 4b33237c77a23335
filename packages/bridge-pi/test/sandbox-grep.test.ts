import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatText } from '@agentmail/shared-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPiSdk } from '../src/pi-sdk.js';
import { findRipgrep, sandboxedGrep } from '../src/sandbox-grep.js';

// Which ripgrep pi's sandboxed grep runs, and what the model reads when there is none (the search
// itself, in bubblewrap, is tested in sandbox.test.ts).

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'am-pi-rg-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function executableAt(path: string): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, '#!/bin/sh\n');
  await chmod(path, 0o755);
  return path;
}

describe("pi's sandboxed grep: its ripgrep", () => {
  it("is pi's own copy in <agentDir>/bin first, then rg on PATH, else none (never downloaded)", async () => {
    const agentDir = join(dir, 'agent');
    const onPath = await executableAt(join(dir, 'path-bin', 'rg'));
    const env = { PATH: ['relative/bin', join(dir, 'path-bin')].join(':') };
    expect(findRipgrep(agentDir, env)).toBe(onPath);
    const own = await executableAt(join(agentDir, 'bin', 'rg'));
    expect(findRipgrep(agentDir, env)).toBe(own);
    expect(findRipgrep(join(dir, 'no-agent'), { PATH: join(dir, 'nowhere') })).toBeUndefined();
  });

  it('missing: the model reads why, in the turn locale, and how to search instead', async () => {
    const { sdk } = await importPiSdk();
    const agentDir = join(dir, 'no-agent');
    for (const locale of ['en', 'zh-CN'] as const)
      await expect(
        sandboxedGrep(
          sdk,
          { bwrap: '/nonexistent/bwrap', policy: { workspace: dir } },
          { agentDir, locale, cwd: dir, env: { PATH: join(dir, 'nowhere') } },
          { pattern: 'x' },
          undefined,
        ),
      ).rejects.toThrow(formatText('sandbox.grep.no_ripgrep', { dir: join(agentDir, 'bin') }, locale));
  });
});
