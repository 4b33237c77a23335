/**
 * One run of a host's headless CLI (`claude -p`, `zcode --prompt`), as every driver of such a host
 * needs it: spawned in its own process group with stdin `/dev/null` (an open stdin pipe makes some
 * hosts wait for input), its stdout read line by line, its stderr tail kept for the failure cause,
 * and stopped as a group — SIGTERM, then SIGKILL after a grace period — when its signal aborts
 * (turn timeout, shutdown: SPEC B-7, B-15) or when the driver's setup check on a line fails. The
 * report always settles, also when the host hangs or dies without its final line.
 *
 * A run does not outlive its driver (B-15): it starts under a small `/bin/sh` guard that leads
 * the process group and holds a lifeline to the driver (a socket the driver never writes). When
 * the driver dies, even by SIGKILL, the kernel closes the driver's end and the guard kills the
 * whole group (the CLI, its MCP servers, hooks and tool commands). Every run is also recorded in
 * the driver's run directory until it settles, so a restarted driver ends what a crash left there
 * ({@link sweepHostRuns}) before its first turn.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { type TurnRpcEnv, turnProcessEnv } from '@agentmail/bridge-kit';
import { PERMISSION_WAIT_ENV } from './hook-runner.js';

/** Time between SIGTERM and SIGKILL of a run's process group, in ms. @default 5_000 */
export const HOST_CLI_KILL_GRACE_MS = 5_000;

/** Lines of stderr kept for the failure cause. @default 20 */
export const HOST_CLI_STDERR_TAIL_LINES = 20;

/** Time a run's stdout may stay open after the process exited (a tool process holding the pipe), in ms. @default 2_000 */
export const HOST_CLI_DRAIN_MS = 2_000;

/** Options of {@link runHostCli}. */
export interface HostCliRunOptions {
  bin: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Aborting it stops the run's process group (`stopped: 'abort'`). */
  signal?: AbortSignal;
  /** Called once the process is spawned. */
  onSpawn?: (pid: number) => void;
  /**
   * Every stdout line as it arrives. `stop(problem)` stops the run at once (`stopped: 'setup'`,
   * `setupProblem`): the driver's setup check failed on this line, before the model is asked.
   */
  onLine?: (line: string, stop: (problem: string) => void) => void;
  /** @default HOST_CLI_KILL_GRACE_MS */
  killGraceMs?: number;
  /**
   * The driver's run directory ({@link hostRunsDir}): the run is recorded there while it lasts,
   * for {@link sweepHostRuns} after a crash. None: not recorded.
   */
  runDir?: string;
}

