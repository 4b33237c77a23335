/**
 * The permission seam of pi: a `tool_call` handler (see SPEC P-1..P-8, §7 pi). It is an adapter:
 * pi's tool call → shared-policy decisions → pi's `{ block, reason }`.
 */
import {
  buildApprovalRequest,
  classifyPermissionFailure,
  decideToolCall,
  denialText,
  type GatewayClient,
  type GrantStore,
  isDuplicateRelay,
  type Locale,
  type PermissionDecision,
} from '@agentmail/shared-policy';
import type { ExtensionContext, ToolCallEvent, ToolCallEventResult } from '@earendil-works/pi-coding-agent';

/** What the seam needs from its host (worker or a person's own pi). */
export interface PermissionSeamOptions {
  agentName: string;
  /** The session's permission mode as received (normalised by shared-policy, P-2). */
  mode: () => string | null | undefined;
  /** Gateway session id of the turn; '' when this pi session has none (cannot ask by mail). */
  sessionId: () => string;
  client: () => GatewayClient;
  grants: GrantStore;
  /** Wait for the `permission_decision` of `relayKey` (never rejects; aborts deny). */
  waitForDecision: (relayKey: string, signal: AbortSignal | undefined) => Promise<PermissionDecision>;
  locale: Locale;
  log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, string>) => void;
}

type Handler = (event: ToolCallEvent, ctx: ExtensionContext) => Promise<ToolCallEventResult | undefined>;

const block = (reason: string): ToolCallEventResult => ({ block: true, reason });

/** A local yes/no prompt, only where a person looks at pi (P-5 "yield"). Fails closed. */
async function askLocally(
  ctx: ExtensionContext,
  toolName: string,
  reason: string,
): Promise<ToolCallEventResult | undefined> {
  if (!ctx.hasUI) return block(reason);
  try {
    const ok = await ctx.ui.confirm(`Allow ${toolName}?`, reason);
    return ok ? undefined : block(reason);
  } catch {
    return block(reason);
  }
}

/**
 * Build the `tool_call` handler. Unguarded tools pass; `plan` refuses guarded tools with the
 * plan text; `workspace` asks a person by mail (unless an "always" grant exists) and waits for
 * the decision; `full` passes. Every failure blocks (P-5), except a 409 saying the session is
 * `full`. A denial's reason carries the person's note and the mails that arrived meanwhile (P-6).
 */
export function createPermissionHandler(options: PermissionSeamOptions): Handler {
  const { locale } = options;
  return async (event, ctx) => {
    const toolName = event.toolName;
    const sessionId = options.sessionId();
    const alwaysGranted = sessionId
      ? await options.grants.has(sessionId, toolName).catch(() => false)
      : false;
    const decision = decideToolCall({
      mode: options.mode(),
      platform: 'pi',
      toolName,
      alwaysGranted,
      locale,
    });
    if (decision.decision === 'allow') return undefined;
    if (decision.decision === 'deny') {
      options.log('info', 'tool refused by permission mode', {
        tool: toolName,
        mode: String(options.mode()),
      });
      return block(decision.reason ?? '');
    }

    if (!sessionId) {
      const f = classifyPermissionFailure(new Error('this pi session is not an AgentMail session'), {
        hasLocalUi: ctx.hasUI,
        locale,
      });
      return f.decision === 'yield' ? askLocally(ctx, toolName, f.reason) : block(f.reason);
    }

    const request = buildApprovalRequest({
      agentName: options.agentName,
      toolName,
      input: event.input,
      sessionId,
      platformSessionId: ctx.sessionManager.getSessionId(),
      toolCallId: event.toolCallId,
      cwd: ctx.cwd,
      locale,
    });
    try {
      const res = await options.client().permissionRequest(request, ctx.signal ? { signal: ctx.signal } : {});
      if (isDuplicateRelay(res)) throw res;
      options.log('info', 'permission requested', {
        tool: toolName,
        relay_key: request.relay_key,
        request_id: res.request_id,
      });
    } catch (err) {
      const f = classifyPermissionFailure(err, { hasLocalUi: ctx.hasUI, locale });
      options.log('warn', 'permission request failed', {
        tool: toolName,
        decision: f.decision,
        reason: f.reason,
      });
      if (f.decision === 'allow') return undefined;
      return f.decision === 'yield' ? askLocally(ctx, toolName, f.reason) : block(f.reason);
    }

    const d = await options.waitForDecision(request.relay_key, ctx.signal);
    options.log('info', 'permission decided', {
      tool: toolName,
      relay_key: request.relay_key,
      decision: d.decision,
      source: d.source,
    });
    if (d.decision === 'approve_once' || d.decision === 'approve_always') {
      await options.grants.record(sessionId, toolName, d.decision).catch((err: unknown) => {
        options.log('warn', 'could not store the "always" grant', { message: String(err) });
      });
      return undefined;
    }
    return block(denialText({ note: d.note, freshMails: d.freshMails, cause: d.source, locale }));
  };
}
