/**
 * The decision flow of a permission seam, platform-neutral (see SPEC P-1..P-8): mode → grant →
 * ask a person by mail → wait → outcome. A bridge maps its hook's event to a {@link GuardedCall}
 * and the {@link PermissionOutcome} back to its host's answer.
 */
import {
  buildApprovalRequest,
  classifyPermissionFailure,
  decideToolCall,
  denialText,
  formatText,
  isDuplicateRelay,
  type Locale,
  type PermissionDecision,
  type Platform,
} from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';
import type { GrantStore } from './grant-store.js';
import { withdrawRequest } from './withdraw.js';

/** One tool call the platform's seam saw. */
export interface GuardedCall {
  /** Tool name as the platform reports it. */
  toolName: string;
  /** Tool input (shown to the person, truncated). */
  input: unknown;
  toolCallId: string;
  /** The platform's own session id (part of the relay key). */
  platformSessionId: string;
  /** Working directory of the call. */
  cwd: string;
  /**
   * The platform asked about this call itself (its own config says "ask"): decide it as a guarded
   * tool even when the name is not in the guarded list, so it never passes unasked. @default false
   */
  forceGuarded?: boolean;
}

/** What {@link decideGuardedCall} needs from its host (a worker, a plugin, a hook process). */
export interface PermissionFlowOptions {
  platform: Platform;
  /** The host's guarded tool names, from its descriptor (`host.json`); undefined guards every tool (P-3). */
  guardedTools: readonly string[] | undefined;
  agentName: string;
  /** The session's permission mode as received (normalised here, P-2). */
  mode(): string | null | undefined;
  /** Gateway session id of the turn; '' = not an AgentMail session (cannot ask by mail). */
  sessionId(): string;
  /** The live Gateway client (B-18 may switch it). */
  client(): GatewayClient;
  /** "Always" grants per (session, tool), persistent across processes when file-backed (P-4). */
  grants: GrantStore;
  /** Wait for the `permission_decision` of `relayKey`; never rejects (an abort denies). */
  waitForDecision(relayKey: string, signal?: AbortSignal): Promise<PermissionDecision>;
  /** A person looks at the platform's own UI (P-5 yield is possible). */
  hasLocalUi: boolean;
  locale: Locale;
  /** Where the flow's events go (`permission_refused`, `permission_asked`, `permission_decided`, …). @default dropped */
  emit?: EmitEvent;
  /** The mail the turn handles: part of the request's relay key (ids of a host may repeat). @default none */
  mailId?: string;
  /**
   * The tools a verified workspace sandbox confines (P-1, P-12): in `workspace` mode they run
   * unasked, the kernel keeps them in. Names as the platform reports them. @default none
   */
  sandboxConfines?: readonly string[];
  /** The sandbox's state for the person's request (`verified`, `unverified: <why>`, P-12). @default not shown */
  sandboxStatus?: string;
}

/**
 * The outcome of a guarded call:
 * - `{ allow: true, always? }`: run it; `always` = the person chose "always" (platforms with their own "always" reply use it);
 * - `{ allow: false, reason }`: refuse; `reason` is the text the model sees (P-1, P-5, P-6);
 * - `{ allow: 'local', reason }`: yield to the platform's own local prompt (P-5).
 */
export type PermissionOutcome =
  | { allow: true; always?: boolean }
  | { allow: false; reason: string }
  | { allow: 'local'; reason: string };

/**
 * Decide one tool call (see SPEC P-1..P-6):
 * - unguarded tools, `full` mode and existing "always" grants pass; `plan` refuses guarded tools
 *   with the plan text (P-1); an unknown mode is `workspace` (P-2);
 * - otherwise a person is asked by mail (`POST /permission/request`) and the call waits for the
 *   decision: only `approve_once` / `approve_always` pass (P-4); `approve_always` is recorded in
 *   `grants`; anything else is a denial whose text carries the note and the fresh mails (P-6);
 * - a failed request fails closed (P-5): 409 denies with the server's words unless it says the
 *   mode is `full` (allow); `duplicate_relay` and other 4xx deny; 5xx/network yield to the local
 *   prompt only when `hasLocalUi`, else deny. Not an AgentMail session (`sessionId() === ''`):
 *   yield when `hasLocalUi`, else deny;
 * - a wait that ends without a person's decision (timeout, a stopped turn, shutdown) withdraws the
 *   request at the Gateway, so the person is told it no longer waits.
 *
 * Never throws.
 * @example const o = await decideGuardedCall({ toolName: 'bash', input, toolCallId, platformSessionId, cwd }, options, signal);
 */
export async function decideGuardedCall(
  call: GuardedCall,
  options: PermissionFlowOptions,
  signal?: AbortSignal,
): Promise<PermissionOutcome> {
  const { locale } = options;
  const emit: EmitEvent = options.emit ?? (() => undefined);
  try {
    return await decide(call, options, signal, emit);
  } catch (err) {
    // Never throws (a host that read a throw as "go ahead" would fail open): a bug is a denial.
    const reason = formatText('permission.failure.unavailable', { cause: String(err) }, locale);
    emit({ type: 'permission_failed', tool: call.toolName, outcome: 'deny', reason });
    return { allow: false, reason };
  }
}

