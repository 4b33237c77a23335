/**
 * One run of a host CLI (`runHostCli`) with real processes: the exit as the CLI left it (its code,
 * the signal that ended it, a CLI that cannot be run as a spawn error), and no run outliving its
 * driver (SPEC B-15): the group dies with the driver, even on SIGKILL, and what a crash left in the
 * run directory is ended by the next driver (`sweepHostRuns`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { runHostCli, sweepHostRuns } from '../src/host-cli.js';

const DRIVER = join(import.meta.dirname, 'fixtures', 'run-driver.ts');
const dir = mkdtempSync(join(tmpdir(), 'am-host-cli-'));
const children: ChildProcess[] = [];
// Unique durations name this file's tool commands (another run of the suite may be on the machine).
const tag = randomInt(100_000, 999_999);
const [bgSleep, ownSessionSleep, fgSleep] = [1, 2, 3].map((n) => `sleep 300.${tag}${n}`);
afterAll(() => {
  for (const child of children)
    if (child.pid !== undefined) {
      tryKill(-child.pid);
      tryKill(child.pid);
    }
  // What a failed test may have left (the command in a session of its own above all).
  for (const cmd of [bgSleep, ownSessionSleep, fgSleep])
    for (const pid of withCommand(cmd ?? '')) tryKill(pid);
  rmSync(dir, { recursive: true, force: true });
});

function tryKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** The pids whose process group is `pgid` (from /proc). */
function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] is the state: a zombie is dead, only not yet reaped.
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** The live pids whose command line is `cmdline`. */
function withCommand(cmdline: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return (
          readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() === cmdline &&
          !readFileSync(`/proc/${name}/stat`, 'utf8').includes(') Z ')
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Whether `pid` has exited (gone, or a zombie). */
function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return true;
  }
}

/** Resolves once `check` holds (polled every 50 ms), or throws naming `what` after `timeoutMs`. */
async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const base = { cwd: dir, env: process.env };

