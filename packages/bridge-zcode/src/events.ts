import type { DriverEvent } from '@agentmail/host-tools/driver';

/**
 * The ZCode bridge's own events, on the kit's bus next to its `BridgeEvent`s (logged as one JSON
 * line each, field `event`). Tests and the bench read them; no behaviour reads a log line.
 */
export type ZcodeEvent =
  /** `self_check` (P-8: `zcode plugins list` shows the plugin's hooks and MCP server), `signal_received`. */
  | DriverEvent
  /** The mail's mode was run as a lower ZCode mode than its own (`workspace` → `plan`: the fallback). */
  | { type: 'zcode_mode_mapped'; mail_id: string; mode: string; zcode_mode: string; reason: string }
  /** One `zcode --prompt` process started for a mail. */
  | {
      type: 'zcode_spawned';
      mail_id: string;
      pid: number;
      zcode_mode: string;
      resume: boolean;
      model?: string;
    }
  /** The run named its session (the first `sess_…` id on its stream). */
  | { type: 'zcode_session'; mail_id: string; session_id: string }
  /** A step of the run (stream-json `turn.*`, `tool.updated`, `permission.*`): a stuck run shows where. */
  | {
      type: 'zcode_stream';
      mail_id: string;
      stream_type: string;
      kind?: string;
      tool?: string;
      detail?: string;
    }
  /** The run ended; `result` is `missing` when ZCode ended without its result line (B-7). */
  | {
      type: 'zcode_exited';
      mail_id: string;
      pid: number;
      code: number | null;
      signal: string | null;
      result: 'success' | 'error' | 'missing';
      stopped?: 'abort' | 'setup';
      duration_ms: number;
    };
