/**
 * The conformance scenarios: platform-neutral checks every bridge must pass, each an async function
 * `(stack, adapter)` asserting with vitest's `expect`. Each one gets a fresh stack with no bridge
 * running, scripts the model itself (scenarios that match on request content), starts the bridge
 * through `stack.startBridge(adapter)`, and acts as a person (or a peer agent) would.
 *
 * Steps never require a tool to be offered: when a bridge does not offer one, the host answers the
 * call with its own error, and `unexpectedResult` turns that into a reply that shows it.
 *
 * "Exactly one" is checked after a barrier: a later mail into the same session, whose answer can
 * only come after every earlier turn of that session has finished, relay included (turns of one
 * session are strictly serial, SPEC B-13). No scenario sleeps.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Mail } from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import { expect } from 'vitest';
import type { BridgeAdapter } from '../harness/bridge.js';
import type { SentMail } from '../harness/person.js';
import type { Stack } from '../harness/stack.js';
import {
  answerAtOnce,
  CONFORMANCE_LOCALE,
  CONFORMANCE_MODELS,
  CONFORMANCE_STEP_TIMEOUT_MS,
  mailIdOf,
  marker,
  readFileCall,
  readMailThenAnswer,
  shellCall,
  textPattern,
  toolResultsSeen,
  turnStart,
  turnStarts,
  unexpectedResult,
  uploadedIdOf,
  within,
} from './script.js';

/** A conformance scenario: what it checks, the rules it covers, and the check itself. */
export interface ConformanceScenario {
  /** Stable id, e.g. `person-task-reply`; used in test names and to skip one. */
  id: string;
  title: string;
  /** SPEC rules it covers. */
  rules: readonly string[];
  run(stack: Stack, adapter: BridgeAdapter): Promise<void>;
}

function stepTimeout(adapter: BridgeAdapter): number {
  return adapter.stepTimeoutMs ?? CONFORMANCE_STEP_TIMEOUT_MS;
}

/** Mails of the bridge's agent (not permission mails) in `mails`. */
function fromAgent(stack: Stack, mails: readonly Mail[]): Mail[] {
  return mails.filter((m) => m.from_name === stack.agent.name && !m.from_human && !m.is_permission);
}

/** Every scripted request found a scenario (a request that found none was answered 400). */
function expectAllRequestsScripted(stack: Stack): void {
  const unmatched = stack.model
    .unmatched()
    .map((r) => `#${r.seq} ${r.model} "${r.lastUserText.slice(0, 80)}"`);
  expect(unmatched, 'model requests no scenario step expected').toEqual([]);
}

/**
 * (1) A person mails a task; the model reads it with the mail tools and answers; the person gets
 * exactly one relayed reply, threaded (answering the task, in its session). See SPEC B-5, B-6, B-10, B-13.
 */
