/**
 * The conformance scenarios: platform-neutral checks every bridge must pass, each an async function
 * `(stack, adapter)` asserting with vitest's `expect`. Each one gets a stack of its own person (its
 * mails, permission requests and model journal are its own) on the bridge its `host` names, scripts
 * the model itself (scenarios that match on its own unique markers), starts the bridge through
 * `stack.startBridge(adapter)` (on a shared bridge: the one running), and acts as a person (or a
 * peer agent) would.
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
import { FAILPOINT_VARIABLE } from '@agentmail/bridge-kit';
import { MAIL_BODY_MAX_CHARS, type Mail, routePath } from '@agentmail/protocol';
import { formatText, MAIL_PAGE_CHARS } from '@agentmail/shared-policy';
import { expect } from 'vitest';
import type { BridgeQuestionTool, HostHarness, NeutralQuestion } from '../harness/bridge.js';
import type { SentMail } from '../harness/person.js';
import type { Stack } from '../harness/stack.js';
import type { Scenario } from '../scenario.js';
import { agentKeyOutOfShellReach } from './host-env.js';
import {
  answerAtOnce,
  CONFORMANCE_LOCALE,
  CONFORMANCE_MODELS,
  CONFORMANCE_STEP_TIMEOUT_MS,
  CONFORMANCE_TURN_TIMEOUT_MS,
  mailIdOf,
  mailToolCall,
  marker,
  promptOf,
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
  run(stack: Stack, adapter: HostHarness): Promise<void>;
  /** Why `adapter`'s host cannot run this scenario (it is then skipped with that reason), or undefined. */
  unsupportedBy?(adapter: HostHarness): string | undefined;
  /**
   * Which bridge it runs on in `conformanceSuite` (every scenario has its own person, so it sees
   * only its own mails, requests and model turns):
   * - `shared`: the file's one running bridge, beside the other shared scenarios; it never stops,
   *   restarts or reconfigures the bridge, nor cuts its event stream.
   * - `serial`: a second bridge, one scenario at a time; it may stop, restart or cut it.
   * - `own`: a bridge of its own on the file's Gateway (it starts the bridge with settings of its
   *   own, e.g. a short turn timeout, and waits it out beside the others).
   * - `own-gateway`: a Gateway and bridge of its own (it changes what the Gateway holds for every
   *   agent of the platform, e.g. the allowed models before the start).
   */
  host: 'shared' | 'serial' | 'own' | 'own-gateway';
  /** `serial` only: the bridge must start within the scenario (none is left running for it). */
  freshStart?: boolean;
  /** `serial` only: it leaves the bridge changed (e.g. on another Gateway URL): stopped after it. */
  changesBridge?: boolean;
}

