/**
 * What one mail turn is given (see {@link runMailTurn}): the mail, the delivery and the bridge's
 * shared state. Its own module so that the turn's steps can share it.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import type { Locale, PendingPermissions } from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';
import type { ExplicitSendRecord } from './explicit-sends.js';
import type { GrantStore } from './grant-store.js';
import type { TurnSandbox } from './sandbox/sandbox.js';
import type { SessionBindings } from './session-bindings.js';
import type { CommitFn } from './turn-gate.js';
import type { ActiveTurn, TurnRegistry } from './turn-registry.js';

/** Input of `runMailTurn`: the mail and the bridge's shared state. */
export interface MailTurnInput {
  mail: NewMailEvent;
  /** A catch-up delivery (B-20): the prompt says so. */
  backlog: boolean;
  /** 1-based delivery attempt (B-14): part of the explicit-send turn id. */
  attempt: number;
  /**
   * An earlier turn of this mail ended without an outcome (a lost worker, or a bridge process that
   * crashed or stopped mid-turn): the prompt says it is a retry (B-10, B-14). @default false
   */
  retry?: boolean;
  agentName: string;
  /** The admin's ordered selection (G-27). */
  allowedModels: readonly string[];
  /** `provider/model` used when nothing is selected (B-8); '' or absent: the host's own default. */
  hostDefault?: string;
  /** The live client; the turn derives a client whose downloads stay inside its working directory. */
  client: GatewayClient;
  /** The bridge's data directory: per-session fallback workspaces live in `<dataDir>/workspaces` (B-3). */
  dataDir: string;
  bindings: SessionBindings;
  /** B-10: explicit sends of this turn. */
  explicitSends: ExplicitSendRecord;
  /** P-4: "always" grants (file-backed in the data directory). */
  grants: GrantStore;
  /** Where the turn's permission waits are woken (P-6, P-7). */
  pending: PendingPermissions;
  locale: Locale;
  /**
   * Aborted on turn timeout or shutdown: no further attempt starts. A shutdown (reason
   * `'shutdown'`) sends no failure mail: the mail stays unread and runs again after a restart.
   */
  signal: AbortSignal;
  /** The turn timeout, in ms, named in a timeout failure mail (B-7, B-9). */
  turnTimeoutMs?: number;
  /** How long a question waits for the person, in ms (P-9): then the model gets a timeout error. @default the turn's own signal only */
  questionTimeoutMs?: number;
  /** The verified workspace sandbox ({@link TurnJob.sandbox}): its confined tools run unasked in `workspace` (P-1). */
  sandbox?: TurnSandbox;
  /** The sandbox's state, shown with each approval request (P-12). */
  sandboxStatus?: string;
  emit: EmitEvent;
  /** The relay goes through the turn's commit gate (one outcome per mail). @default no gate */
  commit?: CommitFn;
  /** Running turns, for host hooks. @default a turn is not registered */
  registry?: TurnRegistry;
  /** Aborted when the runtime gave the turn up (its work did not end in time): the turn's seams close at once. */
  released?: AbortSignal;
  /** Called with the running turn before the first attempt (e.g. to open its RPC token) and its end. */
  onTurn?: (turn: ActiveTurn) => (() => void) | undefined;
  /** B-18: the connect_to_server tool switched Gateway (already probed). */
  onReconnect(url: string, key: string, client: GatewayClient): void;
}
