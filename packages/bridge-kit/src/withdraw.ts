/**
 * Withdrawing a request nobody waits for any more: when a permission or question wait ends
 * without a person's decision (timeout, a stopped turn, shutdown), the bridge tells the Gateway,
 * so the person sees the request go and is told "no longer waiting" if they answer it — instead
 * of approving something that changes nothing.
 */
import type { WithdrawReason } from '@agentmail/protocol';
import { type DecisionSource, messageOf } from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';

/** Time a withdrawal may take, in ms (it runs while a turn or the bridge stops). @default 5_000 */
export const WITHDRAW_TIMEOUT_MS = 5_000;

const inFlight = new Set<Promise<void>>();

/**
 * Resolves once every withdrawal under way in this process has settled (at most
 * {@link WITHDRAW_TIMEOUT_MS}). A process that exits when its turn ends (a pi worker) awaits it
 * first: the turn's abort ends the turn while the withdrawal of its pending request is still on
 * the wire. Never rejects.
 */
export async function withdrawalsSettled(): Promise<void> {
  await Promise.all([...inFlight]);
}

/**
 * Withdraw request `requestId` after its wait ended for `source`; a no-op for a person's decision.
 * Never throws: a failure is an event (the Gateway expires the request when the bridge registers
 * again). Deliberately without the turn's signal: that one is aborted when this runs.
 */
export async function withdrawRequest(
  client: GatewayClient,
  requestId: string,
  source: DecisionSource,
  tool: string,
  emit: EmitEvent,
): Promise<void> {
  if (source === 'person') return;
  const done = withdraw(client, requestId, source, tool, emit);
  inFlight.add(done);
  try {
    await done;
  } finally {
    inFlight.delete(done);
  }
}

async function withdraw(
  client: GatewayClient,
  requestId: string,
  source: Exclude<DecisionSource, 'person'>,
  tool: string,
  emit: EmitEvent,
): Promise<void> {
  const reason: WithdrawReason = source;
  try {
    const res = await client.permissionWithdraw(requestId, reason, { timeoutMs: WITHDRAW_TIMEOUT_MS });
    emit({ type: 'permission_withdrawn', tool, request_id: requestId, reason, status: res.status });
  } catch (err) {
    emit({
      type: 'permission_withdrawn',
      tool,
      request_id: requestId,
      reason,
      error: messageOf(err),
    });
  }
}
