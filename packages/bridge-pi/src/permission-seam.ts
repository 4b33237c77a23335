/**
 * The permission seam of pi: a `tool_call` handler (see SPEC P-1..P-8, §7 pi). It is an adapter:
 * pi's tool call → a decision function (the mail turn's `ActiveTurn.decide`, or shared-policy's
 * `decideGuardedCall` in a person's own pi) → pi's `{ block, reason }`; a P-5 yield becomes pi's
 * local confirm prompt.
 */
import type { GuardedCall, PermissionOutcome } from '@agentmail/bridge-kit';
import type { ExtensionContext, ToolCallEvent, ToolCallEventResult } from '@earendil-works/pi-coding-agent';

/** Decide one tool call; `hasUI` says whether a person looks at this pi (P-5 yield possible). */
export type DecideToolCall = (
  call: GuardedCall,
  how: { hasUI: boolean; signal?: AbortSignal },
) => Promise<PermissionOutcome>;

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
 * Build the `tool_call` handler over `decide`: `allow` → `undefined` (pi runs the tool), a denial
 * → `{ block: true, reason }`, a yield → pi's local confirm prompt.
 */
export function createPermissionHandler(decide: DecideToolCall): Handler {
  return async (event, ctx) => {
    const outcome = await decide(
      {
        toolName: event.toolName,
        input: event.input,
        toolCallId: event.toolCallId,
        platformSessionId: ctx.sessionManager.getSessionId(),
        cwd: ctx.cwd,
      },
      { hasUI: ctx.hasUI, ...(ctx.signal ? { signal: ctx.signal } : {}) },
    );
    if (outcome.allow === true) return undefined;
    if (outcome.allow === 'local') return askLocally(ctx, event.toolName, outcome.reason);
    return block(outcome.reason);
  };
}