/** What a run left. */
export interface HostCliRunReport {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The run was stopped: by its signal (`abort`) or by the driver's setup check (`setup`). */
  stopped?: 'abort' | 'setup';
  /** The setup check's reason, when it stopped the run. */
  setupProblem?: string;
  /** The `code` of the spawn error (`ENOENT`: the CLI was not found, `EACCES`: not executable), when it could not start. */
  spawnError?: string;
  /** Last lines of stderr (and the spawn error, naming the command and working directory). */
  stderrTail: string;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * The guard of every run (`/bin/sh -c RUN_GUARD guard <cli> <args…>`; fd 3 is the lifeline). It
 * reports on the lifeline a CLI that cannot be run (`ENOENT`, `EACCES`: the spawn error a direct
 * spawn would have had) or that it runs it (`RUN`), starts the watcher, runs the CLI in the foreground without the lifeline, waits for it through a stop's
 * SIGTERM (the CLI has its grace), ends the watcher and leaves with the CLI's exit: its code, or
 * the signal that ended it re-raised (HUP … TERM, 1–15: a CLI's own exit code 129–143 reads as that
 * signal; sh cannot tell them apart). The watcher ignores TERM, INT and HUP (a stop signal to the
 * group must not end it, nor leave the run stopped half-way; the guard ends it with SIGKILL) and
 * waits for EOF on the lifeline (the driver is gone); then, while the guard is still its parent
 * (else the pid may be another process's by now), it stops the guard (which would otherwise see its
 * CLI stop, end the watcher and leave the run stopped), then stops and kills every descendant of the guard
 * (`/proc/<pid>/task/<tid>/children`: a host may start its tools in sessions of their own — Claude
 * Code does — out of the group's reach), stopped first so none forks away between the listing and
 * the kill (builtins only: no fork while the machine may be busy), then the group. Out of reach: a tool that detached itself twice (a daemon: its parent
 * exited, init adopted it) — only a control group (the systemd units) or a sandbox contains that.
 */
const RUN_GUARD = `
case $1 in
  */*) if [ ! -e "$1" ]; then echo ENOENT >&3; exit 127; elif [ ! -f "$1" ] || [ ! -x "$1" ]; then echo EACCES >&3; exit 126; fi ;;
  *) command -v -- "$1" >/dev/null 2>&1 || { echo ENOENT >&3; exit 127; } ;;
esac
echo RUN >&3
( trap '' TERM INT HUP
  read -r _ <&3
  read -r me _ _ parent _ </proc/self/stat 2>/dev/null
  tree() {
    for f in /proc/"$1"/task/*/children; do
      kids=; read -r kids <"$f" || :
      for c in $kids; do [ "$c" = "$me" ] || { run="$run $c"; tree "$c"; }; done
    done
  }
  if [ "$parent" = $$ ]; then
    kill -STOP $$
    run=; tree $$; [ -z "$run" ] || kill -STOP $run
    run=; tree $$; [ -z "$run" ] || kill -KILL $run
  fi
  kill -KILL 0 ) </dev/null >/dev/null 2>&1 &
watcher=$!
trap : TERM INT HUP
"$@" 3<&-
rc=$?
kill -KILL "$watcher" 2>/dev/null
if [ "$rc" -gt 128 ] && [ "$rc" -le 143 ]; then trap - TERM INT HUP; kill -$((rc - 128)) $$; fi
exit "$rc"
`;

/** Where a driver records its runs: `<dataDir>/run/host-runs`. */
export function hostRunsDir(dataDir: string): string {
  return join(dataDir, 'run', 'host-runs');
}

/** A live process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22); undefined when it has exited (or a zombie) or where unreadable. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has exited (only not reaped yet).
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** A process: its pid and start time ({@link processStart}). */
interface ProcessRef {
  pid: number;
  start: string;
}

/** Every live descendant of `root` (from `/proc`; none where there is no `/proc`). */
function descendantsOf(root: number): ProcessRef[] {
  const children = new Map<number, ProcessRef[]>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const ppid = Number(fields[1]);
      const list = children.get(ppid) ?? [];
      list.push({ pid: Number(name), start: fields[19] ?? '' });
      children.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const found: ProcessRef[] = [];
  const queue = [root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  return found;
}

/** Sends `signal` to each process still alive as the same process (same start time). */
function signalEach(processes: readonly ProcessRef[], signal: NodeJS.Signals): void {
  for (const p of processes)
    if (processStart(p.pid) === p.start)
      try {
        process.kill(p.pid, signal);
      } catch {
        // gone
      }
}

/** One run recorded in a run directory. */
interface RunRecord {
  pgid: number;
  /** The guard's start time ({@link processStart}), so a reused pid is not taken for the run. */
  start?: string;
}

/** What {@link sweepHostRuns} found of one recorded run. */
export interface LeftoverRun {
  pgid: number;
  /** `ended`: its guard was alive (same start time) and the run got SIGKILL; `unverifiable`: the group is alive without its guard (or there is no `/proc`), so it cannot be told from a reused id: left alone. */
  outcome: 'ended' | 'unverifiable';
}

/**
 * Whether a process group has a live member: from `/proc` where there is one (a zombie is dead,
 * only not yet reaped by init), else by signal 0.
 */
function groupAlive(pgid: number): boolean {
  let names: string[] | undefined;
  try {
    names = readdirSync('/proc');
  } catch {
    // no /proc: ask the kernel
  }
  if (names === undefined) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[2] === String(pgid) && fields[0] !== 'Z') return true;
    } catch {
      // exited meanwhile
    }
  }
  return false;
}

