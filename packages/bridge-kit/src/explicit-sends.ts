import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import { AgentMailError } from '@agentmail/shared-policy';

/** Options of {@link ExplicitSendRecord}. */
export interface ExplicitSendRecordOptions {
  /**
   * Absolute path of a JSON-lines file shared with the process that runs the mail tools (ZCode's
   * MCP server writes, the driver reads). Omit to keep the record in memory only.
   */
  file?: string;
}

/** One line of the record file. */
interface SendLine {
  turn_id: string;
  to: string[];
  at: string;
}

/**
 * The addresses the model mailed itself during a turn, so the auto relay can skip a target that
 * already got the reply (see SPEC B-10).
 *
 * With `file`, each {@link ExplicitSendRecord.record} appends one JSON line
 * `{"turn_id","to":[…],"at"}` in a single append (O_APPEND; lines of different processes do not
 * interleave), and {@link ExplicitSendRecord.targetsFor} reads the file every time, so sends
 * recorded by another process are seen. Unparsable lines (a torn last line) are ignored.
 * The file is never truncated here: give each bridge run its own file, or remove it on start.
 *
 * @example
 * const sends = new ExplicitSendRecord({ file: '/run/agentmail/zcode/sends.jsonl' });
 * await sends.record(turnId, [args.to, ...(args.cc ?? [])]); // in the send_mail tool
 * const already = await sends.targetsFor(turnId);              // in the driver, after the turn
 */
export class ExplicitSendRecord {
  /** The record file, when shared across processes. */
  readonly file: string | undefined;
  readonly #memory = new Map<string, Set<string>>();

  /** @throws AgentMailError `AM_STATE_FILE_RELATIVE` when `file` is not an absolute path. */
  constructor(options: ExplicitSendRecordOptions = {}) {
    if (options.file !== undefined && !isAbsolute(options.file)) {
      throw new AgentMailError(
        'AM_STATE_FILE_RELATIVE',
        `ExplicitSendRecord option "file" must be an absolute path (got "${options.file}"): the tool process and the driver must find the same file`,
      );
    }
    this.file = options.file;
  }

  /**
   * Record that the model mailed `targets` (addresses as given to send_mail/forward_mail) during `turnId`.
   * @throws AgentMailError `AM_SEND_RECORD_WRITE_FAILED` when the record file cannot be appended to
   *   (the in-memory record still holds).
   */
  async record(turnId: string, targets: string | readonly string[]): Promise<void> {
    const to = (typeof targets === 'string' ? [targets] : [...targets])
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (to.length === 0) return;
    this.#remember(turnId, to);
    if (this.file === undefined) return;
    const line: SendLine = { turn_id: turnId, to, at: new Date().toISOString() };
    try {
      await mkdir(dirname(this.file), { recursive: true });
      await appendFile(this.file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    } catch (cause) {
      throw new AgentMailError(
        'AM_SEND_RECORD_WRITE_FAILED',
        `could not append to the explicit-send record "${this.file}" (${(cause as Error).message}); check that its directory is writable by the bridge user`,
        { cause },
      );
    }
  }

  /** Every target recorded for `turnId`, in this process or (with a file) any other; de-duplicated, in recording order. */
  async targetsFor(turnId: string): Promise<string[]> {
    const targets = new Set(this.#memory.get(turnId));
    if (this.file !== undefined) {
      let text = '';
      try {
        text = await readFile(this.file, 'utf8');
      } catch {
        // no file yet: nothing recorded by another process
      }
      for (const raw of text.split('\n')) {
        if (raw.trim() === '') continue;
        try {
          const line = JSON.parse(raw) as Partial<SendLine>;
          if (line.turn_id !== turnId || !Array.isArray(line.to)) continue;
          for (const t of line.to) if (typeof t === 'string') targets.add(t);
        } catch {
          // a torn or foreign line: ignore
        }
      }
    }
    return [...targets];
  }

  /** Drop the in-memory record of a finished turn (file lines stay). */
  forget(turnId: string): void {
    this.#memory.delete(turnId);
  }

  #remember(turnId: string, to: readonly string[]): void {
    let set = this.#memory.get(turnId);
    if (set === undefined) {
      set = new Set();
      this.#memory.set(turnId, set);
    }
    for (const t of to) set.add(t);
  }
}
