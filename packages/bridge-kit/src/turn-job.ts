/**
 * A mail turn as data: what a delivery hands the process that runs the turn (SPEC B-12: pi runs
 * each turn in a child process). The one mapping from a delivery to {@link runMailTurn}'s input
 * lives here, for in-process bridges and child processes alike.
 */
import { join } from 'node:path';
import type { NewMailEvent } from '@agentmail/protocol';
import type { PendingPermissions, Platform } from '@agentmail/shared-policy';
import { resolveLocale } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import type { TurnAdapter } from './adapter.js';
import type { EmitEvent } from './events.js';
import { ExplicitSendRecord } from './explicit-sends.js';
import { GrantStore } from './grant-store.js';
import { type MailTurnInput, runMailTurn } from './mail-turn.js';
import type { TurnSandbox } from './sandbox/sandbox.js';
import { SessionBindings } from './session-bindings.js';
import type { CommitFn } from './turn-gate.js';
import type { ActiveTurn, TurnRegistry } from './turn-registry.js';
import type { MailTurnReport } from './turn-report.js';

/** One delivery of a mail, as plain JSON (it crosses a process boundary). */
export interface TurnJob {
  mail: NewMailEvent;
  /** A catch-up delivery (B-20). */
  backlog: boolean;
  /** 1-based delivery attempt (B-14). */
  attempt: number;
  /** An earlier turn of this mail ended without an outcome: the prompt says it is a retry (B-10, B-14). */
  retry?: boolean;
  platform: Platform;
  agentName: string;
  /** The admin's ordered selection from the last heartbeat (G-27). */
  allowedModels: string[];
  /** `provider/model` when nothing is selected (B-8), or ''. */
  hostDefault: string;
  /** The live Gateway (after B-18 switches). */
  gatewayUrl: string;
  agentKey: string;
  /** The bridge's data directory (absolute). */
  dataDir: string;
  locale: string;
  /** The turn timeout, in ms (B-7): named in a timeout failure mail. */
  turnTimeoutMs: number;
  /** How long a question waits for the person, in ms (P-9). @default the turn's own signal only */
  questionTimeoutMs?: number;
  /**
   * The verified workspace sandbox (P-1, P-12), present only when the start-time self-check held:
   * bubblewrap, and the tools the host confines in it (they run unasked in `workspace` mode).
   */
  sandbox?: TurnSandbox;
  /** The sandbox's state as the heartbeat says it (`verified`, `unverified: <why>`), shown in requests. */
  sandboxStatus?: string;
}

/** What the process running a turn provides besides the job. */
export interface TurnIo {
  /** Where permission decisions for this turn arrive (P-6, P-7). */
  pending: PendingPermissions;
  /** Aborted on timeout or shutdown. */
  signal: AbortSignal;
  /** Aborted when the runtime gave the turn up: its seams close at once. @default never */
  released?: AbortSignal;
  emit: EmitEvent;
  /** The relay's commit gate (in a child process: a round trip to the runtime). @default none */
  commit?: CommitFn;
  /** Running turns, for host hooks. */
  registry?: TurnRegistry;
  /** The running turn, before its first attempt (e.g. to open its RPC token); returns its end. */
  onTurn?: (turn: ActiveTurn) => (() => void) | undefined;
  /** B-18: connect_to_server switched Gateway (already probed). */
  onReconnect(url: string, key: string): void;
  /** Shared explicit-send record. @default a fresh in-memory one */
  explicitSends?: ExplicitSendRecord;
  /** Shared grants. @default the data directory's `grants.json` */
  grants?: GrantStore;
  /** Shared bindings. @default the data directory's */
  bindings?: SessionBindings;
}

/** The input of {@link runMailTurn} for a job: the one mapping, used in-process and in child processes. */
export function mailTurnInput(job: TurnJob, io: TurnIo): MailTurnInput {
  return {
    mail: job.mail,
    backlog: job.backlog,
    attempt: job.attempt,
    ...(job.retry ? { retry: true } : {}),
    agentName: job.agentName,
    allowedModels: job.allowedModels,
    ...(job.hostDefault ? { hostDefault: job.hostDefault } : {}),
    client: new GatewayClient({ baseUrl: job.gatewayUrl, key: job.agentKey }),
    dataDir: job.dataDir,
    bindings: io.bindings ?? new SessionBindings(job.dataDir),
    explicitSends: io.explicitSends ?? new ExplicitSendRecord(),
    grants: io.grants ?? new GrantStore({ file: join(job.dataDir, 'grants.json') }),
    pending: io.pending,
    locale: resolveLocale(job.locale),
    signal: io.signal,
    ...(io.released ? { released: io.released } : {}),
    turnTimeoutMs: job.turnTimeoutMs,
    ...(job.questionTimeoutMs === undefined ? {} : { questionTimeoutMs: job.questionTimeoutMs }),
    ...(job.sandbox ? { sandbox: job.sandbox } : {}),
    ...(job.sandboxStatus ? { sandboxStatus: job.sandboxStatus } : {}),
    emit: io.emit,
    ...(io.commit ? { commit: io.commit } : {}),
    ...(io.registry ? { registry: io.registry } : {}),
    ...(io.onTurn ? { onTurn: io.onTurn } : {}),
    onReconnect: (url, key) => io.onReconnect(url, key),
  };
}

/**
 * Run the turn of `job` on `adapter` (see SPEC B-3..B-11). For a bridge whose turns run in a
 * child process: the child receives the job and calls this. Never throws.
 * @example const report = await runTurnJob(job, piTurns, { pending, signal, emit: forward, commit, onReconnect });
 */
export function runTurnJob(job: TurnJob, adapter: TurnAdapter, io: TurnIo): Promise<MailTurnReport> {
  return runMailTurn(mailTurnInput(job, io), adapter);
}
