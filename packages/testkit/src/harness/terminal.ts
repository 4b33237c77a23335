/**
 * Run a process under a real pseudo-terminal (Python's `pty`), so its stdout and stderr are a
 * TTY: what a person starting a daemon by hand sees (plain lines next to the JSON log).
 */
import { spawn } from 'node:child_process';

/** What {@link runOnTerminal} saw: the exit code and all the process printed (`\r\n` → `\n`). */
export interface TerminalRun {
  code: number | null;
  output: string;
}

/**
 * Run `command args` on a pseudo-terminal with `env` until it exits.
 * @param timeoutMs the process is SIGKILLed and the promise rejects when it runs longer.
 * @example const tty = await runOnTerminal(process.execPath, [daemonJs], env, 60_000); expect(tty.code).toBe(2);
 */
export function runOnTerminal(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<TerminalRun> {
  const script = 'import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))';
  return new Promise((done, fail) => {
    const child = spawn('python3', ['-c', script, command, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const take = (s: string): void => {
      output += s;
    };
    child.stdout.setEncoding('utf8').on('data', take);
    child.stderr.setEncoding('utf8').on('data', take);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${command} did not exit on the terminal in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, output: output.replaceAll('\r\n', '\n') });
    });
    child.stdin.end();
  });
}