/**
 * End what runs of an earlier driver process left (SPEC B-15): every run recorded in `runDir`
 * whose guard is still alive with its recorded start time gets SIGKILL (its descendants and its
 * group); every record is removed. Call it only while holding the bridge lock (a standby must not
 * end the active bridge's runs). Anything else is left alone: a leader with another start time (a
 * reused pid), a group without its leader, no `/proc`. Never throws.
 * @returns the live groups found (none when nothing was left).
 */
export function sweepHostRuns(runDir: string): LeftoverRun[] {
  let names: string[];
  try {
    names = readdirSync(runDir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const found: LeftoverRun[] = [];
  for (const name of names) {
    const file = join(runDir, name);
    let record: RunRecord | undefined;
    try {
      record = JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
    } catch {
      // unreadable: written half by a crash; nothing to go by
    }
    try {
      rmSync(file, { force: true });
    } catch {
      // not a file, or not ours to remove: its run is still looked at
    }
    const pgid = record?.pgid;
    if (typeof pgid !== 'number' || !Number.isInteger(pgid) || pgid <= 1 || !groupAlive(pgid)) continue;
    // Only the guard itself, alive with its recorded start time, proves the group is the run's; a
    // group whose leader is gone may be another one under a reused id: left alone, reported.
    const leaderStart = processStart(pgid);
    if (leaderStart !== undefined && record?.start !== undefined && leaderStart === record.start) {
      signalEach(descendantsOf(pgid), 'SIGKILL');
      signalGroup(pgid, 'SIGKILL');
      found.push({ pgid, outcome: 'ended' });
    } else if (leaderStart === undefined) found.push({ pgid, outcome: 'unverifiable' });
  }
  return found;
}

/**
 * Run the host CLI once and report. Never rejects for the run's own failures (a spawn error is
 * reported as exit code `null`, `spawnError`, and the error in `stderrTail`).
 * @example
 * const report = await runHostCli({ bin: 'zcode', args, cwd, env, signal, onLine: (l) => lines.push(l) });
 */
export function runHostCli(options: HostCliRunOptions): Promise<HostCliRunReport> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', RUN_GUARD, 'agentmail-run-guard', options.bin, ...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const pid = child.pid ?? -1;
    const report: HostCliRunReport = { pid, code: null, signal: null, stderrTail: '' };
    // Output lines wait for the guard's RUN, so `onSpawn` comes first (the two pipes race).
    let running = false;
    const early: string[] = [];
    const onStdoutLine = (line: string): void =>
      options.onLine?.(line, (problem) => {
        if (report.stopped !== undefined) return;
        report.setupProblem = problem;
        stop('setup');
      });
    const stderr: string[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;
    let runFile: string | undefined;
    if (options.runDir !== undefined && pid > 0) {
      try {
        mkdirSync(options.runDir, { recursive: true, mode: 0o700 });
        runFile = join(options.runDir, `${pid}.json`);
        const start = processStart(pid);
        writeFileSync(
          runFile,
          JSON.stringify({ pgid: pid, ...(start ? { start } : {}) } satisfies RunRecord),
        );
      } catch {
        // Not recorded: the lifeline still ends the run with the driver.
        runFile = undefined;
      }
    }

    // A stopped run goes whole (B-15): its group, and the descendants that left the group (tools in
    // sessions of their own), as seen at the stop — once the CLI exits, init adopts them.
    let tree: ProcessRef[] = [];
    const killRun = (): void => {
      signalEach([...tree, ...descendantsOf(pid)], 'SIGKILL');
      signalGroup(pid, 'SIGKILL');
    };
    const stop = (why: 'abort' | 'setup'): void => {
      if (report.stopped !== undefined || pid < 0) return;
      report.stopped = why;
      tree = descendantsOf(pid);
      signalEach(tree, 'SIGTERM');
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(killRun, options.killGraceMs ?? HOST_CLI_KILL_GRACE_MS);
      killTimer.unref();
    };
    const onAbort = (): void => stop('abort');
    const finish = (): void => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      // A stopped run's tool processes go with it (B-15); a finished run's are left alone.
      if (report.stopped !== undefined && pid > 0) killRun();
      if (killTimer) clearTimeout(killTimer);
      if (runFile !== undefined) rmSync(runFile, { force: true });
      report.stderrTail = stderr.join('\n');
      resolve(report);
    };

    child.once('error', (err: NodeJS.ErrnoException) => {
      // ENOENT names the binary even when the missing path is the working directory.
      stderr.push(`${String(err)} (command ${options.bin}, working directory ${options.cwd})`);
      if (err.code) report.spawnError = err.code;
      report.code = null;
      finish();
    });
    if (pid < 0) return;
    // The guard's word: the CLI runs (then it is spawned), or the spawn error a direct spawn would have had.
    const lifeline = child.stdio[3] as Readable | null;
    if (lifeline)
      createInterface({ input: lifeline }).on('line', (word) => {
        if (word === 'RUN') {
          options.onSpawn?.(pid);
          running = true;
          for (const line of early.splice(0)) onStdoutLine(line);
        } else if ((word === 'ENOENT' || word === 'EACCES') && report.spawnError === undefined) {
          report.spawnError = word;
          stderr.push(
            `Error: spawn ${options.bin} ${word} (command ${options.bin}, working directory ${options.cwd})`,
          );
        }
      });
    if (options.signal?.aborted) stop('abort');
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    createInterface({ input: child.stderr as Readable }).on('line', (line) => {
      stderr.push(line);
      if (stderr.length > HOST_CLI_STDERR_TAIL_LINES) stderr.shift();
    });
    createInterface({ input: child.stdout as Readable }).on('line', (line) => {
      if (running) onStdoutLine(line);
      else early.push(line);
    });
    // 'close' = exited and its stdio ended; a tool process that keeps the pipe open is not waited
    // for past the exit (its group is killed only when the run was stopped).
    child.once('close', (code, signal) => {
      report.code = report.spawnError === undefined ? code : null;
      report.signal = signal;
      finish();
    });
    child.once('exit', (code, signal) => {
      report.code = report.spawnError === undefined ? code : null;
      report.signal = signal;
      const drain = setTimeout(finish, HOST_CLI_DRAIN_MS);
      drain.unref();
    });
  });
}

