/**
 * The permission seam of pi: a `tool_call` handler (see SPEC P-1..P-8, §7 pi). It is an adapter:
 * pi's tool call → shared-policy's {@link decideGuardedCall} → pi's `{ block, reason }`; a P-5
 * yield becomes pi's local confirm prompt.
 */
import { decideGuardedCall, type PermissionFlowOptions } from '@agentmail/shared-policy/bridge';
import type { ExtensionContext, ToolCallEvent, ToolCallEventResult } from '@earendil-works/pi-coding-agent';

/** What the seam needs from its host (worker or a person's own pi); `hasLocalUi` comes from pi's `ctx.hasUI`. */
export type PermissionSeamOptions = Omit<PermissionFlowOptions, 'hasLocalUi'>;

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
 * Build the `tool_call` handler: the decision is shared-policy's {@link decideGuardedCall}
 * (mode, grants, a person asked by mail, fail-closed failures, denial text with the note);
 * `allow` → `undefined` (pi runs the tool), a denial → `{ block: true, reason }`, a yield → pi's
 * local confirm prompt.
 */
export function createPermissionHandler(options: PermissionSeamOptions): Handler {
  return async (event, ctx) => {
    const outcome = await decideGuardedCall(
      {
        toolName: event.toolName,
        input: event.input,
        toolCallId: event.toolCallId,
        platformSessionId: ctx.sessionManager.getSessionId(),
        cwd: ctx.cwd,
      },
      { ...options, hasLocalUi: ctx.hasUI },
      ctx.signal,
    );
    if (outcome.allow === true) return undefined;
    if (outcome.allow === 'local') return askLocally(ctx, event.toolName, outcome.reason);
    return block(outcome.reason);
  };
}
