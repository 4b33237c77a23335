/**
 * The pi bridge's own events, on the kit's bus beside the kit's (shared-policy `BridgeEvent`):
 * logged as JSON lines with `event: <type>` like every kit event; tests and the bench read those.
 */
import type { LoopDelayStats } from './loop-stats.js';

/** Events of the pi daemon and its launcher and workers (SPEC B-12, B-14). */
export type PiEvent =
  | { type: 'launcher_forked'; launcher: number; restart: boolean }
  | { type: 'launcher_lost'; launcher: number; workers: number; reason: string }
  | { type: 'ipc_send_failed'; error: string }
  | { type: 'worker_spawned'; mail_id: string; attempt: number; worker_pid: number }
  | { type: 'workers_stopping'; workers: number }
  | { type: 'permission_hook_installed'; mail_id: string }
  | { type: 'probe_done'; enforcement: 'native' | 'advisory'; models: number; error?: string }
  | ({ type: 'loop_delay' } & LoopDelayStats)
  | { type: 'signal_received'; signal: string };

/** Where pi's events go (the bridge's bus). */
export type EmitPiEvent = (event: PiEvent) => void;
