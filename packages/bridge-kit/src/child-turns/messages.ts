/**
 * The child-process turn runner's IPC (see SPEC B-12): the messages between the runner (in the
 * bridge's process), its launcher child and the worker children, and the runner's own events.
 * Only JSON crosses a process boundary: the kit's turn job (plain data), events, decisions, commit
 * round trips. Types only: the launcher (launcher-main.ts) imports them and must stay node
 * built-ins only (its types are erased, so it can run from source).
 */
import type { TurnJob } from '../turn-job.js';
import type { MailTurnReport } from '../turn-report.js';

/** Runner → worker (relayed by the launcher). */
export type RunnerMessage =
  /** The worker's one turn. */
  | { type: 'job'; job: TurnJob }
  /** A one-shot task instead of a turn (pi: the permission-hook check and the catalogue). */
  | { type: 'task'; task: unknown }
  /** A `permission_decision` event (G-21) for the turn's waiting calls. */
  | { type: 'permission_decision'; event: Record<string, unknown> & { relay_key: string } }
  /** Stop the turn (B-7 timeout): a failure mail follows, unlike a shutdown. */
  | { type: 'abort'; reason: string }
  /** The bridge stops (B-15, P-7): pending questions are denied, the turn stops, no failure mail. */
  | { type: 'shutdown' }
  /** The answer to a `commit_request`: run the relay now, or not at all (the turn was given up). */
  | { type: 'commit_answer'; id: number; granted: boolean };

/**
 * The worker's report of its turn: the kit's {@link MailTurnReport} plus the worker's peak RSS in
 * KiB (`process.resourceUsage().maxRSS`), logged as `worker_max_rss_kb` with the turn's end.
 */
export type WorkerReport = MailTurnReport & { type: 'result'; maxRssKb?: number };

/** Worker → runner (relayed by the launcher). */
export type WorkerMessage =
  /** Listening: the runner sends the job (or task) now. */
  | { type: 'ready' }
  | WorkerReport
  /** The task's result (JSON), or none when the task gave nothing. */
  | { type: 'task_result'; result: unknown }
  /** B-18: connect_to_server switched Gateway (already probed). */
  | { type: 'reconnect'; url: string; key: string }
  /** A kit or host event of the turn, re-emitted on the bridge's bus. */
  | { type: 'event'; event: { type: string } }
  /** May the relay go out? (the runtime's commit gate lives in the runner's process: one outcome per mail) */
  | { type: 'commit_request'; id: number }
  /** The relay granted by `id` settled. */
  | { type: 'commit_done'; id: number; ok: boolean };

/**
 * Runner → launcher: fork a worker (`spawn`: entry `modulePath` with `args`, node options
 * `execArgv` (default: the launcher's own), id chosen by the runner), relay a message to it
 * (`send`), SIGKILL its process group (`kill`).
 */
export type LauncherRequest =
  | { type: 'spawn'; id: number; modulePath: string; args?: string[]; execArgv?: string[] }
  | { type: 'send'; id: number; message: RunnerMessage }
  | { type: 'kill'; id: number };

/**
 * Launcher → runner: the worker's pid (`spawned`, always before its first `message`), a worker
 * message relayed (`message`), the worker's end (`exit`; `error` when it could not run).
 */
export type LauncherEvent =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'message'; id: number; message: WorkerMessage }
  | { type: 'exit'; id: number; code: number | null; signal: string | null; error?: string };

/**
 * The runner's events (SPEC B-12, B-14, B-15), on the bridge's bus beside the kit's: a bridge that
 * uses `childProcessTurns` adds them to its host events (`createBridge<MyEvent | ChildTurnEvent>`).
 * Logged like every host event (`event: <type>`, info).
 */
export type ChildTurnEvent =
  | { type: 'launcher_forked'; launcher: number; restart: boolean }
  | { type: 'launcher_lost'; launcher: number; workers: number; reason: string }
  | { type: 'ipc_send_failed'; error: string }
  | { type: 'worker_spawned'; mail_id: string; attempt: number; worker_pid: number }
  | { type: 'workers_stopping'; workers: number };
