/**
 * One headless `claude -p` process: a host CLI run (`runHostCli` of `@agentmail/host-tools/driver`:
 * own process group, stdin `/dev/null` — an open stdin pipe makes Claude Code wait 3 s for input —,
 * TERM → KILL, settle always: SPEC B-7, B-15) whose stdout is read as Claude Code's stream-json,
 * stopped at `init` when the setup check there fails.
 */
import { type HostCliRunReport, runHostCli } from '@agentmail/host-tools/driver';
import { type InitLine, parseStreamLine, type ResultLine, type StreamLine } from './stream-json.js';

/** Time between SIGTERM and SIGKILL of a run's process group, in ms (Claude Code exits in ~1.5 s). @default 5_000 */
export const CLAUDE_KILL_GRACE_MS = 5_000;

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
  /** Where the run is recorded while it lasts (`hostRunsDir`, B-15). */
  runDir?: string;
}

/** What a run left. */
export interface ClaudeRunReport extends HostCliRunReport {
  init?: InitLine;
  /** The final `result` line; absent when Claude Code ended without one (a failure, B-7). */
  result?: ResultLine;
  /** uuid of the last assistant line (the relay key's entry id, B-10). */
  lastAssistantUuid?: string;
}

/**
 * Run `claude` once and report. Never rejects for the run's own failures (a spawn error is
 * reported as exit code `null` with the error in `stderrTail`).
 */
export async function runClaude(options: ClaudeRunOptions): Promise<ClaudeRunReport> {
  const hooksBefore: StreamLine[] = [];
  const seen: Pick<ClaudeRunReport, 'init' | 'result' | 'lastAssistantUuid'> = {};
  const report = await runHostCli({
    bin: options.bin,
    args: options.args,
    cwd: options.cwd,
    env: options.env,
    killGraceMs: options.killGraceMs ?? CLAUDE_KILL_GRACE_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
    ...(options.runDir ? { runDir: options.runDir } : {}),
    onLine: (text, stop) => {
      const line = parseStreamLine(text);
      if (line === undefined) return;
      options.onLine?.(line);
      switch (line.kind) {
        case 'hook_response':
          if (seen.init === undefined) hooksBefore.push(line);
          break;
        case 'init': {
          seen.init = line.line;
          const problem = options.checkSetup?.(line.line, hooksBefore);
          if (problem !== undefined) stop(problem);
          break;
        }
        case 'assistant':
          if (line.uuid !== undefined && line.model !== '<synthetic>') seen.lastAssistantUuid = line.uuid;
          break;
        case 'result':
          seen.result = line.line;
          break;
      }
    },
  });
  return { ...report, ...seen };
}