export async function personTaskGetsOneThreadedReply(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('task');
  const barrier = marker('barrier');
  stack.model.addScenarios([
    answerAtOnce(barrier, `ACK ${barrier}`),
    ...readMailThenAnswer(task, `body ${task}`, `RESULT ${task}`),
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Task ${task}`,
    body: `Please reply with the result. body ${task}`,
  });
  const reply = await stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body).toContain(`RESULT ${task}`);
  expect(reply).toMatchObject({
    from_name: stack.agent.name,
    from_human: false,
    in_reply_to: sent.mail_id,
    session_id: sent.session_id,
    relay: true,
    is_permission: false,
  });

  // The model read the body through read_mail (the prompt does not carry it, B-5), and the prompt
  // said the sender is a person whose answer is mailed back (B-5, B-6).
  const [start] = turnStarts(stack.model, task);
  expect(start, 'the turn for the task reached the model').toBeDefined();
  expect(start?.lastUserText).not.toContain(`body ${task}`);
  expect(start?.lastUserText).toContain(
    formatText('prompt.sender.person', { from_name: stack.person.name }, CONFORMANCE_LOCALE),
  );
  expect(start?.lastUserText).toMatch(textPattern('prompt.reply.to_person'));
  expect(
    stack.model.requests({ match: { lastUserMessage: task, toolResultContains: `body ${task}` } }),
  ).not.toEqual([]);

  // Barrier: the person answers the reply; that turn runs in the same session after the first.
  const followUp = await stack.sendAs(undefined, reply.reply_address, {
    subject: `Barrier ${barrier}`,
    body: 'thanks',
    replyTo: reply.id,
  });
  const ack = await stack.awaitReply({ inReplyTo: followUp.mail_id, from: stack.agent.name, timeoutMs });
  expect(ack.body).toContain(`ACK ${barrier}`);
  expect(ack.session_id, 'a reply to the agent continues the same session').toBe(sent.session_id);

  const agentMails = fromAgent(stack, await stack.thread(sent.mail_id));
  expect(
    agentMails.map((m) => m.in_reply_to),
    'exactly one relayed reply per person mail, in order',
  ).toEqual([sent.mail_id, followUp.mail_id]);
  expect(turnStarts(stack.model, task), 'the task mail started exactly one turn').toHaveLength(1);
  expectAllRequestsScripted(stack);
}

/**
 * (2) A peer agent mails the bridge's agent: the prompt says the sender is an agent and that
 * nothing is sent unless the model calls send_mail; the final text is not relayed. See SPEC B-5, B-6, B-10.
 */
export async function agentMailIsNotRelayed(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('agent-task');
  const barrier = marker('barrier');
  const peer = await stack.addAgent('peer');
  stack.model.addScenarios([
    {
      name: `${barrier}:send_mail`,
      match: turnStart(barrier),
      reply: (request) => ({
        type: 'tool_calls',
        calls: [
          {
            name: 'send_mail',
            arguments: {
              to: peer.name,
              subject: `Explicit ${barrier}`,
              body: `EXPLICIT ${barrier}`,
              reply_to: mailIdOf(request),
            },
          },
        ],
      }),
    },
    {
      name: `${barrier}:answer`,
      match: { lastUserMessage: barrier, toolResultContains: textPattern('tools.send.done') },
      reply: { type: 'text', text: `FINAL ${barrier}` },
    },
    unexpectedResult(barrier),
    answerAtOnce(task, `FINAL ${task}`),
  ]);
  await stack.startBridge(adapter);

  const first = await peer.client.send({
    to: stack.taskAddress(),
    subject: `Task ${task}`,
    body: `From a peer agent. body ${task}`,
  });
  if (first.status !== 'sent') throw new Error(`the peer's send answered ${JSON.stringify(first)}`);
  const start = await stack.awaitModelRequest(turnStart(task), timeoutMs);
  expect(start.lastUserText).toContain(
    formatText('prompt.sender.agent', { from_name: peer.name }, CONFORMANCE_LOCALE),
  );
  expect(start.lastUserText).toMatch(textPattern('prompt.reply.to_agent'));
  expect(start.lastUserText).not.toMatch(textPattern('prompt.reply.to_person'));

  // Barrier: a second mail into the same session, answered by an explicit send_mail.
  const second = await peer.client.send({
    to: first.address,
    subject: `Barrier ${barrier}`,
    body: 'barrier',
    reply_to: first.mail_id,
  });
  if (second.status !== 'sent') throw new Error(`the peer's send answered ${JSON.stringify(second)}`);
  const explicit = await peer.awaitMail({
    from: stack.agent.name,
    where: (m) => m.body.includes(`EXPLICIT ${barrier}`),
    timeoutMs,
  });
  expect(explicit.in_reply_to, 'the explicit send answers the barrier mail').toBe(second.mail_id);

  const fromBridge = (await peer.inbox()).filter((m) => m.from_name === stack.agent.name);
  expect(
    fromBridge.map((m) => m.body),
    'an agent sender gets mail only through send_mail: the final texts are not relayed (B-6, B-10)',
  ).toEqual([`EXPLICIT ${barrier}`]);
  expect(await stack.inbox(), 'no person was mailed either').toEqual([]);
  expectAllRequestsScripted(stack);
}

/**
 * (3a) `workspace` mode: a guarded tool (shell) waits for a person's approval, asked by mail;
 * after "approve" it runs and the model sees its output. See SPEC P-1, P-3, P-4, G-38.
 */
export async function guardedToolRunsAfterApproval(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('approve');
  const file = join(stack.workdir, `approved-${task}.txt`);
  stack.model.addScenarios([
    {
      name: `${task}:shell`,
      match: turnStart(task),
      reply: shellCall(adapter, `echo RAN-${task} > ${file} && cat ${file}`),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: `RAN-${task}` },
      reply: { type: 'text', text: `DONE ${task}` },
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Run ${task}`,
    body: 'Run the command.',
    permissionMode: 'workspace',
  });
  const request = await stack.awaitPermission({ timeoutMs });
  expect(request).toMatchObject({
    agent_name: stack.agent.name,
    kind: 'approval',
    status: 'pending',
    session_id: sent.session_id,
  });
  expect(existsSync(file), 'the guarded tool must wait for the approval').toBe(false);
  const permissionMail = await stack.person.mail(request.mail_id);
  expect(permissionMail.is_permission).toBe(true);

  await stack.decide(request.id, 'approve');
  const reply = await stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body).toContain(`DONE ${task}`);
  expect(readFileSync(file, 'utf8')).toContain(`RAN-${task}`);
  expect(toolResultsSeen(stack.model, task)).toContain(`RAN-${task}`);
  expectAllRequestsScripted(stack);
}

/**
 * (3b) `workspace` mode: a person denies the guarded tool with a note; the tool does not run and
 * the model sees the note in the tool result. See SPEC P-4, P-6.
 */
export async function guardedToolDeniedWithNote(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('deny');
  const file = join(stack.workdir, `denied-${task}.txt`);
  const note = `Not on this machine: use a copy instead (${task})`;
  stack.model.addScenarios([
    {
      name: `${task}:shell`,
      match: turnStart(task),
      reply: shellCall(adapter, `echo RAN-${task} > ${file}`),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: note },
      reply: { type: 'text', text: `NOTED ${task}` },
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Run ${task}`,
    body: 'Run the command.',
    permissionMode: 'workspace',
  });
  const request = await stack.awaitPermission({ timeoutMs });
  expect(request).toMatchObject({ kind: 'approval', session_id: sent.session_id });
  await stack.decide(request.id, 'deny', note);

  const reply = await stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body, 'the model saw the note and answered').toContain(`NOTED ${task}`);
  expect(existsSync(file), 'a denied tool must not run').toBe(false);
  expect(toolResultsSeen(stack.model, task)).toContain(note);
  expectAllRequestsScripted(stack);
}

/**
 * (4) `plan` mode: reading still works, but a guarded tool is refused at once with the plan-mode
 * explanation, and no permission mail is sent. See SPEC P-1, P-3.
 */
export async function planModeRefusesWithoutAsking(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('plan');
  const file = join(stack.workdir, `plan-${task}.txt`);
  const notes = join(stack.workdir, `notes-${task}.txt`);
  await writeFile(notes, `CONTENT-${task}\n`);
  stack.model.addScenarios([
    {
      name: `${task}:read`,
      match: turnStart(task),
      reply: readFileCall(adapter, notes),
    },
    {
      name: `${task}:shell`,
      match: { lastUserMessage: task, toolResultContains: `CONTENT-${task}` },
      reply: shellCall(adapter, `echo RAN-${task} > ${file}`),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: textPattern('permission.plan.denied') },
      reply: { type: 'text', text: `PLAN ${task}` },
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Plan ${task}`,
    body: 'Only plan.',
    permissionMode: 'plan',
  });
  const reply = await stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body, 'the model read the file, then got the plan-mode refusal').toContain(`PLAN ${task}`);
  expect(existsSync(file), 'a refused tool must not run').toBe(false);
  // The refusal came before the reply, so a permission request for it would have come before too.
  expect(await stack.person.permissions('all')).toEqual([]);
  expect(stack.person.events.events().filter((e) => e.type === 'permission_request')).toEqual([]);
  expect((await stack.inbox()).filter((m) => m.is_permission)).toEqual([]);
  expectAllRequestsScripted(stack);
}

/**
 * (5) Every allowed model fails: the models are tried in the admin's order, then the sender gets
 * one failure mail (relay, answering the task) with the platform's cause and the all-models
 * remedy. See SPEC B-8, B-9.
 */
export async function allModelsFailSendsFailureMail(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('fail');
  const { failingA, failingB, working } = CONFORMANCE_MODELS;
  stack.model.addScenarios([
    {
      name: `${task}:${failingA}`,
      match: { model: failingA },
      reply: { type: 'error', status: 400, message: `scripted outage A ${task}` },
    },
    {
      name: `${task}:${failingB}`,
      match: { model: failingB },
      reply: { type: 'error', status: 400, message: `scripted outage B ${task}` },
    },
  ]);
  // Read from the heartbeat answer (G-27): set before the bridge starts.
  await stack.setAllowedModels(adapter.platform, [failingA, failingB]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Doomed ${task}`,
    body: 'Try.',
  });
  const failure = await stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(failure).toMatchObject({ from_human: false, in_reply_to: sent.mail_id, relay: true });
  expect(failure.body, "the failure mail carries the platform's cause").toMatch(
    new RegExp(`scripted outage [AB] ${task}`),
  );
  expect(failure.body).toMatch(textPattern('failure.all_models_failed'));

  const triedA = stack.model.requests({ match: { model: failingA, hasTools: true } });
  const triedB = stack.model.requests({ match: { model: failingB, hasTools: true } });
  expect(triedA.length, `${failingA} was tried`).toBeGreaterThan(0);
  expect(triedB.length, `${failingB} was tried`).toBeGreaterThan(0);
  expect(triedA[0]?.seq ?? 0, 'the allowed models are tried in order').toBeLessThan(triedB[0]?.seq ?? 0);
  expect(
    stack.model.requests({ match: { model: working, hasTools: true } }),
    'with allowed models set, the host default is not used',
  ).toEqual([]);
  expectAllRequestsScripted(stack);
}

/**
 * (6) Three mails arrive while the bridge is down; after a restart all three are processed,
 * oldest first, once each. See SPEC B-1, B-13, B-20, G-39.
 */
export async function backlogAfterRestart(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const marks = [marker('backlog1'), marker('backlog2'), marker('backlog3')];
  const barrier = marker('barrier');
  stack.model.addScenarios([
    answerAtOnce(barrier, `ACK ${barrier}`),
    ...marks.map((m) => answerAtOnce(m, `DONE ${m}`)),
  ]);
  await stack.startBridge(adapter);
  const stopped = await stack.stopBridge();
  expect(stopped?.signal, 'the bridge stops on SIGTERM within its grace time (B-15)').not.toBe('SIGKILL');

  // All three into one session (oldest first must hold there too), while nobody listens.
  const first = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Backlog ${marks[0]}`,
    body: '1',
  });
  const rest: SentMail[] = [];
  for (const m of marks.slice(1))
    rest.push(await stack.sendAs(undefined, first.address, { subject: `Backlog ${m}`, body: 'next' }));
  const sent = [first, ...rest];

  await stack.startBridge(adapter);
  const replies = await Promise.all(
    sent.map((s) => stack.awaitReply({ inReplyTo: s.mail_id, from: stack.agent.name, timeoutMs })),
  );
  expect(replies.map((r) => r.body)).toEqual(marks.map((m) => expect.stringContaining(`DONE ${m}`)));

  const starts = marks.map((m) => turnStarts(stack.model, m)[0]?.seq ?? Number.NaN);
  expect(starts, 'oldest first').toEqual([...starts].sort((a, b) => a - b));

  // Barrier, then: each mail had one turn and one reply.
  const last = await stack.sendAs(undefined, first.address, { subject: `Barrier ${barrier}`, body: 'done?' });
  await stack.awaitReply({ inReplyTo: last.mail_id, from: stack.agent.name, timeoutMs });
  for (const m of marks) expect(turnStarts(stack.model, m), `turns for ${m}`).toHaveLength(1);
  const agentMails = fromAgent(stack, await stack.thread(first.mail_id));
  expect(
    agentMails.map((m) => m.in_reply_to),
    'one reply per mail',
  ).toEqual([...sent.map((s) => s.mail_id), last.mail_id]);
  expectAllRequestsScripted(stack);
}

/**
 * (7) Attachment round trip: the model downloads the person's attachment into the workspace,
 * uploads it again and sends it with `attachment_ids` given as a JSON string; the person gets the
 * same bytes, in the thread, and no second (relayed) copy of the answer. See SPEC B-10, B-16, B-17.
 */
export async function attachmentRoundTrip(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('files');
  const barrier = marker('barrier');
  const content = `attachment payload ${task}\nnon-ASCII: äöü ✓ 附件\n`;
  const original = await stack.person.upload({
    filename: `in-${task}.txt`,
    content,
    contentType: 'text/plain',
  });
  const downloaded = join(stack.workdir, `downloaded-${task}.txt`);
  stack.model.addScenarios([
    answerAtOnce(barrier, `ACK ${barrier}`),
    {
      name: `${task}:download`,
      match: turnStart(task),
      reply: {
        type: 'tool_calls',
        calls: [{ name: 'download_attachment', arguments: { attachment_id: original.id, path: downloaded } }],
      },
    },
    {
      name: `${task}:upload`,
      match: { lastUserMessage: task, toolResultContains: textPattern('tools.download.done') },
      reply: {
        type: 'tool_calls',
        calls: [{ name: 'upload_attachment', arguments: { path: downloaded, filename: `out-${task}.txt` } }],
      },
    },
    {
      name: `${task}:send`,
      match: { lastUserMessage: task, toolResultContains: textPattern('tools.upload.done') },
      reply: (request) => ({
        type: 'tool_calls',
        calls: [
          {
            name: 'send_mail',
            arguments: {
              to: stack.person.name,
              subject: `Files ${task}`,
              body: `Here it is ${task}`,
              reply_to: mailIdOf(request),
              // B-16: a JSON array given as a string, as models often write it.
              attachment_ids: JSON.stringify([uploadedIdOf(request)]),
            },
          },
        ],
      }),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: textPattern('tools.send.done') },
      reply: { type: 'text', text: `SENT ${task}` },
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Files ${task}`,
    body: 'Send the file back.',
    attachments: [original.id],
  });
  const mail = await stack.awaitReply({
    threadOf: sent.mail_id,
    from: stack.agent.name,
    where: (m) => m.attachments.length > 0 || m.body.includes('UNEXPECTED'),
    timeoutMs,
  });
  expect(mail.body).toContain(`Here it is ${task}`);
  expect(mail.in_reply_to).toBe(sent.mail_id);
  expect(mail.attachments).toHaveLength(1);
  expect(mail.attachments[0]).toMatchObject({ filename: `out-${task}.txt`, sha256: original.sha256 });
  expect(readFileSync(downloaded, 'utf8'), 'the download wrote the bytes into the workspace').toBe(content);
  const back = await stack.person.download(mail.attachments[0]?.id ?? '');
  expect(new TextDecoder().decode(back.bytes)).toBe(content);

  // Barrier, then: the model mailed the person itself, so its final text was not relayed too.
  const followUp = await stack.sendAs(undefined, mail.reply_address, {
    subject: `Barrier ${barrier}`,
    body: 'got it',
    replyTo: mail.id,
  });
  await stack.awaitReply({ inReplyTo: followUp.mail_id, from: stack.agent.name, timeoutMs });
  const agentMails = fromAgent(stack, await stack.thread(sent.mail_id));
  expect(
    agentMails.filter((m) => m.body.includes(`SENT ${task}`)),
    'B-10: after an explicit send_mail to the reply target, the final text is not relayed',
  ).toEqual([]);
  expectAllRequestsScripted(stack);
}