async function decide(
  call: GuardedCall,
  options: PermissionFlowOptions,
  signal: AbortSignal | undefined,
  emit: EmitEvent,
): Promise<PermissionOutcome> {
  const { locale } = options;
  // A stopped turn asks nobody: its answer would wake no one (P-7).
  const stopped = (): PermissionOutcome => ({
    allow: false,
    reason:
      signal?.reason === 'shutdown'
        ? denialText({ cause: 'shutdown', locale })
        : formatText('permission.turn_ended', {}, locale),
  });
  if (signal?.aborted) return stopped();
  const toolName = call.toolName;
  const sessionId = options.sessionId();
  const alwaysGranted = sessionId ? await options.grants.has(sessionId, toolName).catch(() => false) : false;
  const decision = decideToolCall({
    mode: options.mode(),
    guardedTools: options.guardedTools,
    toolName,
    alwaysGranted,
    locale,
    ...(call.forceGuarded === true ? { forceGuarded: true } : {}),
    ...(options.sandboxConfines?.some((t) => t.toLowerCase() === toolName.toLowerCase())
      ? { sandboxVerified: true }
      : {}),
  });
  if (decision.decision === 'allow') return { allow: true };
  if (decision.decision === 'deny') {
    emit({ type: 'permission_refused', tool: toolName, mode: String(options.mode()) });
    return { allow: false, reason: decision.reason ?? '' };
  }

  const failed = (err: unknown): PermissionOutcome => {
    // The request was cut short by the turn's own stop (shutdown, timeout): not a Gateway failure.
    if (signal?.aborted) {
      const o = stopped();
      emit({
        type: 'permission_failed',
        tool: toolName,
        outcome: 'deny',
        reason: (o as { reason: string }).reason,
      });
      return o;
    }
    const f = classifyPermissionFailure(err, { hasLocalUi: options.hasLocalUi, locale });
    emit({ type: 'permission_failed', tool: toolName, outcome: f.decision, reason: f.reason });
    if (f.decision === 'allow') return { allow: true };
    return f.decision === 'yield' ? { allow: 'local', reason: f.reason } : { allow: false, reason: f.reason };
  };
  if (!sessionId) return failed(new Error(`this ${options.platform} session is not an AgentMail session`));

  return askAndWait(call, options, { sessionId, signal, emit, failed });
}

/**
 * The asking half of {@link decide} (P-4, P-6, P-7): file the permission request at the Gateway,
 * wait for its decision, withdraw it when nobody waits any more, keep an "always". `failed` turns
 * a Gateway failure into the outcome P-5 gives it.
 */
async function askAndWait(
  call: GuardedCall,
  options: PermissionFlowOptions,
  at: {
    sessionId: string;
    signal: AbortSignal | undefined;
    emit: EmitEvent;
    failed: (err: unknown) => PermissionOutcome;
  },
): Promise<PermissionOutcome> {
  const { locale } = options;
  const { sessionId, signal, emit, failed } = at;
  const toolName = call.toolName;
  const request = buildApprovalRequest({
    agentName: options.agentName,
    toolName,
    input: call.input,
    sessionId,
    platformSessionId: call.platformSessionId || sessionId,
    // A seam that gives no call id (Claude Code's PermissionRequest) still gets a unique key.
    toolCallId: call.toolCallId || `call-${globalThis.crypto.randomUUID()}`,
    cwd: call.cwd,
    locale,
    ...(options.mailId ? { mailId: options.mailId } : {}),
    ...(options.sandboxStatus ? { sandbox: options.sandboxStatus } : {}),
  });
  let requestId: string;
  try {
    const res = await options.client().permissionRequest(request, signal ? { signal } : {});
    if (isDuplicateRelay(res)) throw res;
    requestId = res.request_id;
    emit({
      type: 'permission_asked',
      tool: toolName,
      relay_key: request.relay_key,
      request_id: res.request_id,
      kind: 'approval',
    });
  } catch (err) {
    return failed(err);
  }

  const d = await options.waitForDecision(request.relay_key, signal);
  emit({
    type: 'permission_decided',
    tool: toolName,
    relay_key: request.relay_key,
    decision: d.decision,
    source: d.source,
  });
  // Nobody waits any more (timeout, stop, shutdown): say so, so a late approval is not mistaken
  // for one that runs. In the background: the host gets its answer at once; a process that exits
  // after the turn awaits `withdrawalsSettled()`.
  void withdrawRequest(options.client(), requestId, d.source, toolName, emit);
  if (d.decision === 'approve_once' || d.decision === 'approve_always') {
    if (d.decision === 'approve_always')
      await options.grants.record(sessionId, toolName, d.decision).catch((err: unknown) => {
        emit({ type: 'grant_not_stored', tool: toolName, error: String(err) });
      });
    return d.decision === 'approve_always' ? { allow: true, always: true } : { allow: true };
  }
  return {
    allow: false,
    reason: denialText({ note: d.note, freshMails: d.freshMails, cause: d.source, locale }),
  };
}
