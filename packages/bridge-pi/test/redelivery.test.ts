/**
 * Worker loss (SPEC B-14) on the real stack: a Gateway child process, the scripted model as pi's
 * provider and the `agentmail-pi` daemon forking one real pi worker per mail. The worker process
 * is killed (SIGKILL, its pid from the daemon's `worker spawned` line) while the scripted model
 * holds its answer: the mail is redelivered and the person gets exactly one reply; a mail whose
 * worker dies three times gets exactly one `worker_lost` failure mail.
 */

import { formatText } from '@agentmail/shared-policy';
import type { ManagedProcess, Stack } from '@agentmail/testkit';
import { answerAtOnce, marker, startConformanceStack, turnStart } from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { workerMidTurn } from '../harness/mid-turn.js';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

afterAll(removeBundle);

/** How long one step (a worker start on a loaded 2-core machine, a backoff) may take, in ms. */
const STEP_MS = 60_000;

/**
 * Waits for the worker of delivery `attempt` of `mailId` to send its model request for `task`,
 * then kills that worker with SIGKILL (mid-turn: the scripted model is holding the answer).
 * `seen` holds the journal sequence numbers of earlier requests, so each attempt waits for its own.
 */
async function killWorkerMidTurn(
  stack: Stack,
  bridge: ManagedProcess,
  args: { mailId: string; attempt: number; task: string; seen: Set<number> },
): Promise<void> {
  process.kill(await workerMidTurn(stack, bridge, { ...args, timeoutMs: STEP_MS }), 'SIGKILL');
}

describe('bridge-pi worker loss (B-14)', () => {
  it('a worker killed mid-turn is redelivered: the person gets exactly one reply; three deaths give exactly one worker_lost failure mail', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const once = marker('dies-once');
    const always = marker('dies-always');
    stack.model.addScenarios([
      // The first attempt's request is held open (the worker dies waiting); the next one is answered.
      { name: `${once}:hang`, match: turnStart(once), times: 1, reply: { type: 'hang' } },
      answerAtOnce(once, `Answered ${once} after a redelivery.`),
      { name: `${always}:hang`, match: turnStart(always), reply: { type: 'hang' } },
    ]);
    const bridge = await stack.startBridge(piAdapter);
    const seen = new Set<number>();

    // 1. Dies once, then answers: redelivered, exactly one reply.
    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Task ${once}`, body: 'Go.' });
    await killWorkerMidTurn(stack, bridge, { mailId: sent.mail_id, attempt: 1, task: once, seen });
    const reply = await stack.awaitReply({
      inReplyTo: sent.mail_id,
      from: stack.agent.name,
      timeoutMs: STEP_MS,
    });
    expect(reply.body).toContain(`Answered ${once} after a redelivery.`);
    await bridge.waitForEvent('turn_done', STEP_MS, (e) => e.mail_id === sent.mail_id);
    expect(
      bridge
        .bridgeEvents('turn_lost')
        .filter((l) => l.mail_id === sent.mail_id)
        .map((l) => l.attempt),
      'one loss, redelivered once',
    ).toEqual([1]);
    expect(
      bridge
        .bridgeEvents('worker_spawned')
        .filter((l) => l.mail_id === sent.mail_id)
        .map((l) => l.attempt),
    ).toEqual([1, 2]);
    const answers = (await stack.thread(sent.mail_id)).filter((m) => m.from_name === stack.agent.name);
    expect(
      answers.map((m) => m.body),
      'exactly one mail back: the reply, no failure mail',
    ).toEqual([reply.body]);

    // 2. Dies on every attempt: given up after three, one worker_lost failure mail.
    const subject = `Task ${always}`;
    const doomed = await stack.sendAs(undefined, stack.taskAddress(), { subject, body: 'Go.' });
    for (const attempt of [1, 2, 3])
      await killWorkerMidTurn(stack, bridge, { mailId: doomed.mail_id, attempt, task: always, seen });
    const failure = await stack.awaitReply({
      inReplyTo: doomed.mail_id,
      from: stack.agent.name,
      timeoutMs: STEP_MS,
    });
    expect(failure.subject).toBe(formatText('failure.subject', { subject }, 'en'));
    expect(failure.body).toContain(formatText('failure.worker_lost', { attempts: 3 }, 'en'));
    await bridge.waitForEvent('turn_given_up', STEP_MS, (e) => e.mail_id === doomed.mail_id);
    expect(
      bridge
        .bridgeEvents('worker_spawned')
        .filter((l) => l.mail_id === doomed.mail_id)
        .map((l) => l.attempt),
      'three attempts, no fourth',
    ).toEqual([1, 2, 3]);
    const lost = (await stack.thread(doomed.mail_id)).filter((m) => m.from_name === stack.agent.name);
    expect(
      lost.map((m) => m.subject),
      'exactly one failure mail',
    ).toEqual([failure.subject]);
  }, 240_000);
});
