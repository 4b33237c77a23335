/**
 * Messages between the daemon and a worker child process (see SPEC B-12). Only JSON crosses the
 * boundary: the kit's turn job (plain data), events, decisions, commit round trips.
 */
import type { BridgeEvent, MailTurnReport, TurnJob } from '@agentmail/bridge-kit';
import type { PiEvent } from './events.js';

/** The job of one worker: one mail, one turn (the kit's {@link TurnJob} plus pi's directory). */
export interface WorkerJob {
  type: 'job';
  job: TurnJob;
  /** pi agent directory (absolute): auth.json, models.json, the person's own sessions. */
  agentDir: string;
}

/**
 * The job of a probe child (src/probe.ts): verify the permission hook (P-8) and read pi's model
 * catalogue (G-25), so pi never loads in the daemon.
 */
export interface ProbeJob {
  type: 'probe';
  dataDir: string;
  agentDir: string;
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
  | { type: 'shutdown' }
  /** The answer to a `commit_request`: run the relay now, or not at all (the turn was given up). */
  | { type: 'commit_answer'; id: number; granted: boolean };

/**
 * The worker's report of its turn: the kit's {@link MailTurnReport} plus the worker's peak RSS in
 * KiB (`process.resourceUsage().maxRSS`, set by worker-main).
 */
export type TurnReport = MailTurnReport & { type: 'result'; maxRssKb?: number };

/** Worker → daemon. */
export type WorkerMessage =
  | { type: 'ready' }
  | TurnReport
  | ProbeReport
  | { type: 'reconnect'; url: string; key: string }
  /** A kit or pi event of the turn, re-emitted on the daemon's bus. */
  | { type: 'event'; event: BridgeEvent | PiEvent }
  /** May the relay go out? (the runtime's commit gate lives in the daemon: one outcome per mail) */
  | { type: 'commit_request'; id: number }
  /** The relay granted by `id` settled. */
  | { type: 'commit_done'; id: number; ok: boolean };

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
