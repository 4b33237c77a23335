/**
 * One headless `claude -p` process: spawned in its own process group with stdin `/dev/null` (an
 * open stdin pipe makes Claude Code wait 3 s for input), its stream-json stdout read line by
 * line, and stopped as a group — SIGTERM, then SIGKILL after a grace period — when its signal
 * aborts (turn timeout, shutdown: SPEC B-7, B-15) or when the setup check at `init` fails. The
 * report always settles, also when Claude Code hangs or dies without a `result` line.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type InitLine, parseStreamLine, type ResultLine, type StreamLine } from './stream-json.js';

/** Time between SIGTERM and SIGKILL of a run's process group, in ms (Claude Code exits in ~1.5 s). @default 5_000 */
export const CLAUDE_KILL_GRACE_MS = 5_000;

/** Lines of stderr kept for the failure cause. @default 20 */
export const STDERR_TAIL_LINES = 20;

/** Options of {@link runClaude}. */
export interface ClaudeRunOptions {
  bin: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Aborting it stops the run's process group. */
  signal?: AbortSignal;
  /**
   * Called with the `init` line and the hook responses before it: return a reason to stop the
   * run at once (before the model is asked), or undefined to let it go on.
   */
  checkSetup?: (init: InitLine, hooksBefore: readonly StreamLine[]) => string | undefined;
  /** Every classified line, as it arrives. */
  onLine?: (line: StreamLine) => void;
  /** Called once the process is spawned. */
  onSpawn?: (pid: number) => void;
  /** @default CLAUDE_KILL_GRACE_MS */
  killGraceMs?: number;
}

/** What a run left. */
export interface ClaudeRunReport {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  init?: InitLine;
  /** The final `result` line; absent when Claude Code ended without one (a failure, B-7). */
  result?: ResultLine;
  /** uuid of the last assistant line (the relay key's entry id, B-10). */
  lastAssistantUuid?: string;
  /** The run was stopped: by its signal (`abort`) or because the setup check failed (`setup`). */
  stopped?: 'abort' | 'setup';
  /** The setup check's reason, when it stopped the run. */
  setupProblem?: string;
  /** Last lines of stderr. */
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
 * Run `claude` once and report. Never rejects for the run's own failures (a spawn error is
 * reported as exit code `null` with the error in `stderrTail`).
 */
export function runClaude(options: ClaudeRunOptions): Promise<ClaudeRunReport> {
  return new Promise((resolve) => {
    const child = spawn(options.bin, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const pid = child.pid ?? -1;
    const report: ClaudeRunReport = { pid, code: null, signal: null, stderrTail: '' };
    const stderr: string[] = [];
    const hooksBefore: StreamLine[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const stop = (why: 'abort' | 'setup'): void => {
      if (report.stopped !== undefined || pid < 0) return;
      report.stopped = why;
      signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), options.killGraceMs ?? CLAUDE_KILL_GRACE_MS);
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
      report.code = null;
      finish();
    });
    if (pid < 0) return;
    options.onSpawn?.(pid);
    if (options.signal?.aborted) stop('abort');
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      if (stderr.length > STDERR_TAIL_LINES) stderr.shift();
    });
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = parseStreamLine(text);
      if (line === undefined) return;
      options.onLine?.(line);
      switch (line.kind) {
        case 'hook_response':
          if (report.init === undefined) hooksBefore.push(line);
          break;
        case 'init': {
          report.init = line.line;
          const problem = options.checkSetup?.(line.line, hooksBefore);
          if (problem !== undefined) {
            report.setupProblem = problem;
            stop('setup');
          }
          break;
        }
        case 'assistant':
          if (line.uuid !== undefined && line.model !== '<synthetic>') report.lastAssistantUuid = line.uuid;
          break;
        case 'result':
          report.result = line.line;
          break;
      }
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
      const drain = setTimeout(finish, 2_000);
      drain.unref();
    });
  });
}
