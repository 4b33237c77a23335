/**
 * The permission seam inside the real `opencode serve` (SPEC P-1..P-8, §7 opencode): the bundled
 * plugin, a real Gateway, the scripted model. One stack whose opencode config says
 * `permission: { bash: 'ask', read: 'ask' }` (a person's config that wants opencode's own prompt)
 * serves every case but shutdown, which gets its own stack.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Mail, PermissionView } from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import type { ManagedProcess, Stack } from '@agentmail/testkit';
import {
  answerAtOnce,
  CONFORMANCE_MODELS,
  marker,
  readFileCall,
  shellCall,
  startConformanceStack,
  textPattern,
  turnStart,
  unexpectedResult,
} from '@agentmail/testkit/conformance';
import type { OpencodeClient } from '@opencode-ai/sdk';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type BusEvent, EventCollector } from '../harness/events.js';
import { createOpencodeAdapter, opencodeAdapter, removePluginBundle } from '../harness/opencode-adapter.js';
import { opencodeClient } from '../harness/serve.js';
import { createSession, promptAsync, replyPermission, v2Client } from '../src/opencode-facts.js';

afterAll(removePluginBundle);

const askAdapter = createOpencodeAdapter({ config: { permission: { bash: 'ask', read: 'ask' } } });
const STEP_MS = askAdapter.stepTimeoutMs ?? 60_000;
const TEST_MS = 150_000;
/** opencode's words when a reply rejects with a message (README "Platform facts" (b)). */
const REJECTED_WITH_FEEDBACK =
  'The user rejected permission to use this specific tool call with the following feedback: ';

/** The `opencode serve` URL from its "listening" line. */
async function serveUrl(proc: ManagedProcess): Promise<string> {
  const line = await proc.waitForLine(/opencode server listening on http:\/\/\S+/, 1_000);
  const url = /(http:\/\/\S+)/.exec(line)?.[1];
  if (url === undefined) throw new Error(`no URL in ${line}`);
  return url;
}

/** A bash call of the scripted model (opencode's argument shape). */
const bash = (command: string) => shellCall(askAdapter, command);

/** Permission requests of one Gateway session, as the person sees them. */
async function requestsOf(stack: Stack, sessionId: string): Promise<PermissionView[]> {
  return (await stack.person.permissions('all')).filter((p) => p.session_id === sessionId);
}

/** opencode sessions in which `permission.*` events of `type` happened since `from`. */
function permissionEvents(events: EventCollector, type: string, sessionId: string, from = 0): BusEvent[] {
  return events.events.slice(from).filter((e) => e.type === type && e.properties.sessionID === sessionId);
}

