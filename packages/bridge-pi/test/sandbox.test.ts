/**
 * pi in the workspace sandbox (SPEC P-1, P-12) on the real pi SDK and the real bubblewrap: with
 * `AGENTMAIL_SANDBOX=workspace` the daemon's self-check holds, its heartbeat says `verified`, and a
 * mail in `workspace` mode runs a shell write inside the workspace without asking anyone while a
 * write outside fails with the kernel's words, which the model reads. The same mail with
 * bubblewrap missing asks the person per call, and the agent's status says why.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  marker,
  shellCall,
  startConformanceStack,
  toolResultsSeen,
  turnStart,
  unexpectedResult,
} from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

afterAll(removeBundle);

/** On the real root filesystem (not a private /tmp): a write here proves the sandbox failed. */
const OUTSIDE_DIR = '/var/lib';

// Concurrent tests: each closes its own stack through its own context's onTestFinished.
describe('pi in the workspace sandbox (P-12)', () => {
  it.concurrent('verified: a shell write in the workspace runs unasked; one outside fails with EROFS, which the model reads', async ({
    signal,
    onTestFinished,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('sandboxed');
    const outside = join(OUTSIDE_DIR, `agentmail-${task}.txt`);
    onTestFinished(() => {
      if (existsSync(outside)) throw new Error(`the sandbox let a write out: ${outside}`);
    });
    stack.model.addScenarios([
      {
        name: `${task}:shell`,
        match: turnStart(task),
        reply: shellCall(
          piAdapter,
          `echo IN-${task} > in-${task}.txt; echo OUT > ${outside}; cat in-${task}.txt`,
        ),
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `IN-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    await stack.startBridge(piAdapter, { AGENTMAIL_SANDBOX: 'workspace' });
    const me = (await stack.person.contacts()).find((c) => c.name === stack.agent.name);
    expect(me?.sandbox, 'the first heartbeat said the self-check held').toBe('verified');

    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Sandboxed ${task}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(reply.body).toContain(`DONE ${task}`);
    expect(readFileSync(join(stack.workdir, `in-${task}.txt`), 'utf8')).toBe(`IN-${task}\n`);
    expect(existsSync(outside), 'the write outside the workspace did not land').toBe(false);
    expect(toolResultsSeen(stack.model, task), 'the kernel said why, and the model read it').toMatch(
      /Read-only file system/,
    );
    expect(
      (await stack.person.permissions('all')).filter((r) => r.session_id === sent.session_id),
      'nobody was asked: the sandbox confined the call',
    ).toEqual([]);

    // A mail to workspace / would bind everything back read-write: no sandbox, the call asks.
    const wide = marker('rootws');
    stack.model.addScenarios([
      { name: `${wide}:shell`, match: turnStart(wide), reply: shellCall(piAdapter, `echo OUT > ${outside}`) },
      {
        name: `${wide}:answer`,
        match: { lastUserMessage: wide, hasToolResult: true },
        reply: { type: 'text', text: `NOTED ${wide}` },
      },
    ]);
    const root = await stack.sendAs(undefined, stack.taskAddress('new', '/'), {
      subject: `Everywhere ${wide}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const asked = await stack.awaitPermission({ where: (r) => r.session_id === root.session_id });
    expect(asked.context).toContain('Sandbox: verified, not used for this workspace: the workspace is /');
    await stack.decide(asked.id, 'deny');
    await stack.awaitReply({ inReplyTo: root.mail_id, from: stack.agent.name });
    expect(existsSync(outside), 'denied: nothing ran').toBe(false);
  });

  it.concurrent('bubblewrap missing: unverified with the reason in the status, and the same mail asks per call', async ({
    signal,
    onTestFinished,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('unsandboxed');
    const file = join(stack.workdir, `asked-${task}.txt`);
    stack.model.addScenarios([
      {
        name: `${task}:shell`,
        match: turnStart(task),
        reply: shellCall(piAdapter, `echo RAN-${task} > ${file}; cat ${file}`),
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `RAN-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    await stack.startBridge(piAdapter, {
      AGENTMAIL_SANDBOX: 'workspace',
      AGENTMAIL_BWRAP: '/nonexistent/bwrap',
    });
    const me = (await stack.person.contacts()).find((c) => c.name === stack.agent.name);
    expect(me?.sandbox).toBe(
      'unverified: bubblewrap not found at AGENTMAIL_BWRAP=/nonexistent/bwrap (an absolute path of an executable)',
    );

    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Not sandboxed ${task}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const request = await stack.awaitPermission({ where: (r) => r.session_id === sent.session_id });
    expect(existsSync(file), 'the call waits for the person').toBe(false);
    expect(request.context, 'the request says why the person is asked').toContain(
      'Sandbox: unverified: bubblewrap not found at AGENTMAIL_BWRAP=/nonexistent/bwrap',
    );
    await stack.decide(request.id, 'approve');
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(reply.body).toContain(`DONE ${task}`);
    expect(readFileSync(file, 'utf8')).toBe(`RAN-${task}\n`);
  });
});
