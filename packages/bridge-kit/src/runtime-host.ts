/**
 * The contract between `BridgeRuntime` and what runs on it (createBridge): the runtime's
 * configuration, one delivery of a mail ({@link MailRun}), the host side ({@link BridgeHost}) and
 * the error that redelivers a lost turn (SPEC B-7, B-12..B-15, B-18, G-22, G-25).
 */
import type { HeartbeatRequest, NewMailEvent, PermissionDecisionEvent } from '@agentmail/protocol';
import type { GatewayClient, SseSleep } from '@agentmail/shared-policy/client';
import type { TurnGate } from './turn-gate.js';
import type { MailTurnReport } from './turn-report.js';

/** Configuration of `BridgeRuntime`. */
export interface BridgeRuntimeConfig {
  gatewayUrl: string;
  agentKey: string;
  agentName: string;
  /** Registered platform name (`pi`, `opencode`, …). */
  platform: string;
  /** Bridge version for register and heartbeat. */
  version: string;
  /** Sessions in parallel (B-13). */
  concurrency: number;
  /** Heartbeat period, in ms (G-25). */
  heartbeatMs: number;
  /** Turn timeout, in ms (B-7). */
  turnTimeoutMs: number;
  /** After a timeout or shutdown abort, how long before giving up on the turn, in ms. @default STOP_GRACE_MS */
  stopGraceMs?: number;
  /** The catch-up waits at most this long for the first SSE open, in ms. @default FIRST_SSE_OPEN_WAIT_MS */
  firstSseOpenWaitMs?: number;
  /** Locale of failure mails. @default 'en' */
  locale?: string;
  /** Waits between redeliveries, in ms (B-14). @default REDELIVERY_BACKOFF_MS */
  redeliveryBackoffMs?: readonly number[];
  /** Reconnect sleep of the event stream (tests). @default the SseClient's */
  sseSleep?: SseSleep;
  /**
   * The bridge's data directory: when set, only the process holding the bridge lock there (one per
   * agent name, `BridgeLock`) acts as the bridge; `start()` of any other waits in standby
   * and takes over when the holder stops or dies (see SPEC G-22). Unset: no lock (tests).
   */
  lockDir?: string;
  /**
   * The bridge's data directory for its started-turn record (`StartedTurns`): a mail whose
   * turn a crash or a stop interrupted runs as a retry (B-10, B-14). Unset: only redeliveries
   * within this process are retries.
   */
  dataDir?: string;
  /** A bridge lock not refreshed for this long is taken over, in ms. @default BRIDGE_LOCK_STALE_MS */
  lockStaleMs?: number;
  /** A standby tries to take the bridge lock this often, in ms. @default BRIDGE_LOCK_RETRY_MS */
  lockRetryMs?: number;
}

/** The host's part of every heartbeat (G-25): omit what cannot be read. */
export interface HeartbeatSnapshot {
  sessions?: HeartbeatRequest['sessions'];
  models?: HeartbeatRequest['models'];
  mode_enforcement: 'native' | 'advisory';
  mode_enforcement_reason?: string;
  /** The workspace sandbox (P-12): `verified` or `unverified: <why>`. */
  sandbox?: string;
}

/** One delivery of a mail to the host. */
export interface MailRun {
  mail: NewMailEvent;
  /** A catch-up delivery (B-20). */
  backlog: boolean;
  /** 1-based delivery attempt (B-14). */
  attempt: number;
  /** An earlier turn of this mail ended without an outcome (a lost worker, a crash or stop mid-turn). */
  retry: boolean;
  /** From the last heartbeat answer (G-27). */
  allowedModels: readonly string[];
  /** The live client (after B-18 switches). */
  client: GatewayClient;
  /** Aborted on turn timeout (reason `'timeout'`) and shutdown (`'shutdown'`). */
  signal: AbortSignal;
  /** The turn timeout the signal enforces, in ms (B-7): named in a timeout failure mail. */
  turnTimeoutMs: number;
  /** The relay commits through it: never both a reply and a timeout failure mail (B-7, B-10). */
  gate: TurnGate;
  /** Aborted when the runtime gave the turn up (not ended within the grace period): close its seams. */
  released: AbortSignal;
}

/** Throw this from `runMail` when the host lost the turn before it reported (worker died): redelivered with backoff (B-14). */
export class TurnLostError extends Error {
  override readonly name = 'TurnLostError';
}

/** The host side of `BridgeRuntime`. */
export interface BridgeHost {
  /** The host's snapshot for the next heartbeat (G-25). A throw fails that heartbeat. */
  heartbeat(): Promise<HeartbeatSnapshot>;
  /** Run one mail turn end to end (usually via runMailTurn). Should not throw except {@link TurnLostError}. */
  runMail(run: MailRun): Promise<MailTurnReport>;
  /** An SSE `permission_decision` (G-21). */
  onPermissionDecision?(event: PermissionDecisionEvent): void;
  /** After B-18 switched the live client and stream. */
  onReconnect?(url: string, key: string): void;
  /** Shutdown hook: resolve pending permissions as denied (P-7), stop turns (B-15). */
  onShutdown?(): Promise<void> | void;
  /** The bridge lock was lost (this process was frozen past its staleness): the runtime has stopped. */
  onLockLost?(): void;
  /** This process holds the bridge lock and is about to register: start what only the bridge may run (the turn RPC). A throw fails `start()`. */
  onLead?(): Promise<void> | void;
}