describe('permission seam in opencode serve, config { bash: ask, read: ask }', () => {
  let stack: Stack;
  let oc: OpencodeClient;
  let events: EventCollector;
  let bridge: ManagedProcess;

  beforeAll(async () => {
    stack = await startConformanceStack(askAdapter);
    bridge = await stack.startBridge(askAdapter);
    oc = opencodeClient(await serveUrl(bridge), stack.workdir);
    events = await EventCollector.open(oc);
  }, 120_000);

  afterAll(async () => {
    events?.close();
    await stack?.close();
  });

  /** The agent's reply in the thread of `sent`. */
  function mailTurnReply(sent: { mail_id: string }): Promise<Mail> {
    return stack.awaitReply({ threadOf: sent.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
  }

  /**
   * A person opens a session in opencode (HTTP API, not mail) and its model calls bash: opencode's
   * own prompt is published and left to the person; no mail, no answer from the bridge.
   */
  async function personSessionAsks(task: string, file: string) {
    const session = await createSession(oc, { title: `Person ${task}`, directory: stack.workdir });
    const mark = events.mark();
    await promptAsync(oc, {
      sessionId: session.id,
      directory: stack.workdir,
      text: `Please run it ${task}`,
      model: { providerID: stack.modelProvider, modelID: CONFORMANCE_MODELS.working },
    });
    const asked = await events.waitFor(
      (e) => e.type === 'permission.asked' && e.properties.sessionID === session.id,
      STEP_MS,
      mark,
    );
    expect(asked.properties).toMatchObject({ permission: 'bash', patterns: [`echo RAN-${task} > ${file}`] });
    return { session, asked, mark };
  }

  it(
    "ACCEPTANCE: a person's own opencode session keeps opencode's prompt; the bridge neither mails nor answers it",
    async () => {
      const t0 = performance.now();
      const task = marker('person');
      const barrier = marker('barrier');
      const file = join(stack.workdir, `person-${task}.txt`);
      stack.model.addScenarios([
        { name: `${task}:bash`, match: turnStart(task), reply: bash(`echo RAN-${task} > ${file}`) },
        {
          name: `${task}:answer`,
          match: { lastUserMessage: task, hasToolResult: true },
          reply: { type: 'text', text: `DONE ${task}` },
        },
        answerAtOnce(barrier, `ACK ${barrier}`),
      ]);
      const { session, asked, mark } = await personSessionAsks(task, file);
      const requestId = String(asked.properties.id);

      // Barrier: a mail turn of the same bridge, started after the ask, ends with its reply; the
      // bridge saw the ask before it (one event feed), so an answer or a mail would have come by now.
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Barrier ${barrier}`,
        body: 'ack',
      });
      expect((await mailTurnReply(sent)).body).toContain(`ACK ${barrier}`);

      const pending = await v2Client(oc).permission.list({ directory: stack.workdir });
      expect(
        (pending.data ?? []).map((p) => p.id),
        'GET /permission still lists the ask',
      ).toContain(requestId);
      expect(permissionEvents(events, 'permission.replied', session.id, mark)).toEqual([]);
      expect(existsSync(file), 'bash waits for the person').toBe(false);
      expect(
        (await stack.person.permissions('all')).filter((p) => p.context.includes(task)),
        'no permission request reached the Gateway',
      ).toEqual([]);
      expect((await stack.inbox()).filter((m) => m.is_permission)).toEqual([]);

      // The person answers in opencode: the request was still theirs to answer.
      await replyPermission(oc, { requestId, reply: 'once', directory: stack.workdir });
      await events.waitFor(
        (e) => e.type === 'session.idle' && e.properties.sessionID === session.id,
        STEP_MS,
        mark,
      );
      expect(readFileSync(file, 'utf8')).toBe(`RAN-${task}\n`);
      expect(stack.model.requests({ match: { lastUserMessage: task, hasToolResult: true } })).toHaveLength(1);
      expect(permissionEvents(events, 'permission.replied', session.id, mark)).toHaveLength(1);
      console.info(`[figures] person-session ask: ${Math.round(performance.now() - t0)} ms`);
    },
    TEST_MS,
  );

  /** A mail whose model calls `read` on a fresh file; opencode's config asks for read. */
  function readTask(label: string) {
    const task = marker(label);
    const file = join(stack.workdir, `notes-${task}.txt`);
    writeFileSync(file, `CONTENT-${task}\n`);
    stack.model.addScenarios([
      { name: `${task}:read`, match: turnStart(task), reply: readFileCall(askAdapter, file) },
      {
        name: `${task}:content`,
        match: { lastUserMessage: task, toolResultContains: `CONTENT-${task}` },
        reply: { type: 'text', text: `READ ${task}` },
      },
      {
        name: `${task}:rejected`,
        match: { lastUserMessage: task, toolResultContains: REJECTED_WITH_FEEDBACK },
        reply: (r) => ({
          type: 'text',
          text: `REFUSED ${task}: ${r.toolResults.map((t) => t.text).join(' | ')}`,
        }),
      },
      unexpectedResult(task),
    ]);
    return { task, file };
  }

  it(
    "opencode's own ask (read) in a mail session: asked by mail once; approve → the tool runs once (P-3, P-4)",
    async () => {
      const t0 = performance.now();
      const { task } = readTask('read-approve');
      const mark = events.mark();
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Read ${task}`,
        body: 'Read the notes.',
        permissionMode: 'workspace',
      });
      const request = await stack.awaitPermission({
        where: (p) => p.session_id === sent.session_id,
        timeoutMs: STEP_MS,
      });
      expect(request).toMatchObject({ kind: 'approval', status: 'pending' });
      expect(request.context).toContain(`notes-${task}`);
      await stack.decide(request.id, 'approve');
      const reply = await mailTurnReply(sent);
      expect(reply.body).toContain(`READ ${task}`);
      expect(await requestsOf(stack, sent.session_id), 'exactly one permission request').toHaveLength(1);
      expect(
        stack.model.requests({ match: { lastUserMessage: task, toolResultContains: `CONTENT-${task}` } }),
        'the tool ran once',
      ).toHaveLength(1);
      const replied = events.events
        .slice(mark)
        .filter((e) => e.type === 'permission.replied')
        .map((e) => e.properties.reply);
      expect(replied, 'the bridge answered opencode once').toEqual(['once']);
      console.info(`[figures] read ask approved by mail: ${Math.round(performance.now() - t0)} ms`);
    },
    TEST_MS,
  );

  it(
    "opencode's own ask (read) in a mail session: deny with a note → the model reads it, the loop goes on, the reply is relayed (P-6)",
    async () => {
      const t0 = performance.now();
      const { task } = readTask('read-deny');
      const note = `Do not read that file (${task})`;
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Read ${task}`,
        body: 'Read the notes.',
        permissionMode: 'workspace',
      });
      const request = await stack.awaitPermission({
        where: (p) => p.session_id === sent.session_id,
        timeoutMs: STEP_MS,
      });
      await stack.decide(request.id, 'deny', note);
      const reply = await mailTurnReply(sent);
      expect(reply.body).toContain(`REFUSED ${task}: ${REJECTED_WITH_FEEDBACK}`);
      expect(reply.body).toContain(note);
      expect(reply.body).not.toContain(`CONTENT-${task}`);
      expect(reply).toMatchObject({ relay: true, in_reply_to: sent.mail_id });
      expect(await requestsOf(stack, sent.session_id)).toHaveLength(1);
      console.info(`[figures] read ask denied by mail: ${Math.round(performance.now() - t0)} ms`);
    },
    TEST_MS,
  );

  it(
    "opencode's own ask (read) in a plan-mode mail session: refused with the plan text, no permission mail (P-1)",
    async () => {
      const t0 = performance.now();
      const { task } = readTask('read-plan');
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Read ${task}`,
        body: 'Only plan.',
        permissionMode: 'plan',
      });
      const reply = await mailTurnReply(sent);
      expect(reply.body).toContain(`REFUSED ${task}: ${REJECTED_WITH_FEEDBACK}`);
      expect(reply.body).toMatch(textPattern('permission.plan.denied'));
      expect(reply.body).toContain(formatText('permission.plan.denied', { tool: 'read' }, 'en'));
      expect(await requestsOf(stack, sent.session_id)).toEqual([]);
      console.info(`[figures] read ask in plan mode: ${Math.round(performance.now() - t0)} ms`);
    },
    TEST_MS,
  );

  /** A mail turn whose model calls bash once and answers with what it saw. */
  function bashTask(label: string) {
    const task = marker(label);
    const file = join(stack.workdir, `bash-${task}.txt`);
    stack.model.addScenarios([
      {
        name: `${task}:bash`,
        match: turnStart(task),
        reply: bash(`echo RAN-${task} >> ${file} && cat ${file}`),
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `RAN-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    return { task, file };
  }

  it(
    'bash approved by mail: opencode asks itself too, the bridge answers it with that approval — one permission mail, one run',
    async () => {
      const t0 = performance.now();
      const { task, file } = bashTask('bash-once');
      const mark = events.mark();
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Run ${task}`,
        body: 'Run it.',
        permissionMode: 'workspace',
      });
      const request = await stack.awaitPermission({
        where: (p) => p.session_id === sent.session_id,
        timeoutMs: STEP_MS,
      });
      expect(existsSync(file)).toBe(false);
      await stack.decide(request.id, 'approve');
      const reply = await mailTurnReply(sent);
      expect(reply.body).toContain(`DONE ${task}`);
      expect(readFileSync(file, 'utf8')).toBe(`RAN-${task}\n`);
      expect(await requestsOf(stack, sent.session_id), 'no second permission mail').toHaveLength(1);
      const asked = events.events.slice(mark).filter((e) => e.type === 'permission.asked');
      expect(asked, 'opencode asked itself (its config says ask)').toHaveLength(1);
      const replied = events.events.slice(mark).filter((e) => e.type === 'permission.replied');
      expect(replied.map((e) => e.properties.reply)).toEqual(['once']);
      console.info(
        `[figures] bash approved by mail + opencode ask: ${Math.round(performance.now() - t0)} ms`,
      );
    },
    TEST_MS,
  );

  it(
    '"always" is per (session, tool) (P-4): the next bash in the thread runs unasked; plain approve asks again; a person\'s session still gets its prompt',
    async () => {
      const t0 = performance.now();
      // approve_always, then a second mail in the same session.
      const first = bashTask('always-1');
      const mark = events.mark();
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Run ${first.task}`,
        body: 'Run it.',
        permissionMode: 'workspace',
      });
      const request = await stack.awaitPermission({
        where: (p) => p.session_id === sent.session_id,
        timeoutMs: STEP_MS,
      });
      await stack.decide(request.id, 'always');
      const reply = await mailTurnReply(sent);
      expect(reply.body).toContain(`DONE ${first.task}`);
      const second = bashTask('always-2');
      const again = await stack.sendAs(undefined, reply.reply_address, {
        subject: `Again ${second.task}`,
        body: 'Run it again.',
        replyTo: reply.id,
      });
      expect(again.session_id).toBe(sent.session_id);
      const reply2 = await stack.awaitReply({
        inReplyTo: again.mail_id,
        from: stack.agent.name,
        timeoutMs: STEP_MS,
      });
      expect(reply2.body).toContain(`DONE ${second.task}`);
      expect(readFileSync(second.file, 'utf8')).toBe(`RAN-${second.task}\n`);
      expect(await requestsOf(stack, sent.session_id), 'no new permission mail after "always"').toHaveLength(
        1,
      );
      // A person's session in the same project still gets opencode's prompt for the same command
      // shape: the mail's "always" did not become opencode's project-wide "always".
      const person = marker('person-after-always');
      const personFile = join(stack.workdir, `person-${person}.txt`);
      stack.model.addScenarios([
        {
          name: `${person}:bash`,
          match: turnStart(person),
          reply: bash(`echo RAN-${person} > ${personFile}`),
        },
      ]);
      const personAsk = await personSessionAsks(person, personFile);
      const personSession = personAsk.session.id;
      await replyPermission(oc, {
        requestId: String(personAsk.asked.properties.id),
        reply: 'reject',
        directory: stack.workdir,
      });
      await events.waitFor(
        (e) => e.type === 'session.idle' && e.properties.sessionID === personSession,
        STEP_MS,
        personAsk.mark,
      );
      expect(existsSync(personFile)).toBe(false);

      // opencode asked both times; the bridge answered "once" each time (its own "always" would
      // approve the pattern for every session of the project, a person's too).
      const replies = events.events
        .slice(mark)
        .filter((e) => e.type === 'permission.replied' && e.properties.sessionID !== personSession)
        .map((e) => e.properties.reply);
      expect(replies).toEqual(['once', 'once']);

      // Plain approve: one call only — the next bash in that session asks again.
      const third = bashTask('once-1');
      const sent3 = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Run ${third.task}`,
        body: 'Run it.',
        permissionMode: 'workspace',
      });
      const r3 = await stack.awaitPermission({
        where: (p) => p.session_id === sent3.session_id,
        timeoutMs: STEP_MS,
      });
      await stack.decide(r3.id, 'approve');
      const reply3 = await mailTurnReply(sent3);
      const fourth = bashTask('once-2');
      const sent4 = await stack.sendAs(undefined, reply3.reply_address, {
        subject: `Again ${fourth.task}`,
        body: 'Run it again.',
        replyTo: reply3.id,
      });
      const r4 = await stack.awaitPermission({
        where: (p) => p.session_id === sent3.session_id,
        timeoutMs: STEP_MS,
      });
      expect(r4.id).not.toBe(r3.id);
      expect(existsSync(fourth.file), 'waits for the second approval').toBe(false);
      await stack.decide(r4.id, 'approve');
      const reply4 = await stack.awaitReply({
        inReplyTo: sent4.mail_id,
        from: stack.agent.name,
        timeoutMs: STEP_MS,
      });
      expect(reply4.body).toContain(`DONE ${fourth.task}`);
      expect(await requestsOf(stack, sent3.session_id)).toHaveLength(2);
      console.info(`[figures] always / once sequence: ${Math.round(performance.now() - t0)} ms`);
    },
    TEST_MS * 2,
  );
});

