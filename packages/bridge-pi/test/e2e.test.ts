/**
 * pi-specific end-to-end checks the conformance suite (conformance.test.ts) does not make, on the
 * same stack: a Gateway child process, the scripted model as pi's provider, and the `agentmail-pi`
 * daemon forking one real pi worker per mail.
 */
import { formatText, HOST_DEFAULT_LOG_LINE } from '@agentmail/shared-policy';
import {
  CONFORMANCE_MODELS,
  marker,
  startConformanceStack,
  textPattern,
  turnStart,
} from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

afterAll(removeBundle);

/** The daemon's JSON log lines (stderr), parsed. */

describe('bridge-pi on the real pi SDK', () => {
  it('no allowed models: one attempt with the host default, logged loudly; an HTTP 500 gives a failure mail with the cause (B-8, B-9)', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('host-default');
    stack.model.addScenarios([
      {
        name: `${task}:500`,
        match: turnStart(task),
        reply: { type: 'error', status: 500, message: `upstream exploded ${task}` },
      },
    ]);
    const bridge = await stack.startBridge(piAdapter);

    const subject = `Doomed ${task}`;
    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject, body: 'Try.' });
    const failure = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(failure).toMatchObject({
      subject: formatText('failure.subject', { subject }, 'en'),
      relay: true,
      from_human: false,
    });
    expect(failure.body).toContain(`upstream exploded ${task}`);
    expect(failure.body).toMatch(textPattern('failure.all_models_failed'));

    const tries = stack.model.requests({ match: turnStart(task) });
    expect(
      tries.map((r) => r.model),
      'one attempt, on the host default (pi retries are off)',
    ).toEqual([CONFORMANCE_MODELS.working]);
    const loud = bridge.bridgeEvents('model_order').find((e) => e.host_default);
    expect(loud?.line, 'the host default is reported').toContain(HOST_DEFAULT_LOG_LINE);
    expect(loud?.level, 'the host default is logged as a warning').toBe(40);

    // A second mail: its worker finds node's compile cache warm.
    const again = await stack.sendAs(undefined, sent.address, { subject: `Again ${task}`, body: 'Try.' });
    await stack.awaitReply({ inReplyTo: again.mail_id, from: stack.agent.name });

    // Worker spawn → first model request, per mail (both wall clocks of this machine).
    const spawnToRequestMs = [sent, again].map((mail, index) => {
      const spawned = bridge.bridgeEvents('worker_spawned').find((e) => e.mail_id === mail.mail_id);
      const request = stack.model.requests({ match: turnStart(task) })[index];
      return typeof spawned?.time === 'number' && request ? request.receivedAtMs - spawned.time : Number.NaN;
    });
    console.info(
      `bridge-pi: worker spawn → first model request (cold, warm) ${spawnToRequestMs.join(', ')} ms`,
    );
  });
});
