import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BwrapArgsFor,
  bwrapArgs,
  CANARIES,
  type CanaryId,
  findBubblewrap,
  hostFacts,
  pathSockets,
  type SandboxPolicy,
  sandboxExec,
  sandboxRefusal,
  verifySandbox,
} from '../src/index.js';

// The sandbox on the real bubblewrap (Debian `bubblewrap`; .ci/run installs it): the self-check's
// canaries hold on the kit's confinement, and each one turns red when a test weakens the
// confinement on purpose (SPEC P-12) — a verifier that cannot fail proves nothing.

const BWRAP = findBubblewrap();
if (!BWRAP) throw new Error('bwrap not found on PATH: apt-get install --no-install-recommends bubblewrap');

let checkDir: string;
beforeAll(async () => {
  // On the real filesystem, outside the places every sandbox makes private (/tmp, /var/tmp).
  await mkdir(join(homedir(), '.cache'), { recursive: true });
  checkDir = await mkdtemp(join(homedir(), '.cache', 'am-sandbox-test-'));
});
afterAll(() => rm(checkDir, { recursive: true, force: true }));

const policyFor = (workspace: string): SandboxPolicy => ({ workspace });

/** Remove every `flag a b` triple whose first path matches. */
function without(args: string[], flag: string, match: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const target = flag === '--tmpfs' ? args[i + 1] : args[i + 2];
    if (args[i] === flag && target !== undefined && match(target)) {
      i += flag === '--tmpfs' ? 1 : 2;
      continue;
    }
    out.push(args[i] as string);
  }
  return out;
}

const replaceUnshare = (args: string[], instead: string[]): string[] =>
  args.flatMap((a) => (a === '--unshare-all' ? instead : [a]));

/** What `--unshare-all` does, one namespace left shared. */
const unshareAllBut = (shared: 'net' | 'pid'): string[] =>
  [
    '--unshare-user-try',
    '--unshare-ipc',
    '--unshare-net',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
  ].filter((a) => a !== `--unshare-${shared}`);

/** Each canary with the weakening that must turn it red. */
const WEAKENED: Record<CanaryId, BwrapArgsFor> = {
  workspace_writable: (p, f) => without(bwrapArgs(p, f), '--bind', (t) => t === p.workspace),
  // Binds / read-write: a write outside the workspace lands.
  write_outside: (p, f) => {
    const a = bwrapArgs(p, f);
    return a[0] === '--ro-bind' && a[1] === '/' ? ['--bind', '/', '/', ...a.slice(3)] : a;
  },
  // The place the workspace's symlink points to, bound read-write.
  symlink_out: (p, f) => {
    const outside = join(p.workspace, '..', 'outside');
    return replaceUnshare(bwrapArgs(p, f), ['--bind', outside, outside, '--unshare-all']);
  },
  git_hooks: (p, f) => without(bwrapArgs(p, f), '--ro-bind', (t) => t.endsWith('/.git')),
  secrets: (p, f) => without(bwrapArgs(p, f), '--tmpfs', (t) => t.endsWith('/secret')),
  egress: (p, f) => replaceUnshare(bwrapArgs(p, f), unshareAllBut('net')),
  host_sockets: (p, f) => {
    const a = bwrapArgs(p, f);
    const out: string[] = [];
    for (let i = 0; i < a.length; i++) {
      if (a[i] === '--ro-bind' && a[i + 1] === '/dev/null' && a[i + 2]?.endsWith('.sock')) {
        i += 2;
        continue;
      }
      out.push(a[i] as string);
    }
    return out;
  },
  pid_namespace: (p, f) => replaceUnshare(bwrapArgs(p, f), unshareAllBut('pid')),
  // Root keeps its capabilities in bwrap's namespace unless they are dropped (this suite runs as
  // root in CI; an unprivileged bwrap has none to begin with).
  capabilities: (p, f) =>
    bwrapArgs(p, f).filter((a, i, all) => a !== '--cap-drop' && all[i - 1] !== '--cap-drop'),
  // A fresh procfs without the read-only cover: root may write the host's kernel settings.
  kernel_settings: (p, f) => without(bwrapArgs(p, f), '--ro-bind', (t) => t === '/proc/sys'),
};