/**
 * (8) The bridge's event stream is cut inside an event frame and reconnects are refused while one
 * more mail arrives: the bridge reconnects with the last complete event id as `Last-Event-ID`,
 * and both mails are processed, once each. See SPEC B-2, G-22.
 */
export async function sseCutLosesNoEvent(stack: Stack, adapter: BridgeAdapter): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const [m1, m2, m3] = [marker('live'), marker('cut'), marker('missed')];
  const barrier = marker('barrier');
  stack.model.addScenarios([barrier, m1, m2, m3].map((m) => answerAtOnce(m, `DONE ${m}`)));
  await stack.startBridge(adapter);

  // A first mail gives the bridge an event id to resume from.
  const first = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Live ${m1}`, body: '1' });
  await stack.awaitReply({ inReplyTo: first.mail_id, from: stack.agent.name, timeoutMs });

  const cut = stack.proxy.cutNextEvent({ hold: true });
  const second = await stack.sendAs(undefined, first.address, { subject: `Cut ${m2}`, body: '2' });
  const { stream, lastDeliveredId } = await within(cut, timeoutMs, 'a cut of the event stream');
  expect(lastDeliveredId, 'the first mail was delivered on the cut stream').toBeDefined();
  const third = await stack.sendAs(undefined, first.address, { subject: `Missed ${m3}`, body: '3' });
  stack.proxy.release();

  const reconnect = await stack.proxy.waitForEventStream(
    (s) => s.seq > stream.seq && s.status === 200,
    timeoutMs,
  );
  expect(reconnect.lastEventIdSent, 'the reconnect resumes after the last complete event (B-2)').toBe(
    lastDeliveredId,
  );
  const replies = await Promise.all(
    [second, third].map((s) => stack.awaitReply({ inReplyTo: s.mail_id, from: stack.agent.name, timeoutMs })),
  );
  expect(replies.map((r) => r.body)).toEqual([
    expect.stringContaining(`DONE ${m2}`),
    expect.stringContaining(`DONE ${m3}`),
  ]);

  const last = await stack.sendAs(undefined, first.address, { subject: `Barrier ${barrier}`, body: 'done?' });
  await stack.awaitReply({ inReplyTo: last.mail_id, from: stack.agent.name, timeoutMs });
  for (const m of [m1, m2, m3]) expect(turnStarts(stack.model, m), `turns for ${m}`).toHaveLength(1);
  expectAllRequestsScripted(stack);
}

/** Every conformance scenario, in the order of the list. */
export const CONFORMANCE_SCENARIOS: readonly ConformanceScenario[] = [
  {
    id: 'person-task-reply',
    title:
      'a person mails a task: the model reads it with the mail tools, exactly one threaded reply is relayed',
    rules: ['B-5', 'B-6', 'B-10', 'B-13'],
    run: personTaskGetsOneThreadedReply,
  },
  {
    id: 'agent-sender-no-relay',
    title: 'an agent mails: the prompt says so, nothing is relayed automatically',
    rules: ['B-5', 'B-6', 'B-10'],
    run: agentMailIsNotRelayed,
  },
  {
    id: 'guarded-tool-approved',
    title: 'workspace mode: a guarded tool asks by mail, runs after approval',
    rules: ['P-1', 'P-3', 'P-4', 'G-38'],
    run: guardedToolRunsAfterApproval,
  },
  {
    id: 'guarded-tool-denied',
    title: 'workspace mode: a denied guarded tool does not run and the model sees the note',
    rules: ['P-4', 'P-6'],
    run: guardedToolDeniedWithNote,
  },
  {
    id: 'plan-mode-refused',
    title: 'plan mode: reading works, a guarded tool is refused without a permission mail',
    rules: ['P-1', 'P-3'],
    run: planModeRefusesWithoutAsking,
  },
  {
    id: 'all-models-fail',
    title: 'every allowed model fails: tried in order, then one failure mail with the cause',
    rules: ['B-8', 'B-9'],
    run: allModelsFailSendsFailureMail,
  },
  {
    id: 'backlog-after-restart',
    title: 'three mails while the bridge is down: after a restart all processed, oldest first, once each',
    rules: ['B-1', 'B-13', 'B-15', 'B-20', 'G-39'],
    run: backlogAfterRestart,
  },
  {
    id: 'attachment-round-trip',
    title: 'attachments: download, upload, send with attachment_ids as a JSON string',
    rules: ['B-10', 'B-16', 'B-17'],
    run: attachmentRoundTrip,
  },
  {
    id: 'sse-cut',
    title: 'event stream cut inside a frame: reconnect with Last-Event-ID, no event lost',
    rules: ['B-2', 'G-22'],
    run: sseCutLosesNoEvent,
  },
];
