/**
 * One bridge per agent and data directory (SPEC G-22: the Gateway fans each event out to every
 * stream of the agent). The plugin sits in the global opencode config, so every opencode process
 * loads it: two real `opencode serve` processes with the same sandbox (same data directory) →
 * only one holds the bridge lock and the event stream, a mail gets one turn and one reply; after
 * a SIGKILL of that one the other takes over and the next mail again gets exactly one of each.
 */
import type { ManagedProcess, Stack } from '@agentmail/testkit';
import { answerAtOnce, marker, startConformanceStack, turnStarts } from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { opencodeAdapter, removePluginBundle } from '../harness/opencode-adapter.js';

afterAll(removePluginBundle);

const TEST_TIMEOUT_MS = 300_000;
const STEP_MS = 60_000;
/** Stale lock (15 s) + standby retry (2 s) + the runtime's start (register, heartbeat, SSE) on 2 busy cores. */
const TAKEOVER_MAX_MS = 30_000;

async function replies(stack: Stack, mark: string): Promise<number> {
  return (await stack.inbox()).filter((m) => m.from_name === stack.agent.name && m.subject.includes(mark))
    .length;
}

/** Sends a mail carrying `mark` and waits for its reply; then the turn and reply counts. */
async function roundTrip(stack: Stack, mark: string): Promise<{ turns: number; replies: number }> {
  const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Task ${mark}`, body: 'Go.' });
  await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
  return { turns: turnStarts(stack.model, mark).length, replies: await replies(stack, mark) };
}

describe('bridge-opencode: several opencode processes (SPEC G-22)', () => {
  it(
    'two opencode serve with the plugin: one bridge, one turn and one reply per mail; kill -9 of it → the other takes over',
    async ({ signal }) => {
      const stack = await startConformanceStack(opencodeAdapter, { signal });
      onTestFinished(() => stack.close());
      const [t1, t2] = [marker('single1'), marker('single2')];
      stack.model.addScenarios([answerAtOnce(t1, `ANSWER ${t1}`), answerAtOnce(t2, `ANSWER ${t2}`)]);

      const first = await stack.startBridge(opencodeAdapter);
      // A second opencode process on the same machine and config: the plugin boots (warm-up) and
      // stays a standby, announced in one line.
      const second = (await opencodeAdapter.start(stack.bridgeEnv(opencodeAdapter))) as ManagedProcess;
      onTestFinished(() => void second.stop());
      // Booted: either its standby event or (without the lock) its own event stream.
      await Promise.race([
        second.waitForEvent('standby', STEP_MS),
        second.waitForEvent('stream_open', STEP_MS),
      ]);

      expect(await roundTrip(stack, t1), 'one turn and one reply').toEqual({ turns: 1, replies: 1 });
      expect(second.bridgeEvents('standby'), 'one standby event').toHaveLength(1);
      expect(first.bridgeEvents('lock_taken')).toHaveLength(1);
      expect(second.bridgeEvents('mail_queued'), 'the standby runs no mail').toEqual([]);
      expect(second.bridgeEvents('registered'), 'the standby does not register or heartbeat').toEqual([]);
      expect(
        stack.proxy.eventStreams().filter((s) => !s.closed),
        'one event stream',
      ).toHaveLength(1);

      // kill -9 the bridge: the standby takes over (stale lock) and opens the stream.
      const before = stack.proxy.eventStreams().length;
      const killedAt = Date.now();
      first.kill();
      await first.exited;
      await stack.proxy.waitForEventStream(
        (s) => s.seq > before && s.status === 200,
        TAKEOVER_MAX_MS + 5_000,
      );
      const takeoverMs = Date.now() - killedAt;
      console.info(`opencode bridge takeover after SIGKILL: ${takeoverMs} ms`);
      expect(takeoverMs).toBeLessThanOrEqual(TAKEOVER_MAX_MS);
      expect(second.bridgeEvents('lock_taken').filter((e) => e.takeover)).toHaveLength(1);

      expect(await roundTrip(stack, t2), 'after the takeover: one turn and one reply').toEqual({
        turns: 1,
        replies: 1,
      });
      expect(stack.proxy.eventStreams().filter((s) => !s.closed)).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );
});
