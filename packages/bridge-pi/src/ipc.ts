/**
 * Messages between the daemon and a worker child process (see SPEC B-12). Only paths, ids,
 * scalars and flat string records cross the boundary: no session objects, no clients.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import type { FailureKind } from '@agentmail/shared-policy';

/** The job of one worker: one mail, one turn. */
export interface WorkerJob {
  type: 'job';
  /** The `new_mail` event (flat scalars). */
  mail: NewMailEvent;
  backlog: boolean;
  gatewayUrl: string;
  agentKey: string;
  agentName: string;
  /** Bridge data directory (absolute): mail session files, grants, fallback workspaces. */
  dataDir: string;
  /** pi agent directory (absolute): auth.json, models.json, the person's own sessions. */
  agentDir: string;
  /** Admin's ordered model selection from the last heartbeat answer (G-27). */
  allowedModels: string[];
  /** `provider/model` from AGENTMAIL_REPLY_PROVIDER/MODEL, or '' for pi's own default. */
  hostDefault: string;
  /** 1-based delivery attempt (B-14). */
  attempt: number;
  locale: string;
}

/** Daemon → worker. */
export type DaemonMessage =
  | WorkerJob
  | { type: 'permission_decision'; event: Record<string, unknown> & { relay_key: string } }
  | { type: 'abort'; reason: string }
  | { type: 'shutdown' };

/** The worker's report of its turn. */
export type TurnReport =
  | {
      type: 'result';
      ok: true;
      /** `provider/model` that answered. */
      model: string;
      platformSessionId: string;
      sessionFile: string;
      relay: { sent: true; mailId: string; duplicate: boolean } | { sent: false; reason: string };
    }
  | {
      type: 'result';
      ok: false;
      kind: FailureKind;
      cause: string;
      /** The failure mail was sent (or was a duplicate). */
      failureMailSent: boolean;
      failureMailError?: string;
    };

/** Worker → daemon. */
export type WorkerMessage =
  | { type: 'ready' }
  | TurnReport
  | { type: 'reconnect'; url: string; key: string }
  | {
      type: 'log';
      level: 'info' | 'warn' | 'error';
      msg: string;
      fields?: Record<string, string | number | boolean>;
    };
