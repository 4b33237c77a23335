/**
 * The Claude Code bridge's own events, on the kit's bus next to its `BridgeEvent`s (logged as one
 * JSON line each, field `event`). Tests and the bench read them; no behaviour reads a log line.
 */
export type ClaudeEvent =
  /** P-8: the startup check that the plugin's hooks and mail tools load in Claude Code. */
  | { type: 'self_check'; ok: boolean; reason?: string; duration_ms: number }
  /** One `claude -p` process started for a mail. */
  | { type: 'claude_spawned'; mail_id: string; pid: number; resume: boolean; model?: string }
  /** Its `init` line passed the setup check (hooks ran, mail tools connected). */
  | { type: 'claude_ready'; mail_id: string; session_id: string; model: string }
  /** A permission hook of the run answered (with `--include-hook-events`). */
  | { type: 'claude_hook'; mail_id: string; hook: string; exit_code: number; outcome: string }
  /** The run ended; `result` is `missing` when Claude Code ended without a result line (B-7). */
  | {
      type: 'claude_exited';
      mail_id: string;
      pid: number;
      code: number | null;
      signal: string | null;
      result: 'success' | 'error' | 'missing';
      terminal_reason?: string;
      stopped?: 'abort' | 'setup';
      duration_ms: number;
    }
  | { type: 'signal_received'; signal: string };