function stepTimeout(adapter: HostHarness): number {
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
export async function personTaskGetsOneThreadedReply(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('task');
  const barrier = marker('barrier');
  stack.model.addScenarios([
    answerAtOnce(barrier, `ACK ${barrier}`),
    ...readMailThenAnswer(task, `body ${task}`, `RESULT ${task}`, adapter),
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
export async function agentMailIsNotRelayed(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('agent-task');
  const barrier = marker('barrier');
  const peer = await stack.addAgent('peer');
  stack.model.addScenarios([
    {
      name: `${barrier}:send_mail`,
      match: turnStart(barrier),
      reply: (request) =>
        mailToolCall(adapter, 'send_mail', {
          to: peer.name,
          subject: `Explicit ${barrier}`,
          body: `EXPLICIT ${barrier}`,
          reply_to: mailIdOf(request),
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
export async function guardedToolRunsAfterApproval(stack: Stack, adapter: HostHarness): Promise<void> {
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
export async function guardedToolDeniedWithNote(stack: Stack, adapter: HostHarness): Promise<void> {
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
export async function planModeRefusesWithoutAsking(stack: Stack, adapter: HostHarness): Promise<void> {
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
export async function allModelsFailSendsFailureMail(stack: Stack, adapter: HostHarness): Promise<void> {
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
export async function backlogAfterRestart(stack: Stack, adapter: HostHarness): Promise<void> {
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
 * A 1 MB body is read in pages: the first `read_mail` result holds only a page of it, saying the
 * total and the offset to read on from; the model jumps to the end with `offset` and answers with
 * the body's last line. Every `read_mail` result the model saw stays within a page (with a real
 * model a whole 1 MB result overflows the context and fails the turn). See SPEC B-17.
 */
export async function longBodyIsReadInPages(stack: Stack, adapter: HostHarness): Promise<void> {
  const task = marker('pages');
  const head = `BEGIN-${task}\n`;
  const tail = `\nEND-${task}`;
  const line = `${'lorem ipsum dolor sit amet '.repeat(3).trim()}\n`;
  const filler = line.repeat(Math.floor((MAIL_BODY_MAX_CHARS - head.length - tail.length) / line.length));
  const body = head + filler + tail;
  const total = /of (\d+)\. Read on/;
  stack.model.addScenarios([
    {
      name: `${task}:first page`,
      match: turnStart(task),
      reply: (request) => mailToolCall(adapter, 'read_mail', { mail_id: mailIdOf(request) }),
    },
    {
      name: `${task}:last page`,
      match: { lastUserMessage: task, toolResultContains: head.trim() },
      reply: (request) => {
        const length = Number(request.toolResults.map((r) => total.exec(r.text)?.[1]).find(Boolean) ?? NaN);
        if (!Number.isInteger(length)) return { type: 'text', text: `NO PAGE LINE ${task}` };
        return mailToolCall(adapter, 'read_mail', { mail_id: mailIdOf(request), offset: length - 100 });
      },
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: tail.trim() },
      reply: { type: 'text', text: `READ ${tail.trim()}` },
    },
    unexpectedResult(task),
  ]);
  await stack.startBridge(adapter);
  const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Long ${task}`, body });
  const reply = await stack.awaitReply({
    threadOf: sent.mail_id,
    from: stack.agent.name,
    timeoutMs: stepTimeout(adapter),
  });
  expect(reply.body, 'the model read the first page, then the last one').toContain(`READ ${tail.trim()}`);
  const results = stack.model
    .requests({ match: { lastUserMessage: task, hasToolResult: true } })
    .flatMap((r) => r.toolResults.map((t) => t.text.length));
  expect(results.length).toBe(2);
  for (const length of results) expect(length, 'one read_mail result').toBeLessThan(MAIL_PAGE_CHARS + 2_000);
  expectAllRequestsScripted(stack);
}

/**
 * (7) Attachment round trip: the model downloads the person's attachment into the workspace,
 * uploads it again and sends it with `attachment_ids` given as a JSON string; the person gets the
 * same bytes, in the thread, and no second (relayed) copy of the answer. See SPEC B-10, B-16, B-17.
 */
export async function attachmentRoundTrip(stack: Stack, adapter: HostHarness): Promise<void> {
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
      reply: mailToolCall(adapter, 'download_attachment', { attachment_id: original.id, path: downloaded }),
    },
    {
      name: `${task}:upload`,
      match: { lastUserMessage: task, toolResultContains: textPattern('tools.download.done') },
      reply: mailToolCall(adapter, 'upload_attachment', { path: downloaded, filename: `out-${task}.txt` }),
    },
    {
      name: `${task}:send`,
      match: { lastUserMessage: task, toolResultContains: textPattern('tools.upload.done') },
      reply: (request) =>
        mailToolCall(adapter, 'send_mail', {
          to: stack.person.name,
          subject: `Files ${task}`,
          body: `Here it is ${task}`,
          reply_to: mailIdOf(request),
          // B-16: a JSON array given as a string, as models often write it.
          attachment_ids: JSON.stringify([uploadedIdOf(request)]),
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
export async function sseCutLosesNoEvent(stack: Stack, adapter: HostHarness): Promise<void> {
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

/**
 * (9) Turn timeout: the model's answer hangs; with a short turn timeout configured the turn is
 * stopped (the hung request is closed by the bridge), the sender gets exactly one failure mail
 * naming the timeout, and the bridge keeps working: the next mail of the same session gets its
 * reply. See SPEC B-7, B-9, B-13.
 */
export async function turnTimeoutSendsOneFailureMail(stack: Stack, adapter: HostHarness): Promise<void> {
  const turnTimeoutMs = adapter.shortTurnTimeoutMs ?? CONFORMANCE_TURN_TIMEOUT_MS;
  const timeoutMs = stepTimeout(adapter) + turnTimeoutMs;
  const hang = marker('hang');
  const next = marker('next');
  stack.model.addScenarios([
    { name: `${hang}:hang`, match: turnStart(hang), reply: { type: 'hang' } },
    answerAtOnce(next, `DONE ${next}`),
  ]);
  await stack.startBridge(adapter, {}, { turnTimeoutMs });

  const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Hang ${hang}`, body: 'Slow.' });
  const hung = await stack.awaitModelRequest(turnStart(hang), timeoutMs);
  const failure = await stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(failure).toMatchObject({ from_human: false, in_reply_to: sent.mail_id, relay: true });
  expect(
    await stack.model.waitForEnd(hung, timeoutMs),
    'the bridge stopped the hung model request (B-7: a timeout always settles)',
  ).toBe('client_closed');
  expect(failure.body, 'the failure mail names the configured timeout (B-7, B-9)').toContain(
    formatText('failure.timeout', { timeout_s: Math.round(turnTimeoutMs / 1000) }, CONFORMANCE_LOCALE),
  );

  // The same session again: its queue was released, and this turn is the barrier for "exactly one".
  const second = await stack.sendAs(undefined, sent.address, { subject: `Next ${next}`, body: 'Fast.' });
  const reply = await stack.awaitReply({ inReplyTo: second.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body).toContain(`DONE ${next}`);
  expect(
    fromAgent(stack, await stack.thread(sent.mail_id)).map((m) => m.in_reply_to),
    'exactly one failure mail for the timed-out mail, then the next reply',
  ).toEqual([sent.mail_id, second.mail_id]);
  expect(turnStarts(stack.model, hang), 'the timed-out mail is not run again').toHaveLength(1);
  expectAllRequestsScripted(stack);
}

/**
 * (10) Shutdown while a guarded call waits for its decision: the bridge exits on SIGTERM within its
 * grace time and the tool never ran (the pending question resolved as denied). The chosen outcome
 * for the person: the interrupted mail was never finished, so after a restart it is run again
 * (it is still unread: catch-up) and the guarded call asks again with a new request; the old,
 * stale request cannot run it (approving it changes nothing), the new decision governs (here a
 * denial with a note), and the person gets one reply and no failure mail. See SPEC B-15, P-7,
 * B-20, P-4.
 */
export async function shutdownWhileAskingRunsNothing(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('shutdown');
  const file = join(stack.workdir, `shutdown-${task}.txt`);
  const note = `Not now, after the restart (${task})`;
  stack.model.addScenarios([
    {
      name: `${task}:shell`,
      match: promptOf(task),
      reply: shellCall(adapter, `echo RAN-${task} >> ${file}`),
    },
    {
      name: `${task}:noted`,
      match: { lastUserMessage: task, toolResultContains: note },
      reply: { type: 'text', text: `NOTED ${task}` },
    },
    // Anything else the model is asked in this task (e.g. the shutdown denial, if the host still
    // asks the model before it stops) never ends in a reply of its own.
    { name: `${task}:other`, match: { lastUserMessage: task, hasToolResult: true }, reply: { type: 'hang' } },
  ]);
  await stack.startBridge(adapter);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Guarded ${task}`,
    body: 'Run the command.',
    permissionMode: 'workspace',
  });
  const stale = await stack.awaitPermission({ timeoutMs });
  expect(stale).toMatchObject({ kind: 'approval', status: 'pending', session_id: sent.session_id });

  const stopped = await stack.stopBridge();
  expect(stopped, 'a bridge was running').toBeDefined();
  expect(stopped?.signal, 'the bridge exits on SIGTERM within its grace time (B-15, P-7)').not.toBe(
    'SIGKILL',
  );
  expect(existsSync(file), 'the pending guarded call was not run at shutdown (P-7)').toBe(false);

  await stack.startBridge(adapter);
  const fresh = await stack.awaitPermission({ timeoutMs, where: (r) => r.id !== stale.id });
  expect(fresh, 'after the restart the call asks again, in the same session').toMatchObject({
    kind: 'approval',
    status: 'pending',
    session_id: sent.session_id,
  });
  // The stale request: approving it must not run anything (the Gateway may refuse the decision).
  await stack.decide(stale.id, 'approve').catch(() => undefined);
  await stack.decide(fresh.id, 'deny', note);

  const reply = await stack.awaitReply({
    threadOf: sent.mail_id,
    from: stack.agent.name,
    where: (m) => m.body.includes(`NOTED ${task}`),
    timeoutMs,
  });
  expect(reply.in_reply_to, 'the new decision governs: the model saw its note').toBe(sent.mail_id);
  expect(existsSync(file), 'no approval since the restart: the tool never ran').toBe(false);
  const agentMails = fromAgent(stack, await stack.thread(sent.mail_id));
  expect(
    agentMails.map((m) => m.body.slice(0, 200)),
    'one reply, and no failure mail: the interrupted turn was finished after the restart',
  ).toEqual([expect.stringContaining(`NOTED ${task}`)]);
  expect(
    (await stack.person.permissions('all')).map((r) => r.id),
    'one request before and one after the restart',
  ).toEqual(expect.arrayContaining([stale.id, fresh.id]));
  expect(await stack.person.permissions('all')).toHaveLength(2);
}

/**
 * (11) "Always" is remembered per (session, tool): after `always` once, a second guarded call of
 * the same tool in the same Gateway session (a reply in the thread) runs without a new request,
 * also after a bridge restart; plain `approve` covers one call only (the next call asks again).
 * See SPEC P-4.
 */
export async function alwaysApprovalIsRemembered(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const [a1, a2, a3, o1, o2] = [
    marker('always1'),
    marker('always2'),
    marker('always3'),
    marker('once1'),
    marker('once2'),
  ];
  const file = (m: string): string => join(stack.workdir, `ran-${m}.txt`);
  stack.model.addScenarios([
    ...[a1, a2, a3, o1, o2].flatMap((m): Scenario[] => [
      {
        name: `${m}:shell`,
        match: turnStart(m),
        reply: shellCall(adapter, `echo RAN-${m} >> ${file(m)} && cat ${file(m)}`),
      },
      {
        name: `${m}:answer`,
        match: { lastUserMessage: m, hasToolResult: true },
        reply: (request) => ({
          type: 'text',
          text: `DONE ${m}: ${request.toolResults.map((t) => t.text).join(' | ')}`,
        }),
      },
    ]),
  ]);
  await stack.startBridge(adapter);
  const run = async (
    mark: string,
    to: string,
    replyTo?: string,
  ): Promise<{ sent: SentMail; reply: Mail }> => {
    const sent = await stack.sendAs(undefined, to, {
      subject: `Run ${mark}`,
      body: 'Run the command.',
      permissionMode: 'workspace',
      ...(replyTo === undefined ? {} : { replyTo }),
    });
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
    return { sent, reply };
  };
  const requestsIn = async (sessionId: string): Promise<number> =>
    (await stack.person.permissions('all')).filter((r) => r.session_id === sessionId).length;

  // always1 asks; the person answers "always".
  const first = stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Run ${a1}`,
    body: 'Run the command.',
    permissionMode: 'workspace',
  });
  const asked = await stack.awaitPermission({ timeoutMs });
  await stack.decide(asked.id, 'always');
  const s1 = await first;
  const r1 = await stack.awaitReply({ inReplyTo: s1.mail_id, from: stack.agent.name, timeoutMs });
  expect(r1.body).toContain(`DONE ${a1}`);
  expect(existsSync(file(a1)), 'approved always: it ran').toBe(true);

  // always2: a reply in the thread, same session and tool: runs without asking (P-4).
  const r2 = await run(a2, r1.reply_address, r1.id);
  expect(r2.sent.session_id).toBe(s1.session_id);
  expect(r2.reply.body).toContain(`RAN-${a2}`);
  expect(existsSync(file(a2))).toBe(true);
  expect(await requestsIn(s1.session_id), '"always" covers the next call of the tool in the session').toBe(1);

  // always3: after a restart, still remembered ("must persist across processes").
  const stopped = await stack.stopBridge();
  expect(stopped?.signal).not.toBe('SIGKILL');
  await stack.startBridge(adapter);
  const r3 = await run(a3, r2.reply.reply_address, r2.reply.id);
  expect(r3.reply.body).toContain(`RAN-${a3}`);
  expect(await requestsIn(s1.session_id), '"always" survives a bridge restart').toBe(1);

  // Plain approve in another session: one call only.
  const once = stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Run ${o1}`,
    body: 'Run the command.',
    permissionMode: 'workspace',
  });
  const askedOnce = await stack.awaitPermission({ timeoutMs, where: (r) => r.id !== asked.id });
  await stack.decide(askedOnce.id, 'approve');
  const s4 = await once;
  const r4 = await stack.awaitReply({ inReplyTo: s4.mail_id, from: stack.agent.name, timeoutMs });
  expect(r4.body).toContain(`RAN-${o1}`);
  const again = stack.sendAs(undefined, r4.reply_address, {
    subject: `Run ${o2}`,
    body: 'Run the command.',
    permissionMode: 'workspace',
    replyTo: r4.id,
  });
  const askedAgain = await stack.awaitPermission({
    timeoutMs,
    where: (r) => r.id !== asked.id && r.id !== askedOnce.id,
  });
  expect(askedAgain.session_id, 'plain approve is one call only: the next call asks again').toBe(
    s4.session_id,
  );
  expect(existsSync(file(o2)), 'and waits for the answer').toBe(false);
  await stack.decide(askedAgain.id, 'approve');
  const s5 = await again;
  const r5 = await stack.awaitReply({ inReplyTo: s5.mail_id, from: stack.agent.name, timeoutMs });
  expect(r5.body).toContain(`RAN-${o2}`);

  for (const m of [a3, o1, o2]) expect(turnStarts(stack.model, m), `turns for ${m}`).toHaveLength(1);
  expectAllRequestsScripted(stack);
}

/**
 * (12) `connect_to_server` with a Gateway that cannot be reached: the tool reports the failure and
 * that the old connection stays; the bridge keeps its event stream and the next mail gets its reply.
 * Then the same Gateway under another URL (direct, not through the proxy): the switch succeeds and
 * mail keeps flowing, now over the new URL. See SPEC B-18, B-17.
 */
export async function badServerLeavesConnection(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const [bad, after, good, last] = [marker('bad'), marker('after'), marker('good'), marker('last')];
  // Port 9 (discard) on loopback: nothing listens there in a test environment.
  const badUrl = 'http://127.0.0.1:9';
  const connect = (mark: string, url: string): Scenario => ({
    name: `${mark}:connect`,
    match: turnStart(mark),
    reply: mailToolCall(adapter, 'connect_to_server', { url }),
  });
  stack.model.addScenarios([
    connect(bad, badUrl),
    {
      name: `${bad}:answer`,
      match: { lastUserMessage: bad, toolResultContains: textPattern('tools.connect.failed') },
      reply: { type: 'text', text: `FAILED ${bad}` },
    },
    unexpectedResult(bad),
    answerAtOnce(after, `DONE ${after}`),
    connect(good, stack.gatewayUrl),
    {
      name: `${good}:answer`,
      match: { lastUserMessage: good, toolResultContains: textPattern('tools.connect.done') },
      reply: { type: 'text', text: `CONNECTED ${good}` },
    },
    unexpectedResult(good),
    answerAtOnce(last, `DONE ${last}`),
  ]);
  await stack.startBridge(adapter);
  const streamBefore = stack.proxy.eventStreams().at(-1);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Connect ${bad}`,
    body: 'Switch.',
  });
  const failed = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(failed.body, 'the model was told the connect failed').toContain(`FAILED ${bad}`);
  expect(toolResultsSeen(stack.model, bad)).toContain(stack.bridgeGatewayUrl);

  const next = await stack.sendAs(undefined, sent.address, {
    subject: `After ${after}`,
    body: 'Still there?',
  });
  const reply = await stack.awaitReply({ inReplyTo: next.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body).toContain(`DONE ${after}`);
  const streamNow = stack.proxy.eventStreams().at(-1);
  expect(streamNow?.seq, 'the old event stream was kept (B-18: a failed attempt changes nothing)').toBe(
    streamBefore?.seq,
  );
  expect(streamNow?.closed).toBe(false);

  // The same Gateway under its direct URL: the switch works and mail keeps flowing.
  const third = await stack.sendAs(undefined, sent.address, { subject: `Connect ${good}`, body: 'Switch.' });
  const switched = await stack.awaitReply({ inReplyTo: third.mail_id, from: stack.agent.name, timeoutMs });
  expect(switched.body).toContain(`CONNECTED ${good}`);
  const fourth = await stack.sendAs(undefined, sent.address, {
    subject: `Last ${last}`,
    body: 'Still there?',
  });
  const lastReply = await stack.awaitReply({ inReplyTo: fourth.mail_id, from: stack.agent.name, timeoutMs });
  expect(lastReply.body).toContain(`DONE ${last}`);
  expect(
    stack.proxy
      .eventStreams()
      .at(-1)
      ?.frames.some((f) => f.data.includes(fourth.mail_id)),
    'after the switch the events come over the new URL, not the old one',
  ).toBe(false);
  expectAllRequestsScripted(stack);
}

/**
 * (13) Heartbeat contents as the Gateway shows them once the bridge started (B-1: the first
 * heartbeat comes before the event stream): the agent is online with its platform, its model
 * catalogue holds every scripted model (an admin's selection of them is not stale, of a model the
 * host lacks is), and `mode_enforcement` is `native` (the Gateway stamps it on the agent's
 * `new_mail` events). See SPEC G-25, G-26, P-8, B-1.
 */
export async function heartbeatShowsAgent(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('beat');
  stack.model.addScenarios([answerAtOnce(task, `DONE ${task}`)]);
  await stack.startBridge(adapter);

  const contact = (await stack.person.contacts()).find((c) => c.name === stack.agent.name);
  expect(contact, 'the agent is listed').toMatchObject({
    kind: 'agent',
    platform: adapter.platform,
    online: true,
  });
  // SPEC P-12: every heartbeat says the sandbox's state, why when it is not verified (off here).
  expect(contact?.sandbox, 'the heartbeat says the workspace sandbox state').toMatch(/^unverified: .+/);

  const absent = `absent-model-${task.split('.')[1] ?? 'x'}`;
  const models = [...stack.model.models, absent];
  const selection = await stack.setAllowedModels(adapter.platform, models);
  expect(
    selection.models,
    'the catalogue from the heartbeat holds every scripted model, and nothing the host lacks (G-25, G-26)',
  ).toEqual(models.map((m) => ({ key: `${stack.modelProvider}/${m}`, stale: m === absent })));
  await stack.setAllowedModels(adapter.platform, []);

  const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Beat ${task}`, body: 'Hi.' });
  const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body).toContain(`DONE ${task}`);
  const event = stack.proxy
    .eventStreams()
    .flatMap((s) => s.frames)
    .filter((f) => f.event === 'new_mail')
    .map((f) => JSON.parse(f.data) as { mail_id?: string; permission_enforcement?: string })
    .find((e) => e.mail_id === sent.mail_id);
  expect(event, "the mail's new_mail event went to the bridge").toBeDefined();
  expect(
    event?.permission_enforcement,
    'the heartbeat reported native enforcement: the permission hook is verified (P-8)',
  ).toBe('native');
  expectAllRequestsScripted(stack);
}

/**
 * (14) A mail that arrives on the event stream while the start-up catch-up's inbox listing is on
 * its way (the proxy holds that listing until the mail's turn has begun) is listed as unread too,
 * and still runs exactly once: SSE and catch-up share one de-duplication (B-20). The bridge must
 * hold its event stream before it lists the inbox, else a mail in between would be lost.
 * See SPEC B-20, B-1, B-13.
 */
export async function catchUpSkipsMailTakenFromStream(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('dedup');
  const barrier = marker('barrier');
  const file = join(stack.workdir, `dedup-${task}.txt`);
  stack.model.addScenarios([
    answerAtOnce(barrier, `ACK ${barrier}`),
    {
      name: `${task}:shell`,
      match: turnStart(task),
      reply: shellCall(adapter, `echo RAN-${task} >> ${file} && cat ${file}`),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: `RAN-${task}` },
      reply: { type: 'text', text: `DONE ${task}` },
    },
    unexpectedResult(task),
  ]);
  const inboxPath = routePath('inbox');
  const held = stack.proxy.holdNextRequest((method, path) => method === 'GET' && path === inboxPath);
  const started = stack.startBridge(adapter);
  started.catch(() => undefined); // awaited below, after the listing
  const listing = await within(held, timeoutMs, "the bridge's catch-up listing of its inbox (B-20)");
  try {
    await started;
  } catch (error) {
    throw new Error(
      'the bridge did not hold its event stream while its catch-up listing was pending: it must open the stream before it lists the inbox (B-1, B-20), else a mail arriving in between is lost',
      { cause: error },
    );
  }

  // The mail arrives on the stream; its turn is held at a permission request, so it is in progress
  // (and unread) while the listing goes through.
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Dedup ${task}`,
    body: 'Run it once.',
    permissionMode: 'workspace',
  });
  const request = await stack.awaitPermission({ timeoutMs });
  expect(turnStarts(stack.model, task), 'the mail came on the event stream').toHaveLength(1);
  await within(listing.release(), timeoutMs, 'the held inbox listing');
  await stack.decide(request.id, 'approve');
  const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(reply.body).toContain(`DONE ${task}`);

  const last = await stack.sendAs(undefined, sent.address, { subject: `Barrier ${barrier}`, body: 'done?' });
  await stack.awaitReply({ inReplyTo: last.mail_id, from: stack.agent.name, timeoutMs });
  expect(turnStarts(stack.model, task), 'the listed mail was not run a second time').toHaveLength(1);
  expect(readFileSync(file, 'utf8')).toBe(`RAN-${task}\n`);
  expect(
    fromAgent(stack, await stack.thread(sent.mail_id)).map((m) => m.in_reply_to),
    'one reply per mail',
  ).toEqual([sent.mail_id, last.mail_id]);
  expect(await stack.person.permissions('all'), 'one permission request').toHaveLength(1);
  expectAllRequestsScripted(stack);
}

/**
 * (15) A restart does not run finished mails again: a mail answered before the bridge stopped is
 * not delivered by the catch-up after the restart (catch-up is for mail that was never taken or
 * never finished, B-20); a barrier mail into the same session, sent while the bridge is down,
 * shows it. The stop comes after a first barrier's reply, not right after the task's own reply (a
 * stop in that instant is a narrower window this scenario does not probe). See SPEC B-20, B-15, B-10.
 */
export async function restartDoesNotRerunAnsweredMail(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const task = marker('answered');
  const [before, after] = [marker('barrier1'), marker('barrier2')];
  stack.model.addScenarios([answerAtOnce(task, `DONE ${task}`), answerAtOnce(before, `ACK ${before}`)]);
  stack.model.addScenarios([answerAtOnce(after, `ACK ${after}`)]);
  await stack.startBridge(adapter);
  const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Once ${task}`, body: 'Once.' });
  await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
  // First barrier: its turn starts only once the task's turn is over, bookkeeping included (B-13),
  // so the stop below does not fall between the task's reply and the bridge noting it as done.
  const first = await stack.sendAs(undefined, sent.address, { subject: `Barrier ${before}`, body: 'next' });
  await stack.awaitReply({ inReplyTo: first.mail_id, from: stack.agent.name, timeoutMs });

  const stopped = await stack.stopBridge();
  expect(stopped?.signal).not.toBe('SIGKILL');
  // Second barrier, sent while the bridge is down: the catch-up after the restart delivers unread
  // mail oldest first and serially (B-20), so anything it would run again runs before this one.
  const last = await stack.sendAs(undefined, sent.address, { subject: `Barrier ${after}`, body: 'done?' });
  await stack.startBridge(adapter);
  await stack.awaitReply({ inReplyTo: last.mail_id, from: stack.agent.name, timeoutMs });
  expect(turnStarts(stack.model, task), 'the answered mail was not run again after the restart').toHaveLength(
    1,
  );
  expect(
    fromAgent(stack, await stack.thread(sent.mail_id)).filter((m) => m.in_reply_to === sent.mail_id),
    'one reply to the answered mail',
  ).toHaveLength(1);
  expectAllRequestsScripted(stack);
}

/**
 * The crash window of a relay, in one bridge of its own (three starts):
 * 1. killed (SIGKILL) right after the Gateway took the turn's relay and before the bridge marked
 *    the mail handled (the kit's failpoint `after-relay-ack`): the relay marked the mail read at
 *    the Gateway, so after the restart it is not run again: one reply, one model turn. (Were it
 *    run again, its relay is keyed by the mail and so a `duplicate_relay`: the kit's tests cover
 *    that with a Gateway that loses the mark-read.)
 * 2. killed while the relay of another mail is in flight (held at the proxy, never reaching the
 *    Gateway): after the restart that mail runs again, its prompt says it is a retry, and it gets
 *    exactly one reply.
 * Each barrier is sent while the bridge is down: the catch-up runs unread mail oldest first and
 * serially (B-20, B-13), so its answer comes after the re-run's relay. See SPEC B-10, G-32, B-20.
 */
export async function crashWindowRepliesOnce(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = stepTimeout(adapter);
  const [acked, inflight] = [marker('acked'), marker('inflight')];
  const [barrier1, barrier2] = [marker('barrier1'), marker('barrier2')];
  stack.model.addScenarios([acked, inflight, barrier1, barrier2].map((m) => answerAtOnce(m, `DONE ${m}`)));
  const repliesTo = async (mail: SentMail): Promise<Mail[]> =>
    fromAgent(stack, await stack.thread(mail.mail_id)).filter((m) => m.in_reply_to === mail.mail_id);

  const crashing = await stack.startBridge(adapter, { [FAILPOINT_VARIABLE]: 'after-relay-ack' });
  const first = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Acked ${acked}`,
    body: 'Once.',
  });
  const exit = await within(
    crashing.exited,
    timeoutMs,
    'the bridge killing itself after its relay was taken',
  );
  expect(exit.signal, 'killed at the failpoint').toBe('SIGKILL');
  crashing.kill(); // the rest of its process group, as kill -9 of a unit's control group would
  expect((await repliesTo(first)).map((m) => m.body)).toEqual([expect.stringContaining(`DONE ${acked}`)]);
  const last1 = await stack.sendAs(undefined, first.address, {
    subject: `Barrier ${barrier1}`,
    body: 'next',
  });
  const bridge = await stack.startBridge(adapter);
  await stack.awaitReply({ inReplyTo: last1.mail_id, from: stack.agent.name, timeoutMs });
  expect(await repliesTo(first), 'one reply to the mail whose relay was taken before the crash').toHaveLength(
    1,
  );
  expect(turnStarts(stack.model, acked), 'the answered mail is not run again after the crash').toHaveLength(
    1,
  );

  // The next send of this bridge is the second task's relay (the model answers at once, no tool).
  const sendPath = routePath('send');
  const held = stack.proxy.holdNextRequest((method, path) => method === 'POST' && path === sendPath);
  const second = await stack.sendAs(undefined, first.address, {
    subject: `Inflight ${inflight}`,
    body: 'Once.',
  });
  const relay = await within(held, timeoutMs, "the bridge's relay of the second answer");
  bridge.kill();
  await bridge.exited;
  // The relay's sender may be another process of the bridge: pi's worker, which on losing its
  // daemon takes up to 6 s to withdraw pending requests (P-7) before it exits. Only once it is
  // gone is the relay sure never to reach the Gateway (else the Gateway would take it, and the
  // mail would be answered without a second run).
  await within(relay.clientGone, 15_000, 'the connection of the relay closing with the killed bridge');
  await relay.release(); // its client is gone: not forwarded
  const last2 = await stack.sendAs(undefined, first.address, {
    subject: `Barrier ${barrier2}`,
    body: 'done?',
  });
  await stack.startBridge(adapter);
  await stack.awaitReply({ inReplyTo: last2.mail_id, from: stack.agent.name, timeoutMs });
  const replies = await repliesTo(second);
  expect(replies, 'one reply to the mail whose relay was in flight at the crash').toHaveLength(1);
  expect(replies[0]?.body).toContain(`DONE ${inflight}`);
  const runs = turnStarts(stack.model, inflight);
  expect(runs, 'the mail whose relay never reached the Gateway ran again').toHaveLength(2);
  expect(runs[0]?.lastUserText, 'its first run is no retry').not.toContain(
    formatText('prompt.note.retry', {}, CONFORMANCE_LOCALE),
  );
  expect(runs[1]?.lastUserText, 'its second run is told it is a retry (B-10)').toContain(
    formatText('prompt.note.retry', {}, CONFORMANCE_LOCALE),
  );
  expectAllRequestsScripted(stack);
}

/**
 * Question wait the `question` scenario configures, in ms (SPEC P-9): long enough for a person who
 * answers at once on a loaded machine, short enough to wait out once. @default 8_000
 */
export const CONFORMANCE_QUESTION_TIMEOUT_MS = 8_000;

function questionToolOf(adapter: HostHarness): BridgeQuestionTool {
  const q = adapter.questions;
  if (q === undefined || 'unsupported' in q)
    throw new Error(`the ${adapter.platform} adapter declares no question tool`);
  return q;
}

/**
 * (16) Questions (SPEC P-9): the model calls the host's question tool. With options: one question
 * mail reaches the person with those options, the person's choice (`agentmail answer`) comes back
 * to the model in the tool result. Without options: a free-text question (no options, never an
 * approve/deny pair), the person's words come back. Never answered: after the bridge's question
 * timeout the model gets an error at once and the turn still ends in a reply — no hang.
 */
export async function questionsReachThePerson(stack: Stack, adapter: HostHarness): Promise<void> {
  const tool = questionToolOf(adapter);
  const questionTimeoutMs = CONFORMANCE_QUESTION_TIMEOUT_MS;
  const timeoutMs = stepTimeout(adapter) + questionTimeoutMs;
  const [choose, free, silent] = [marker('choose'), marker('free'), marker('silent')];
  const [alpha, beta] = [`alpha-${choose.split('.')[1]}`, `beta-${choose.split('.')[1]}`];
  const word = `Orchid-${free.split('.')[1]}`;
  const ask = (mark: string, questions: NeutralQuestion[]): Scenario => ({
    name: `${mark}:ask`,
    match: turnStart(mark),
    reply: { type: 'tool_calls', calls: [{ name: tool.tool, arguments: tool.args(questions) }] },
  });
  stack.model.addScenarios([
    ask(choose, [
      {
        id: 'q1',
        question: `Which variant for ${choose}?`,
        header: 'Variant',
        options: [{ label: alpha, description: 'the first' }, { label: beta }],
      },
    ]),
    {
      name: `${choose}:answer`,
      match: { lastUserMessage: choose, toolResultContains: beta },
      reply: { type: 'text', text: `PICKED ${choose}` },
    },
    unexpectedResult(choose),
    ask(free, [{ id: 'q1', question: `What name for ${free}?` }]),
    {
      name: `${free}:answer`,
      match: { lastUserMessage: free, toolResultContains: word },
      reply: { type: 'text', text: `NAMED ${free}` },
    },
    unexpectedResult(free),
    ask(silent, [
      { id: 'q1', question: `Anyone there for ${silent}?`, options: [{ label: 'yes' }, { label: 'no' }] },
    ]),
    {
      name: `${silent}:answer`,
      match: { lastUserMessage: silent, toolResultContains: textPattern('permission.question.no_answer') },
      reply: { type: 'text', text: `NO ANSWER ${silent}` },
    },
    unexpectedResult(silent),
  ]);
  await stack.startBridge(adapter, {}, { questionTimeoutMs });

  // Options: one question mail with exactly those options; the choice reaches the model.
  const first = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Choose ${choose}`,
    body: 'Pick one.',
  });
  const asked = await stack.awaitPermission({ timeoutMs });
  expect(asked).toMatchObject({ kind: 'question', status: 'pending', session_id: first.session_id });
  expect(asked.options, 'the options of the question, nothing else (no approve/deny)').toEqual([alpha, beta]);
  expect(asked.question).toContain(`Which variant for ${choose}?`);
  expect((await stack.person.mail(asked.mail_id)).is_permission, 'a question mail reached the person').toBe(
    true,
  );
  await stack.person.answer(asked.id, [beta]);
  const picked = await stack.awaitReply({ inReplyTo: first.mail_id, from: stack.agent.name, timeoutMs });
  expect(picked.body).toContain(`PICKED ${choose}`);
  expect(toolResultsSeen(stack.model, choose)).toContain(beta);
  const offered = stack.model.requests({ match: { lastUserMessage: choose } }).flatMap((r) => r.toolNames);
  expect(offered, 'the question tool is offered to the model').toContain(tool.tool);
  for (const own of tool.hidden ?? [])
    expect(offered, `the host's own "${own}" waits for a UI nobody watches (P-9)`).not.toContain(own);

  // Free text: no options at all; the person's words reach the model.
  const second = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Name ${free}`,
    body: 'Ask me.',
  });
  const open = await stack.awaitPermission({ timeoutMs });
  expect(open).toMatchObject({ kind: 'question', session_id: second.session_id });
  expect(open.options, 'a question without options is free text').toEqual([]);
  await stack.person.answer(open.id, [word]);
  const named = await stack.awaitReply({ inReplyTo: second.mail_id, from: stack.agent.name, timeoutMs });
  expect(named.body).toContain(`NAMED ${free}`);
  expect(toolResultsSeen(stack.model, free)).toContain(word);

  // Never answered: the question times out, the model is told at once, the turn ends in a reply.
  const third = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Silent ${silent}`,
    body: 'Ask.',
  });
  const ignored = await stack.awaitPermission({ timeoutMs });
  expect(ignored).toMatchObject({ kind: 'question', session_id: third.session_id });
  const after = await stack.awaitReply({ inReplyTo: third.mail_id, from: stack.agent.name, timeoutMs });
  expect(after.body, 'the model got the timeout error and finished its turn').toContain(
    `NO ANSWER ${silent}`,
  );
  expect(toolResultsSeen(stack.model, silent)).toMatch(textPattern('permission.question.no_answer'));
  expect(
    fromAgent(stack, await stack.thread(third.mail_id)).map((m) => m.in_reply_to),
    'one reply, no failure mail: the question timed out, not the turn',
  ).toEqual([third.mail_id]);
  expectAllRequestsScripted(stack);
}

/**
 * The hosts `crash-window` runs on: the kit's logic, once per kind of bridge (a daemon with worker
 * processes; a plugin inside its host). Measured: on all five hosts the suite took 9m43s instead
 * of 7m22s on 2 cores.
 */
const CRASH_WINDOW_PLATFORMS: readonly string[] = ['pi', 'opencode'];

/** Every conformance scenario: the list, then the robustness checks. */
export const CONFORMANCE_SCENARIOS: readonly ConformanceScenario[] = [
  {
    id: 'person-task-reply',
    title:
      'a person mails a task: the model reads it with the mail tools, exactly one threaded reply is relayed',
    rules: ['B-5', 'B-6', 'B-10', 'B-13'],
    run: personTaskGetsOneThreadedReply,
    host: 'shared',
  },
  {
    id: 'agent-sender-no-relay',
    title: 'an agent mails: the prompt says so, nothing is relayed automatically',
    rules: ['B-5', 'B-6', 'B-10'],
    run: agentMailIsNotRelayed,
    host: 'shared',
  },
  {
    id: 'guarded-tool-approved',
    title: 'workspace mode: a guarded tool asks by mail, runs after approval',
    rules: ['P-1', 'P-3', 'P-4', 'G-38'],
    run: guardedToolRunsAfterApproval,
    host: 'shared',
  },
  {
    id: 'guarded-tool-denied',
    title: 'workspace mode: a denied guarded tool does not run and the model sees the note',
    rules: ['P-4', 'P-6'],
    run: guardedToolDeniedWithNote,
    host: 'shared',
  },
  {
    id: 'plan-mode-refused',
    title: 'plan mode: reading works, a guarded tool is refused without a permission mail',
    rules: ['P-1', 'P-3'],
    run: planModeRefusesWithoutAsking,
    host: 'shared',
  },
  {
    id: 'all-models-fail',
    title: 'every allowed model fails: tried in order, then one failure mail with the cause',
    rules: ['B-8', 'B-9'],
    run: allModelsFailSendsFailureMail,
    host: 'own-gateway',
  },
  {
    id: 'backlog-after-restart',
    title: 'three mails while the bridge is down: after a restart all processed, oldest first, once each',
    rules: ['B-1', 'B-13', 'B-15', 'B-20', 'G-39'],
    run: backlogAfterRestart,
    host: 'serial',
  },
  {
    id: 'attachment-round-trip',
    title: 'attachments: download, upload, send with attachment_ids as a JSON string',
    rules: ['B-10', 'B-16', 'B-17'],
    run: attachmentRoundTrip,
    host: 'shared',
  },
  {
    id: 'sse-cut',
    title: 'event stream cut inside a frame: reconnect with Last-Event-ID, no event lost',
    rules: ['B-2', 'G-22'],
    run: sseCutLosesNoEvent,
    host: 'serial',
  },
  {
    id: 'turn-timeout',
    title:
      'a hanging model answer: stopped at the turn timeout, one failure mail naming it, the bridge keeps working',
    rules: ['B-7', 'B-9', 'B-13'],
    run: turnTimeoutSendsOneFailureMail,
    host: 'own',
  },
  {
    id: 'shutdown-while-asking',
    title: 'SIGTERM while a guarded call waits: exits in time, nothing ran; after a restart it asks again',
    rules: ['B-15', 'P-7', 'B-20', 'P-4'],
    run: shutdownWhileAskingRunsNothing,
    host: 'serial',
  },
  {
    id: 'always-approval',
    title:
      '"always" covers later calls of the tool in the session, across a restart; "approve" one call only',
    rules: ['P-4'],
    run: alwaysApprovalIsRemembered,
    host: 'serial',
  },
  {
    id: 'connect-bad-server',
    title:
      'connect_to_server to an unreachable Gateway fails and keeps the old one; another URL of the same Gateway works',
    rules: ['B-18', 'B-17'],
    run: badServerLeavesConnection,
    host: 'serial',
    changesBridge: true,
  },
  {
    id: 'heartbeat-contents',
    title:
      'after start the Gateway shows the agent online, its platform, the scripted catalogue, native enforcement',
    rules: ['G-25', 'G-26', 'P-8', 'P-12', 'B-1'],
    run: heartbeatShowsAgent,
    host: 'shared',
  },
  {
    id: 'stream-and-catch-up',
    title: 'a mail on the event stream that the catch-up also lists runs exactly once',
    rules: ['B-20', 'B-1', 'B-13'],
    run: catchUpSkipsMailTakenFromStream,
    host: 'serial',
    freshStart: true,
  },
  {
    id: 'question',
    title:
      "the host's question tool (its own, or the kit's ask_person): one question mail with the options, the answer reaches the model; free text; never answered → a timeout error, no hang",
    rules: ['P-9', 'P-10', 'G-38'],
    run: questionsReachThePerson,
    host: 'own',
    unsupportedBy: (adapter) =>
      adapter.questions === undefined
        ? 'the adapter declares no question seam (HostHarness.questions)'
        : 'unsupported' in adapter.questions
          ? adapter.questions.unsupported
          : undefined,
  },
  {
    id: 'long-body-pages',
    title: 'a 1 MB body is read in pages: each read_mail result holds one page, the offset reaches the end',
    rules: ['B-17'],
    run: longBodyIsReadInPages,
    host: 'shared',
  },
  {
    id: 'key-out-of-shell',
    title:
      "the agent key is in no variable of the model's shell, no file the bridge or host wrote, nor the initial environment of the shell's parent",
    rules: ['B-21'],
    run: agentKeyOutOfShellReach,
    host: 'shared',
  },
  {
    id: 'crash-window',
    title:
      'killed after the Gateway took the relay (before the mail was marked handled): not run again; killed while a relay is in flight: run again; one reply each',
    rules: ['B-10', 'G-32', 'B-20'],
    run: crashWindowRepliesOnce,
    // A bridge of its own (killed and restarted twice), beside the others: not in the serial chain.
    host: 'own',
    unsupportedBy: (adapter) =>
      CRASH_WINDOW_PLATFORMS.includes(adapter.platform)
        ? undefined
        : `the crash window is the kit's and the Gateway's (the relay key is the mail's; the relay marks the mail read): tested in the kit and on ${CRASH_WINDOW_PLATFORMS.join(' and ')}, where it failed before; three more host starts per host would put the suite past its 8 minutes`,
  },
  {
    id: 'restart-no-rerun',
    title: 'a mail answered before a restart is not run again after it',
    rules: ['B-20', 'B-15', 'B-10'],
    run: restartDoesNotRerunAnsweredMail,
    host: 'serial',
  },
];
