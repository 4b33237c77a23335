/**
 * Messages between the daemon and a worker child process (see SPEC B-12). Only paths, ids,
 * scalars and flat string records cross the boundary: no session objects, no clients.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import type { MailTurnReport } from '@agentmail/shared-policy/bridge';

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
  /** The daemon's turn timeout, in ms (B-7): named in a timeout failure mail. */
  turnTimeoutMs: number;
}

/**
 * The job of a probe child (src/probe.ts): verify the permission hook (P-8) and read pi's model
 * catalogue (G-25), so pi never loads in the daemon.
 */
export interface ProbeJob {
  type: 'probe';
  gatewayUrl: string;
  agentKey: string;
  agentName: string;
  dataDir: string;
  agentDir: string;
  locale: string;
}

/** The probe child's answer. */
export interface ProbeReport {
  type: 'probe_result';
  enforcement: { mode: 'native' | 'advisory'; reason?: string };
  /** pi's available models (at most 300), `provider/id` keys; absent when unreadable. */
  models?: Array<{ key: string; name: string }>;
  /** Why the catalogue is unreadable. */
  modelsError?: string;
}

/** Daemon → worker. */
export type DaemonMessage =
  | WorkerJob
  | ProbeJob
  | { type: 'permission_decision'; event: Record<string, unknown> & { relay_key: string } }
  | { type: 'abort'; reason: string }
  | { type: 'shutdown' };

/**
 * The worker's report of its turn: shared-policy's {@link MailTurnReport} (runMailTurn) plus the
 * worker's peak RSS in KiB (`process.resourceUsage().maxRSS`, set by worker-main).
 */
export type TurnReport = MailTurnReport & { type: 'result'; maxRssKb?: number };

/** Worker → daemon. */
export type WorkerMessage =
  | { type: 'ready' }
  | TurnReport
  | ProbeReport
  | { type: 'reconnect'; url: string; key: string }
  | {
      type: 'log';
      level: 'info' | 'warn' | 'error';
      msg: string;
      fields?: Record<string, string | number | boolean>;
    };

/**
 * Daemon → launcher (src/launcher-main.ts, see SPEC B-12): fork a worker (`spawn`, entry
 * `modulePath`, id chosen by the daemon), relay a message to it (`send`), SIGKILL its process
 * group (`kill`).
 */
export type LauncherRequest =
  | { type: 'spawn'; id: number; modulePath: string }
  | { type: 'send'; id: number; message: DaemonMessage }
  | { type: 'kill'; id: number };

/**
 * Launcher → daemon: the worker's pid (`spawned`, always before its first `message`), a worker
 * message relayed (`message`), the worker's end (`exit`; `error` when it could not run).
 */
export type LauncherEvent =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'message'; id: number; message: WorkerMessage }
  | { type: 'exit'; id: number; code: number | null; signal: string | null; error?: string };
