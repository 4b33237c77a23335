/**
 * The `agentmail` CLI run in the test process (`runCli` with a captured io: the program the binary
 * runs, on its arguments, environment, standard input and working directory), for tests of what
 * the CLI says and does. A real binary costs a Node start (~0.5 CPU-s) per command; the CLI tests
 * run about a hundred. The binary itself keeps a smoke set of real runs in each file (exit codes,
 * stdio, the bundle).
 */
import type { CliIo } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/program.js';
import type { RunResult } from './processes.js';

/** What {@link runCliInProcess} runs with. */
export interface InProcessRun {
  /** The CLI's whole environment (like a child's). */
  env: NodeJS.ProcessEnv;
  /** Standard input (text, or raw bytes). @default empty */
  input?: string | Uint8Array;
  /** Working directory for relative paths. @default process.cwd() */
  cwd?: string;
}

/** Run `agentmail <args>` in this process and collect what it printed, like a finished child. */
export async function runCliInProcess(args: readonly string[], options: InProcessRun): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const input = options.input ?? '';
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const io: CliIo = {
    out: (text) => {
      stdout += `${text}\n`;
    },
    err: (text) => {
      stderr += `${text}\n`;
    },
    env: options.env,
    stdin: async function* () {
      if (bytes.length > 0) yield bytes;
    },
    cwd: options.cwd ?? process.cwd(),
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}