describe('runHostCli: the exit as the CLI left it', () => {
  it('reports the exit code and the output lines, and records the run only while it lasts', async () => {
    const runDir = join(dir, 'runs-code');
    const lines: string[] = [];
    let recordedDuring: string[] = [];
    const report = await runHostCli({
      ...base,
      bin: '/bin/sh',
      args: ['-c', 'echo one; echo two >&2; exit 3'],
      runDir,
      onLine: (line) => {
        lines.push(line);
        recordedDuring = readdirSync(runDir);
      },
    });
    expect(report).toMatchObject({ code: 3, signal: null, stderrTail: 'two' });
    expect(report.spawnError).toBeUndefined();
    expect(lines).toEqual(['one']);
    expect(recordedDuring).toEqual([`${report.pid}.json`]);
    expect(readdirSync(runDir), 'the record goes when the run settles').toEqual([]);
  });

  it('reports the signal that ended the CLI, not the guard’s exit', async () => {
    const report = await runHostCli({ ...base, bin: '/bin/sh', args: ['-c', 'kill -TERM $$'] });
    expect(report).toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it('a missing or non-executable CLI is a spawn error, and nothing was spawned', async () => {
    let spawned = 0;
    const missing = await runHostCli({
      ...base,
      bin: join(dir, 'no-such-cli'),
      args: [],
      onSpawn: () => spawned++,
    });
    expect(missing).toMatchObject({ code: null, spawnError: 'ENOENT' });
    expect(missing.stderrTail).toContain(`command ${join(dir, 'no-such-cli')}, working directory ${dir}`);
    const onPath = await runHostCli({
      ...base,
      bin: 'agentmail-no-such-cli',
      args: [],
      onSpawn: () => spawned++,
    });
    expect(onPath.spawnError).toBe('ENOENT');
    const plain = join(dir, 'not-executable');
    writeFileSync(plain, '#!/bin/sh\necho hi\n');
    chmodSync(plain, 0o644);
    const notExecutable = await runHostCli({ ...base, bin: plain, args: [], onSpawn: () => spawned++ });
    expect(notExecutable).toMatchObject({ code: null, spawnError: 'EACCES' });
    expect(spawned).toBe(0);
  });

  it('exit codes as the CLI left them, also above 128 (only 129–143 read as the signal)', async () => {
    for (const code of [200, 255]) {
      const report = await runHostCli({ ...base, bin: '/bin/sh', args: ['-c', `exit ${code}`] });
      expect(report, `exit ${code}`).toMatchObject({ code, signal: null, stderrTail: '' });
    }
  });

  it('onSpawn comes before the first output line', async () => {
    const order: string[] = [];
    await runHostCli({
      ...base,
      bin: 'echo',
      args: ['hi'],
      onSpawn: () => order.push('spawned'),
      onLine: (line) => order.push(line),
    });
    expect(order).toEqual(['spawned', 'hi']);
  });

  it('a stopped run goes whole: also a tool in a session of its own (B-15)', async () => {
    const stop = new AbortController();
    const [tool, own, fg] = [`sleep 310.${tag}1`, `sleep 310.${tag}2`, `sleep 310.${tag}3`];
    const report = await runHostCli({
      ...base,
      bin: '/bin/sh',
      args: ['-c', `${tool} & setsid ${own} & echo ready; ${fg}`],
      signal: stop.signal,
      killGraceMs: 1_000,
      onLine: (line) => {
        if (line === 'ready')
          void until('the tools run', () => withCommand(own).length === 1, 5_000).then(() => stop.abort());
      },
    });
    expect(report.stopped).toBe('abort');
    await until(
      'every process of the stopped run ended',
      () => [tool, own, fg].every((c) => withCommand(c).length === 0),
      2_000,
    );
  });

  it('a stop gives the CLI its SIGTERM and waits for it (the guard does not end it early)', async () => {
    const stop = new AbortController();
    const marker = join(dir, 'graceful');
    const report = await runHostCli({
      ...base,
      bin: '/bin/sh',
      // On SIGTERM the CLI takes a moment to finish, then says so.
      args: [
        '-c',
        `trap 'sleep 0.3; echo done > ${marker}; exit 0' TERM; echo ready; while :; do sleep 0.05; done`,
      ],
      signal: stop.signal,
      onLine: (line) => {
        if (line === 'ready') stop.abort();
      },
    });
    expect(report.stopped).toBe('abort');
    expect(existsSync(marker), 'the CLI finished its SIGTERM handler').toBe(true);
  });
});

describe('no run outlives its driver (SPEC B-15)', () => {
  it('kill -9 of the driver during a run → no process of the run is alive 2 s later', async () => {
    const runDir = join(dir, 'runs-crash');
    const driver = spawn(
      process.execPath,
      [
        '--conditions=@agentmail/source',
        '--import',
        'tsx',
        DRIVER,
        runDir,
        '/bin/sh',
        '-c',
        // Tool commands in the background, in a session of their own (out of the group's reach, as
        // Claude Code starts its Bash commands) and in the foreground.
        `${bgSleep} & setsid ${ownSessionSleep} & ${fgSleep}; wait`,
      ],
      // From the package: `--import tsx` resolves there.
      { stdio: ['ignore', 'pipe', 'inherit'], cwd: join(import.meta.dirname, '..') },
    );
    children.push(driver);
    const pgid = await new Promise<number>((resolve, reject) => {
      driver.once('exit', (code) => reject(new Error(`the driver exited (${code})`)));
      createInterface({ input: driver.stdout }).on('line', (line) => {
        const m = /^spawned (\d+)$/.exec(line);
        if (m) resolve(Number(m[1]));
      });
    });
    // The guard, its watcher, the CLI and two tool commands; the third in its own session.
    await until(
      'the run is up',
      () => groupMembers(pgid).length >= 5 && withCommand(ownSessionSleep ?? '').length === 1,
      10_000,
    );
    const exited = new Promise((resolve) => driver.once('exit', resolve));
    driver.kill('SIGKILL');
    await exited;
    await until(
      'every process of the run ended',
      () => groupMembers(pgid).length === 0 && withCommand(ownSessionSleep ?? '').length === 0,
      2_000,
    ).catch((err: Error) => {
      const left = [...groupMembers(pgid), ...withCommand(ownSessionSleep ?? '')].map((pid) => {
        try {
          return `${pid}: ${readFileSync(`/proc/${pid}/stat`, 'utf8').slice(0, 80)}`;
        } catch {
          return `${pid}: gone`;
        }
      });
      throw new Error(`${err.message}; left: ${left.join(' | ')}`);
    });
    // The crashed driver left its record; the next one finds nothing alive and clears it.
    expect(readdirSync(runDir)).toEqual([`${pgid}.json`]);
    expect(sweepHostRuns(runDir)).toEqual([]);
    expect(readdirSync(runDir)).toEqual([]);
  }, 30_000);

  it('the next driver ends a recorded run whose group is still alive, and leaves a reused pid alone', async () => {
    const runDir = join(dir, 'runs-sweep');
    // Groups that escaped the lifeline (the guard itself was killed, its members were not).
    const leftover = spawn('/bin/sh', ['-c', `${bgSleep} & exec ${fgSleep}`], {
      detached: true,
      stdio: 'ignore',
    });
    const stranger = spawn('sleep', [`302.${tag}`], { detached: true, stdio: 'ignore' });
    children.push(leftover, stranger);
    const [lp, sp] = [leftover.pid ?? -1, stranger.pid ?? -1];
    await until(
      'both groups are up',
      () => groupMembers(lp).length === 2 && groupMembers(sp).length === 1,
      5_000,
    );
    const start = (pid: number): string => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
    };
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, `${lp}.json`), JSON.stringify({ pgid: lp, start: start(lp) }));
    // The record of a run whose pid now leads another group (another start time).
    writeFileSync(join(runDir, `${sp}.json`), JSON.stringify({ pgid: sp, start: '1' }));
    writeFileSync(join(runDir, 'torn.json'), '{"pgid":');
    // Not a file: looked at, never a throw.
    mkdirSync(join(runDir, 'odd.json'));
    // A group whose leader is gone (another run's, under a reused id?): not provably the run's.
    const orphaned = spawn('/bin/sh', ['-c', `sleep 303.${tag} & exit 0`], {
      detached: true,
      stdio: 'ignore',
    });
    const op = orphaned.pid ?? -1;
    await until(
      'the orphaned group is up',
      () => withCommand(`sleep 303.${tag}`).length === 1 && processGone(op),
      5_000,
    );
    writeFileSync(join(runDir, `${op}.json`), JSON.stringify({ pgid: op, start: '12345' }));
    const found = sweepHostRuns(runDir).sort((a, b) => a.pgid - b.pgid);
    expect(found).toEqual(
      [
        { pgid: lp, outcome: 'ended' },
        { pgid: op, outcome: 'unverifiable' },
      ].sort((a, b) => a.pgid - b.pgid),
    );
    expect(withCommand(`sleep 303.${tag}`), 'the leaderless group is left alone').toHaveLength(1);
    for (const pid of withCommand(`sleep 303.${tag}`)) tryKill(pid);
    await until('the leftover group ended', () => groupMembers(lp).length === 0, 2_000);
    expect(groupMembers(sp), 'the other process is not touched').toEqual([sp]);
    expect(readdirSync(runDir), 'every record is cleared').toEqual(['odd.json']);
  });
});
