/**
 * One run of a host's headless CLI (`claude -p`, `zcode --prompt`), as every driver of such a host
 * needs it: spawned in its own process group with stdin `/dev/null` (an open stdin pipe makes some
 * hosts wait for input), its stdout read line by line, its stderr tail kept for the failure cause,
 * and stopped as a group — SIGTERM, then SIGKILL after a grace period — when its signal aborts
 * (turn timeout, shutdown: SPEC B-7, B-15) or when the driver's setup check on a line fails. The
 * report always settles, also when the host hangs or dies without its final line.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type TurnRpcEnv, turnProcessEnv } from '@agentmail/shared-policy/bridge';
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
  /** The `code` of the spawn error (`ENOENT`: the CLI was not found), when it could not start. */
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
 * Run the host CLI once and report. Never rejects for the run's own failures (a spawn error is
 * reported as exit code `null`, `spawnError`, and the error in `stderrTail`).
 * @example
 * const report = await runHostCli({ bin: 'zcode', args, cwd, env, signal, onLine: (l) => lines.push(l) });
 */
export function runHostCli(options: HostCliRunOptions): Promise<HostCliRunReport> {
  return new Promise((resolve) => {
    const child = spawn(options.bin, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const pid = child.pid ?? -1;
    const report: HostCliRunReport = { pid, code: null, signal: null, stderrTail: '' };
    const stderr: string[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const stop = (why: 'abort' | 'setup'): void => {
      if (report.stopped !== undefined || pid < 0) return;
      report.stopped = why;
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(
        () => signalGroup(pid, 'SIGKILL'),
        options.killGraceMs ?? HOST_CLI_KILL_GRACE_MS,
      );
      killTimer.unref();
    };
    const onAbort = (): void => stop('abort');
    const finish = (): void => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      // A stopped run's tool processes go with it (B-15); a finished run's are left alone.
      if (report.stopped !== undefined && pid > 0) signalGroup(pid, 'SIGKILL');
      if (killTimer) clearTimeout(killTimer);
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
    options.onSpawn?.(pid);
    if (options.signal?.aborted) stop('abort');
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      if (stderr.length > HOST_CLI_STDERR_TAIL_LINES) stderr.shift();
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      options.onLine?.(line, (problem) => {
        if (report.stopped !== undefined) return;
        report.setupProblem = problem;
        stop('setup');
      });
    });
    // 'close' = exited and its stdio ended; a tool process that keeps the pipe open is not waited
    // for past the exit (its group is killed only when the run was stopped).
    child.once('close', (code, signal) => {
      report.code = code;
      report.signal = signal;
      finish();
    });
    child.once('exit', (code, signal) => {
      report.code = code;
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