describe('the sandbox self-check on the real bubblewrap (SPEC P-12)', () => {
  it('every canary holds on the kit confinement: verified', async () => {
    const check = await verifySandbox({ policyFor, checkDir });
    expect(check.canaries.map((c) => c.id)).toEqual([...CANARIES]);
    expect(
      check.canaries.filter((c) => !c.ok),
      JSON.stringify(check.canaries),
    ).toEqual([]);
    expect(check.state).toEqual({ verified: true });
    expect(check.bwrap).toBe(BWRAP);
  });

  // One after the other: each check's canary socket is a host socket the others would mask, and
  // it is gone once that check ends (a vanished mount point fails bubblewrap's start).
  it.each(CANARIES.map((id) => [id]))(
    'canary %s turns red when the confinement is weakened for it: unverified, with the reason',
    async (id) => {
      const check = await verifySandbox({ policyFor, checkDir, argsFor: WEAKENED[id as CanaryId] });
      expect(check.canaries.find((c) => c.id === id)?.ok, JSON.stringify(check)).toBe(false);
      expect(check.state.verified).toBe(false);
      if (!check.state.verified) expect(check.state.reason).toMatch(/^canary \w+ failed: /);
    },
  );

  it('without bubblewrap on PATH: unverified, saying what to install', async () => {
    const check = await verifySandbox({ policyFor, checkDir, env: { ...process.env, PATH: '/nonexistent' } });
    expect(check.state).toEqual({
      verified: false,
      reason: 'bubblewrap (bwrap) not found on PATH: install Debian package bubblewrap',
    });
  });

  it('a secret the caller names (the agent key file) is part of the check', async () => {
    const key = join(checkDir, 'agent.key');
    await writeFile(key, 'amk_secret');
    const open = await verifySandbox({ policyFor, checkDir, secrets: [key] });
    expect(
      open.canaries.find((c) => c.id === 'secrets')?.ok,
      'a key the policy does not hide is caught',
    ).toBe(false);
    const hidden = await verifySandbox({
      policyFor: (ws) => ({ workspace: ws, hidden: [key] }),
      checkDir,
      secrets: [key],
    });
    expect(hidden.state).toEqual({ verified: true });
  });
});

