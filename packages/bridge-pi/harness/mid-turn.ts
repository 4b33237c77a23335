/**
 * Test helper: find the pi worker that is mid-turn for one delivery of a mail (its model request
 * is held open by the scripted model), so a test can kill it or its launcher.
 */
import type { ManagedProcess, Stack } from '@agentmail/testkit';

/**
 * Waits for the worker of delivery `attempt` of `mailId` (event `worker_spawned`) and for its model
 * request for `task`; returns the worker's pid. `seen` holds the journal sequence numbers of
 * earlier requests, so each attempt waits for its own (the request's number is added to it).
 */
export async function workerMidTurn(
  stack: Stack,
  bridge: ManagedProcess,
  args: { mailId: string; attempt: number; task: string; seen?: Set<number>; timeoutMs: number },
): Promise<number> {
  const spawned = await bridge.waitForEvent(
    'worker_spawned',
    args.timeoutMs,
    (e) => e.mail_id === args.mailId && e.attempt === args.attempt,
  );
  const request = await stack.awaitModelRequest(
    (r) => r.lastUserText.includes(args.task) && r.toolNames.length > 0 && !args.seen?.has(r.seq),
    args.timeoutMs,
  );
  args.seen?.add(request.seq);
  return Number(spawned.worker_pid);
}
