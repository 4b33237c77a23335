/**
 * A program's output read in the sandbox one record at a time (SPEC P-12): what pi's confined
 * `ls`, `find` and `grep` run (`find`, ripgrep), each call one bubblewrap start.
 */
import { type Sandbox, sandboxRun } from '@agentmail/bridge-kit';

/** What a run may say on stderr that is kept for its error, in characters. */
const STDERR_MAX_CHARS = 4_000;

/** The exit code of a tool's shell when the path it was given is not there: pi's `Path not found`. */
export const NOT_FOUND_EXIT = 3;

/** How a sandbox run that streams its output in records ended. */
export interface RecordsRun {
  exitCode: number | null;
  /** The start of what it said on stderr. */
  stderr: string;
  /** `onRecord` asked to stop (the run was killed then). */
  stopped: boolean;
}

/** The first record of every run: the command started inside the sandbox (not bwrap's failure). */
const STARTED = 'agentmail-sandbox-started';

/**
 * Run `argv` in `sandbox` and hand its stdout to `onRecord` one record at a time (split on
 * `separator`: NUL for `find -printf`, which readline cannot split on; newline for ripgrep's JSON).
 * `onRecord` returns `'stop'` to end the run early (its process group is killed). Records are
 * handled as they arrive, so memory holds what the caller keeps, not the output. A shell in the
 * sandbox writes a first record before it runs `argv`, so a sandbox that did not start (bwrap's
 * exit 1) is told from the command's own exit 1 (ripgrep's "no match", find's missing path).
 * @throws Error `Operation aborted` when `signal` aborts; bubblewrap's words when the sandbox did
 *   not start.
 */
export async function runRecords(
  sandbox: Sandbox,
  argv: string[],
  separator: '\0' | '\n',
  onRecord: (record: string) => 'stop' | undefined,
  signal: AbortSignal | undefined,
): Promise<RecordsRun> {
  if (signal?.aborted) throw new Error('Operation aborted');
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let stopped = false;
  let stderr = '';
  const sep = separator.charCodeAt(0);
  let pieces: Buffer[] = [];
  let started = false;
  const emit = (record: string): void => {
    if (!started) {
      started = record === STARTED;
      return;
    }
    if (stopped || signal?.aborted) return;
    if (onRecord(record) === 'stop') {
      stopped = true;
      stop.abort();
    }
  };
  try {
    const marker = `printf '%s${separator === '\0' ? '\\000' : '\\n'}' ${STARTED}; exec "$@"`;
    const { exitCode } = await sandboxRun(sandbox, ['/bin/sh', '-c', marker, 'sh', ...argv], {
      onStdout: (chunk) => {
        let start = 0;
        for (let at = chunk.indexOf(sep); at !== -1; at = chunk.indexOf(sep, start)) {
          pieces.push(chunk.subarray(start, at));
          const record = Buffer.concat(pieces).toString('utf8');
          pieces = [];
          start = at + 1;
          emit(record);
        }
        if (start < chunk.length) pieces.push(chunk.subarray(start));
      },
      onStderr: (d) => {
        if (stderr.length < STDERR_MAX_CHARS) stderr += d.toString('utf8');
      },
      signal: stop.signal,
    });
    if (pieces.length > 0) emit(Buffer.concat(pieces).toString('utf8'));
    if (signal?.aborted) throw new Error('Operation aborted');
    if (!started) throw new Error(stderr.trim() || `the sandbox did not start (exit ${exitCode})`);
    return { exitCode, stderr: stderr.slice(0, STDERR_MAX_CHARS).trim(), stopped };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