/** What {@link hostRunEnv} adds to a run's environment. */
export interface HostRunVars {
  /** The turn's RPC variables (SPEC B-21); none for a self-check. */
  rpcEnv?: TurnRpcEnv | undefined;
  /** `AGENTMAIL_LOCALE` of the tool and hook processes. */
  locale: string;
  /** How long a hook may wait for a person, in ms (the turn timeout): {@link PERMISSION_WAIT_ENV}. */
  permissionWaitMs: number;
  /** The host's own variables (they come before the RPC variables, which always win). */
  extra?: Readonly<Record<string, string>>;
}

/**
 * The environment of one host run (SPEC B-21): the driver's own without any `AGENTMAIL_*` or
 * credential variable (the agent key above all: the host's shell tool, hooks and MCP servers all
 * see this environment; shared-policy `turnProcessEnv`), plus the host's variables, the turn's RPC
 * variables, the locale and the permission wait.
 * @example spawn('zcode', args, { env: hostRunEnv(process.env, { rpcEnv: ctx.turn.rpcEnv, locale: 'en', permissionWaitMs: 600_000 }) })
 */
export function hostRunEnv(base: NodeJS.ProcessEnv, vars: HostRunVars): NodeJS.ProcessEnv {
  return turnProcessEnv(base, {
    extra: {
      ...(vars.extra ?? {}),
      ...(vars.rpcEnv ?? {}),
      AGENTMAIL_LOCALE: vars.locale,
      [PERMISSION_WAIT_ENV]: String(vars.permissionWaitMs),
    },
  });
}

/** The last `n` non-empty lines of a stderr tail, joined with ` / ` (for a failure cause). */
export function stderrSummary(tail: string, n = 3): string {
  return tail
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-n)
    .join(' / ');
}

/**
 * One stdout line of a host CLI's JSON stream (`--output-format stream-json`, ZCode's event lines)
 * as a JSON object, or `undefined` when it is not one (a log line, a half line). Never throws.
 */
export function parseJsonLine(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