describe('sandboxExec: a command in the confinement', () => {
  let ws: string;
  beforeAll(async () => {
    ws = await mkdtemp(join(checkDir, 'ws-'));
  });

  it('writes in the workspace; a write outside fails with EROFS, its words reach the caller; the exit code comes back', async () => {
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
    };
    const inside = await sandboxExec(
      { bwrap: BWRAP, policy: { workspace: ws } },
      'echo hi > in.txt && cat in.txt',
      {
        onData,
      },
    );
    expect(inside.exitCode).toBe(0);
    expect(readFileSync(join(ws, 'in.txt'), 'utf8')).toBe('hi\n');
    const target = join(checkDir, 'outside.txt');
    const outside = await sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, `echo x > ${target}`, {
      onData,
    });
    expect(outside.exitCode).not.toBe(0);
    expect(out).toMatch(/Read-only file system/);
    expect(existsSync(target)).toBe(false);
  });

  it('stdout and stderr also come apart (a tool reads its output and its errors separately)', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const run = await sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, 'echo out; echo err >&2', {
      onStdout: (d) => out.push(d.toString()),
      onStderr: (d) => err.push(d.toString()),
    });
    expect(run.exitCode).toBe(0);
    expect(out.join('')).toBe('out\n');
    expect(err.join('')).toBe('err\n');
  });

  it('regression (CI): bubblewrap\'s failure line in several chunks ("bwrap: ", then the words) is still seen as a vanished place', async () => {
    const gone = join(checkDir, 'gone-split', 'host.sock');
    const marker = join(checkDir, 'split-once');
    // A bubblewrap that, the first time, says its failure in two writes apart, as a loaded machine
    // delivers them; then runs the real one without the mask of the vanished place.
    const fake = join(checkDir, 'split-bwrap.sh');
    writeFileSync(
      fake,
      `#!/bin/sh\nif [ ! -e '${marker}' ]; then : > '${marker}'; printf 'bwrap: ' >&2; sleep 0.2; printf "Can't mkdir parents for ${gone}: Read-only file system\\n" >&2; exit 1; fi\n` +
        `exec '${BWRAP}' "$@"\n`,
      { mode: 0o755 },
    );
    let builds = 0;
    const masked: BwrapArgsFor = (policy, facts) => {
      builds += 1;
      const args = bwrapArgs(policy, facts);
      return builds === 1 ? [...args, '--ro-bind', '/dev/null', gone] : args;
    };
    let out = '';
    let said = '';
    const run = await sandboxExec({ bwrap: fake, policy: { workspace: ws } }, 'echo ran', {
      onStdout: (d) => {
        out += d.toString();
      },
      onStderr: (d) => {
        said += d.toString();
      },
      argsFor: masked,
    });
    expect(said, 'the first failure is not shown').toBe('');
    expect(run.exitCode).toBe(0);
    expect(builds).toBe(2);
    expect(out).toBe('ran\n');
  });

  it('a place to mask that vanished before bubblewrap started (a host socket removed meanwhile): tried once more, unseen; not forever', async () => {
    // The race: the host's socket table listed a socket, it was removed before bwrap mounted
    // /dev/null over it, and bwrap cannot make the mount point on the read-only root.
    const gone = join(checkDir, 'gone', 'host.sock');
    let builds = 0;
    const vanishedOnce: BwrapArgsFor = (policy, facts) => {
      builds += 1;
      const args = bwrapArgs(policy, facts);
      return builds === 1 ? [...args, '--ro-bind', '/dev/null', gone] : args;
    };
    let out = '';
    const run = await sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, 'echo ran', {
      onData: (d) => {
        out += d.toString();
      },
      argsFor: vanishedOnce,
    });
    expect(run.exitCode).toBe(0);
    expect(builds, 'the arguments were built again').toBe(2);
    expect(out, 'the failed start is not shown').toBe('ran\n');

    const vanishedAlways: BwrapArgsFor = (policy, facts) => [
      ...bwrapArgs(policy, facts),
      '--ro-bind',
      '/dev/null',
      gone,
    ];
    let said = '';
    const failed = await sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, 'echo ran', {
      onStderr: (d) => {
        said += d.toString();
      },
      argsFor: vanishedAlways,
    });
    expect(failed.exitCode).toBe(1);
    expect(said, 'the second failure is reported, once').toBe(
      `bwrap: Can't mkdir parents for ${gone}: Read-only file system\n`,
    );
  });

  it('an abort kills the command (its process group), a timeout too', async () => {
    const stop = new AbortController();
    const running = sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, 'echo started; sleep 30', {
      signal: stop.signal,
      onData: () => stop.abort(),
    });
    expect((await running).exitCode).toBe(137);
    const timed = await sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, 'sleep 30', {
      timeout: 0.5,
    });
    expect(timed.exitCode).toBe(137);
  });

  it('a working directory outside the workspace is refused before anything runs', async () => {
    await expect(
      sandboxExec({ bwrap: BWRAP, policy: { workspace: ws } }, 'true', { cwd: '/etc' }),
    ).rejects.toThrow(/outside the workspace/);
  });
});

describe('what the sandbox refuses to hold (P-12)', () => {
  it('a workspace of /, one holding the home directory or a hidden place: no sandbox (the turn asks per call)', () => {
    const facts = { ...hostFacts(), home: '/home/me' };
    const job = { bwrap: BWRAP, confines: ['bash'], hidden: ['/var/lib/agentmail/pi'] };
    expect(sandboxRefusal(job, '/', facts)).toBe('the workspace is / (everything would be writable)');
    expect(sandboxRefusal(job, '/home', facts)).toBe('the workspace /home is a top-level directory');
    expect(sandboxRefusal(job, '/srv/users', { ...facts, home: '/srv/users/me' })).toBe(
      'the workspace /srv/users holds the home directory /srv/users/me',
    );
    expect(sandboxRefusal({ ...job, hidden: ['/srv/agentmail/pi'] }, '/srv/agentmail', facts)).toBe(
      'the workspace /srv/agentmail holds /srv/agentmail/pi, which the sandbox hides',
    );
    expect(sandboxRefusal(job, '/home/me/project', facts)).toBeUndefined();
    expect(() => bwrapArgs({ workspace: '/' }, facts)).toThrow(/the workspace is \//);
  });

  it('path sockets are read from /proc/net/unix whole, spaces in the path included', () => {
    const table = join(checkDir, 'unix');
    writeFileSync(
      table,
      [
        'Num       RefCount Protocol Flags    Type St Inode Path',
        '0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/docker.sock',
        '0000000000000000: 00000002 00000000 00010000 0001 01 12346 /home/me/sp ace/s.sock',
        '0000000000000000: 00000003 00000000 00000000 0001 03 12347',
        '0000000000000000: 00000002 00000000 00010000 0001 01 12348 @abstract',
      ].join('\n'),
    );
    expect(pathSockets(table)).toEqual(['/run/docker.sock', '/home/me/sp ace/s.sock']);
  });
});
