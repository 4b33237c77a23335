/**
 * The agent key out of the model's reach (SPEC B-21): {@link agentKeyOutOfShellReach} for every
 * host (in the conformance list as `key-out-of-shell`), and {@link agentKeyStaysInBridge} for
 * bridges whose host runs as other processes (Claude Code, ZCode), whose own tests also check the
 * turn's RPC variables.
 */
import type { Mail } from '@agentmail/protocol';
import { expect } from 'vitest';
import type { HostHarness } from '../harness/bridge.js';
import type { Stack } from '../harness/stack.js';
import {
  CONFORMANCE_STEP_TIMEOUT_MS,
  marker,
  shellCall,
  toolResultsSeen,
  turnStart,
  unexpectedResult,
} from './script.js';

/** What the shell printed between `start` and `end` (or to the end). */
function section(text: string, start: string, end?: string): string {
  const from = text.indexOf(start);
  if (from < 0) return '';
  const to = end === undefined ? -1 : text.indexOf(end, from);
  return text.slice(from + start.length, to < 0 ? undefined : to);
}

/**
 * A `full` task whose shell prints every credential-looking variable of its own environment, the
 * files under the bridge's state directory and the workdir that hold the agent key, and the
 * credential-looking variables of its parent's initial environment (`/proc/$PPID/environ`): none
 * may show the key or a key variable. The key is searched for in two halves joined by the shell,
 * so the command itself (which hosts record in their session files) does not hold it. The parent
 * is not checked when the adapter says the host's tools run in the bridge's own process
 * ({@link HostHarness.toolsInBridgeProcess}): its initial environment is the bridge's, which
 * keeps what it was started with (the bridge's README says so, and how to start it without one).
 * Red when a turn's shell inherits the key (the daemon's environment passed on whole, an
 * in-process bridge that leaves it in its host's environment).
 */
export async function agentKeyOutOfShellReach(stack: Stack, adapter: HostHarness): Promise<void> {
  const task = marker('keyreach');
  const key = stack.agent.key;
  const half = Math.floor(key.length / 2);
  const credential = `'^(AGENTMAIL_AGENT_(KEY|SECRET)|AGENTMAIL_TOKEN=|CREDENTIALS_DIRECTORY=)|amk_'`;
  const command = [
    `echo ENV-${task}`,
    `env | grep -E ${credential}`,
    `echo FILES-${task}`,
    `K1='${key.slice(0, half)}'; K2='${key.slice(half)}'`,
    `grep -rlF -- "$K1$K2" '${stack.bridgeStateDir}' '${stack.workdir}' 2>/dev/null`,
    `echo PARENT-${task}`,
    `tr '\\0' '\\n' < /proc/$PPID/environ | grep -E ${credential}`,
    `echo END-${task}`,
  ].join('; ');
  stack.model.addScenarios([
    { name: `${task}:env`, match: turnStart(task), reply: shellCall(adapter, command) },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: `END-${task}` },
      reply: { type: 'text', text: `CHECKED ${task}` },
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Key ${task}`,
    body: 'Show what the shell can read.',
    permissionMode: 'full',
  });
  const reply = await stack.awaitReply({
    inReplyTo: sent.mail_id,
    from: stack.agent.name,
    timeoutMs: adapter.stepTimeoutMs ?? CONFORMANCE_STEP_TIMEOUT_MS,
  });
  expect(reply.body, 'the shell ran the whole command').toContain(`CHECKED ${task}`);
  const seen = toolResultsSeen(stack.model, task);
  const shellEnv = section(seen, `ENV-${task}`, `FILES-${task}`);
  expect(shellEnv.trim(), "credential variables in the model's shell").toBe('');
  const files = section(seen, `FILES-${task}`, `PARENT-${task}`);
  expect(files.trim(), 'files the bridge or host wrote that hold the agent key').toBe('');
  if (adapter.toolsInBridgeProcess === true) return;
  const parent = section(seen, `PARENT-${task}`, `END-${task}`);
  expect(parent.trim(), "credential variables in the initial environment of the shell's parent").toBe('');
  expect(seen).not.toContain(key);
}

/**
 * Start the bridge, mail it a `full` task whose shell prints its own environment and its parent's
 * (the host process), and check that the reply shows the turn token and socket but neither the
 * agent key nor an `AGENTMAIL_AGENT_KEY`/`_SECRET` variable. The caller stops the bridge.
 * @returns the task mail's id and the reply.
 */
export async function agentKeyStaysInBridge(
  stack: Stack,
  adapter: HostHarness,
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
