/**
 * Running a command inside the sandbox (SPEC P-1): bubblewrap with the policy's arguments, the
 * command under `/bin/sh -c` (or the given shell), its output streamed, killed with its process
 * group on abort or timeout.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { type BwrapArgsFor, type Sandbox, sandboxArgs } from './sandbox.js';

/** Options of {@link sandboxExec}. */
export interface SandboxExecOptions {
  /** Working directory (inside the workspace). @default the policy's workspace */
  cwd?: string;
  /** Environment of the command (never the agent key: the caller filters it). */
  env?: NodeJS.ProcessEnv;
  /** Every chunk of stdout and stderr, in order. */
  onData?: (data: Buffer) => void;
  /** Every chunk of stdout alone (a file read through the sandbox). */
  onStdout?: (data: Buffer) => void;
  /** Every chunk of stderr alone (what a command said beside its output). */
  onStderr?: (data: Buffer) => void;
  /** Stdin of the command. @default nothing (closed) */
  input?: Buffer | string;
  signal?: AbortSignal;
  /** Kill after this many seconds. */
  timeout?: number;
  /** The shell that runs `command`. @default '/bin/sh' */
  shell?: string;
  /** Tests only: change the arguments (weaken the confinement on purpose). */
  argsFor?: BwrapArgsFor;
}

/**
 * Run `command` in `sandbox` under `options.shell -c`; resolves with its exit code (128 + signal
 * number when killed by a signal, as pi's bash contract asks). Never rejects for the command's
 * own failure.
 * @throws Error when bubblewrap cannot be started.
 */
export function sandboxExec(
  sandbox: Sandbox,
  command: string,
  options: SandboxExecOptions = {},
): Promise<{ exitCode: number | null }> {
  return sandboxRun(sandbox, [options.shell ?? '/bin/sh', '-c', command], options);
}

/**
 * bubblewrap's words when a place it was to mask (a host socket, a hidden file: `--ro-bind
 * /dev/null <path>`) vanished between reading the host's facts and its start: the mount point
 * cannot be made on the read-only root. Nothing of the command ran.
 */
const VANISHED_MASK = /^bwrap: Can't (?:mkdir parents for|create file at) (.+): Read-only file system\n?$/;

/** The places `args` masks with `/dev/null`. */
function maskedPlaces(args: readonly string[]): string[] {
  const places: string[] = [];
  for (let i = 0; i + 2 < args.length; i++)
    if (args[i] === '--ro-bind' && args[i + 1] === '/dev/null') places.push(args[i + 2] as string);
  return places;
}

/**
 * Run `argv` in `sandbox` (see {@link sandboxExec}); its process group is killed on abort or timeout.
 * A start that failed because a place to mask vanished meanwhile (a host socket removed while the
 * arguments were built; {@link VANISHED_MASK}) is tried once more with the host's facts read
 * again: nothing ran, and the caller never sees that first attempt.
 * Rejects when bubblewrap cannot be started or `options.cwd` is outside the workspace.
 */
export function sandboxRun(
  sandbox: Sandbox,
  argv: readonly string[],
  options: SandboxExecOptions = {},
): Promise<{ exitCode: number | null }> {
  return runAttempt(sandbox, argv, options, true);
}

function runAttempt(
  sandbox: Sandbox,
  argv: readonly string[],
  options: SandboxExecOptions,
  mayRetry: boolean,
): Promise<{ exitCode: number | null }> {
  let args: string[];
  try {
    args = [...sandboxArgs(sandbox, options.cwd, options.argsFor), '--', ...argv];
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise((resolveExit, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(sandbox.bwrap, args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: options.env ?? {},
        detached: true,
      });
    } catch (err) {
      reject(err);
      return;
    }
    const kill = (): void => {
      if (child.pid === undefined || child.exitCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    options.signal?.addEventListener('abort', kill, { once: true });
    const timer =
      options.timeout !== undefined && options.timeout > 0
        ? setTimeout(kill, options.timeout * 1000)
        : undefined;
    const done = (): void => {
      options.signal?.removeEventListener('abort', kill);
      if (timer) clearTimeout(timer);
    };
    const stderr = (d: Buffer): void => {
      options.onStderr?.(d);
      options.onData?.(d);
    };
    // bubblewrap's own failure is its first stderr line, before the command runs: a first chunk
    // that starts with "bwrap: " waits until more output or the exit shows whether to try again.
    let holding = mayRetry;
    let held: Buffer | undefined;
    const release = (): void => {
      holding = false;
      if (held === undefined) return;
      const chunk = held;
      held = undefined;
      stderr(chunk);
    };
    child.stdout?.on('data', (d: Buffer) => {
      release();
      options.onStdout?.(d);
      options.onData?.(d);
    });
    child.stderr?.on('data', (d: Buffer) => {
      if (holding) {
        // bwrap writes "bwrap: ", the words and the line end separately (stderr is unbuffered):
        // they may arrive as several chunks, so the first line is gathered before it is judged.
        const text = Buffer.concat(held ? [held, d] : [d]);
        const line = text.toString('utf8');
        const start = line.slice(0, 7);
        if ('bwrap: '.startsWith(start) || start === 'bwrap: ') {
          const end = line.indexOf('\n');
          if (end < 0 || VANISHED_MASK.test(line.slice(0, end + 1))) {
            held = text;
            return;
          }
        }
        held = text;
        release();
        return;
      }
      release();
      stderr(d);
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
    child.once('error', (err) => {
      done();
      reject(err);
    });
    child.once('close', (code, signal) => {
      done();
      const vanished = held && code === 1 ? VANISHED_MASK.exec(held.toString('utf8'))?.[1] : undefined;
      if (
        vanished !== undefined &&
        !options.signal?.aborted &&
        maskedPlaces(args).includes(vanished) &&
        !existsSync(vanished)
      ) {
        resolveExit(runAttempt(sandbox, argv, options, false));
        return;
      }
      release();
      const signalNumber = signal ? constants.signals[signal] : undefined;
      resolveExit({ exitCode: code ?? (signalNumber === undefined ? null : 128 + signalNumber) });
    });
  });
}
