/**
 * The pi bridge's own events, on the kit's bus beside the kit's (`BridgeEvent`) and the kit's
 * child-process runner's (`ChildTurnEvent`: launcher and workers): logged as JSON lines with
 * `event: <type>` like every kit event; tests and the bench read those.
 */
import type { ChildTurnEvent } from '@agentmail/bridge-kit';
import type { LoopDelayStats } from './loop-stats.js';

/** Events of the pi daemon and its workers (SPEC B-12, B-14, P-8). */
export type PiEvent =
  | ChildTurnEvent
  | { type: 'permission_hook_installed'; mail_id: string }
  | { type: 'probe_done'; enforcement: 'native' | 'advisory'; models: number; error?: string }
  | ({ type: 'loop_delay' } & LoopDelayStats)
  | { type: 'signal_received'; signal: string };

/** Where pi's events go (the bridge's bus). */
export type EmitPiEvent = (event: PiEvent) => void;
