/**
 * A check for bridges whose host runs as other processes (Claude Code, ZCode): the agent key stays
 * in the bridge (SPEC B-21). Not in the conformance list (an in-process host has no environment of
 * its own to look at); such a bridge's own tests run it.
 */
import type { Mail } from '@agentmail/protocol';
import { expect } from 'vitest';
import type { BridgeAdapter } from '../harness/bridge.js';
import type { Stack } from '../harness/stack.js';
import { CONFORMANCE_STEP_TIMEOUT_MS, marker, shellCall, turnStart, unexpectedResult } from './script.js';

/**
 * Start the bridge, mail it a `full` task whose shell prints its own environment and its parent's
 * (the host process), and check that the reply shows the turn token and socket but neither the
 * agent key nor an `AGENTMAIL_AGENT_KEY`/`_SECRET` variable. The caller stops the bridge.
 * @returns the task mail's id and the reply.
 */
export async function agentKeyStaysInBridge(
  stack: Stack,
  adapter: BridgeAdapter,
): Promise<{ mailId: string; reply: Mail }> {
  const task = marker('secret');
  stack.model.addScenarios([
    {
      name: `${task}:env`,
      match: turnStart(task),
      reply: shellCall(adapter, `echo ENV-${task}; env; cat /proc/$PPID/environ | tr '\\0' '\\n'`),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: `ENV-${task}` },
      reply: (r) => ({ type: 'text', text: `SEEN ${r.toolResults.map((t) => t.text).join('\n')}` }),
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Env ${task}`,
    body: 'Show the environment.',
    permissionMode: 'full',
  });
  const reply = await stack.awaitReply({
    inReplyTo: sent.mail_id,
    from: stack.agent.name,
    timeoutMs: adapter.stepTimeoutMs ?? CONFORMANCE_STEP_TIMEOUT_MS,
  });
  expect(reply.body, 'the shell ran and printed its environment').toContain('AGENTMAIL_TURN_TOKEN=');
  expect(reply.body).toContain('AGENTMAIL_BRIDGE_SOCKET=');
  expect(reply.body, 'the key is in no variable of the shell or of the host').not.toContain(stack.agent.key);
  expect(reply.body).not.toMatch(/AGENTMAIL_AGENT_(KEY|SECRET)=/);
  return { mailId: sent.mail_id, reply };
}