describe('shutdown with a pending question (B-15, P-7)', () => {
  it(
    'SIGTERM to opencode while a bash approval is pending: exits within the stop grace, the tool never ran',
    async ({ signal }) => {
      const stack = await startConformanceStack(opencodeAdapter, { signal });
      onTestFinished(() => stack.close());
      const task = marker('shutdown');
      const file = join(stack.workdir, `shutdown-${task}.txt`);
      stack.model.addScenarios([
        { name: `${task}:bash`, match: turnStart(task), reply: bash(`echo RAN-${task} > ${file}`) },
        unexpectedResult(task),
      ]);
      const bridge = await stack.startBridge(opencodeAdapter);
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Run ${task}`,
        body: 'Run it.',
        permissionMode: 'workspace',
      });
      await stack.awaitPermission({ where: (p) => p.session_id === sent.session_id, timeoutMs: STEP_MS });
      const graceMs = opencodeAdapter.stopGraceMs ?? 10_000;
      const t0 = performance.now();
      const exit = await stack.stopBridge();
      const stopMs = performance.now() - t0;
      console.info(
        `[figures] SIGTERM → opencode exit with a pending question: ${Math.round(stopMs)} ms (${JSON.stringify(exit)})`,
      );
      expect(exit?.signal, 'not killed after the grace time').not.toBe('SIGKILL');
      expect(stopMs).toBeLessThan(graceMs);
      expect(existsSync(file), 'the tool did not run').toBe(false);
      // Denied either while waiting for the person (decided: shutdown) or while the request was
      // still on its way (the turn's stop cut it short): a denial with the shutdown text either way.
      const ended = [
        ...bridge.bridgeEvents('permission_decided').map((e) => [e.decision, e.source]),
        ...bridge
          .bridgeEvents('permission_failed')
          .map((e) => [e.outcome, String(e.reason).includes('shutting down') ? 'shutdown' : e.reason]),
      ];
      expect(ended, `the pending question ended as a denial; output:\n${bridge.tail()}`).toEqual([
        ['deny', 'shutdown'],
      ]);
    },
    TEST_MS,
  );
});
