/**
 * Sessions on the real stack (Gateway child process, scripted model, the plugin inside the real
 * `opencode serve`): reuse (B-4), adoption of a person's opencode session (G-37, B-4), model
 * fallback (B-8), naming sync (B-11) and the working-directory fallback (B-3). The person's side
 * in opencode's own UI is played through opencode's HTTP API.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatAddress } from '@agentmail/protocol';
import { aliasBase } from '@agentmail/shared-policy';
import type { RecordedRequest, Stack } from '@agentmail/testkit';
import {
  answerAtOnce,
  CONFORMANCE_MODELS,
  marker,
  startConformanceStack,
  textPattern,
  turnStart,
  turnStarts,
} from '@agentmail/testkit/conformance';
import type { OpencodeClient } from '@opencode-ai/sdk';
import { afterAll, describe, expect, it, type TestContext, vi } from 'vitest';

vi.setConfig({ maxConcurrency: 3 });

import { opencodeAdapter, removePluginBundle } from '../harness/opencode-adapter.js';
import { bridgeDataDir, personOpencode } from '../harness/test-helpers.js';

afterAll(removePluginBundle);

const TEST_TIMEOUT_MS = 300_000;
// One step: a first opencode turn (tool registry set-up), a failed model attempt and a fresh
// session for the next model took over 60 s once on a loaded 2-core CI machine.
const STEP_MS = 120_000;
const agentName = opencodeAdapter.platform;

/** Every message text of a model request, joined (what the model was shown). */
function allText(request: RecordedRequest | undefined): string {
  return (request?.body?.messages ?? [])
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p) => p.text ?? '').join('')
          : '',
    )
    .join('\n');
}

/** The user messages of a model request that contain `mark`. */
function userMessagesWith(request: RecordedRequest | undefined, mark: string): number {
  return (request?.body?.messages ?? []).filter(
    (m) =>
      m.role === 'user' &&
      (typeof m.content === 'string'
        ? m.content
        : (m.content ?? []).map((p) => p.text ?? '').join('')
      ).includes(mark),
  ).length;
}

/** The bridge's binding Gateway session id → opencode session id (the kit's binding files). */
function boundSession(stack: Stack, gatewaySessionId: string): string | undefined {
  const dir = join(bridgeDataDir(stack), 'bindings');
  if (!existsSync(dir)) return undefined;
  for (const name of readdirSync(dir)) {
    const b = JSON.parse(readFileSync(join(dir, name), 'utf8')) as {
      sessionId?: string;
      platformSessionId?: string;
    };
    if (b.sessionId === gatewaySessionId) return b.platformSessionId || undefined;
  }
  return undefined;
}

async function sessionIds(client: OpencodeClient, directory?: string): Promise<string[]> {
  const res = await client.session.list(directory === undefined ? {} : { query: { directory } });
  if (res.data === undefined) throw new Error(`session.list failed: ${JSON.stringify(res.error)}`);
  return res.data.map((s) => s.id).sort();
}

async function messageTexts(client: OpencodeClient, id: string): Promise<string[]> {
  const res = await client.session.messages({ path: { id } });
  if (res.data === undefined) throw new Error(`session.messages failed: ${JSON.stringify(res.error)}`);
  return res.data.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''));
}

/** The hooks of the running test (its own context: the tests of this file run concurrently). */
type TestHooks = Pick<TestContext, 'signal' | 'onTestFailed' | 'onTestFinished'>;

async function startStack({ signal, onTestFailed, onTestFinished }: TestHooks): Promise<Stack> {
  const stack = await startConformanceStack(opencodeAdapter, { signal });
  // An assertion that fails carries no process output: print it (the bridge's events show why).
  onTestFailed(() => {
    process.stderr.write(`${stack.logs(200)}\n`);
  });
  onTestFinished(() => stack.close());
  return stack;
}

/** Resolves once `check` returns a value (polled every 250 ms), or throws naming `what`. */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = STEP_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen within ${timeoutMs} ms (${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

// Each test has a Gateway and an opencode of its own and mostly waits on them: three at a time
// (one after another, the file took 148–189 s, the longest of the suite beside the conformance).
describe.concurrent('bridge-opencode sessions (real opencode)', () => {
  it(
    'B-4: a reply in the thread and a mail after a bridge restart continue the same opencode session',
    async (ctx) => {
      const stack = await startStack(ctx);
      const [t1, t2, t3] = [marker('reuse1'), marker('reuse2'), marker('reuse3')];
      stack.model.addScenarios([
        answerAtOnce(t1, `ANSWER ${t1}`),
        answerAtOnce(t2, `ANSWER ${t2}`),
        answerAtOnce(t3, `ANSWER ${t3}`),
      ]);
      await stack.startBridge(opencodeAdapter);

      const first = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Start ${t1}`,
        body: 'Go.',
      });
      const reply1 = await stack.awaitReply({
        inReplyTo: first.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      const ocId = boundSession(stack, first.session_id);
      expect(ocId, 'the mail session is bound to an opencode session').toMatch(/^ses_/);
      const oc = personOpencode(stack);
      expect(await sessionIds(oc)).toEqual([ocId]);

      // A reply in the thread: same Gateway session, same opencode session, first turn in context.
      const second = await stack.sendAs(undefined, first.address, {
        subject: `Re: ${t2}`,
        body: 'And more.',
        replyTo: reply1.id,
      });
      expect(second.session_id).toBe(first.session_id);
      await stack.awaitReply({ inReplyTo: second.mail_id, from: agentName, timeoutMs: STEP_MS });
      const req2 = turnStarts(stack.model, t2)[0];
      expect(allText(req2), 'the model sees the first turn').toContain(t1);
      expect(allText(req2)).toContain(`ANSWER ${t1}`);
      expect(boundSession(stack, first.session_id)).toBe(ocId);
      expect(await sessionIds(oc), 'no second opencode session').toEqual([ocId]);

      // Restart opencode (and the plugin): the binding survives in the bridge's data directory.
      const stopped = await stack.stopBridge();
      expect(stopped?.signal).not.toBe('SIGKILL');
      await stack.startBridge(opencodeAdapter);
      const third = await stack.sendAs(undefined, first.address, {
        subject: `Again ${t3}`,
        body: 'Once more.',
      });
      await stack.awaitReply({ inReplyTo: third.mail_id, from: agentName, timeoutMs: STEP_MS });
      const req3 = turnStarts(stack.model, t3)[0];
      expect(allText(req3), 'after the restart the model sees both earlier turns').toContain(t1);
      expect(allText(req3)).toContain(`ANSWER ${t2}`);
      const texts = await messageTexts(personOpencode(stack), ocId ?? '');
      expect(texts.filter((t) => t.includes(`ANSWER ${t3}`))).toHaveLength(1);
      expect(await sessionIds(personOpencode(stack))).toEqual([ocId]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "G-37, B-4, B-11: a person's opencode session is adopted by its slug, never renamed from opencode, and a deleted one fails with session_missing",
    async (ctx) => {
      const stack = await startStack(ctx);
      const [t1, t2, t3] = [marker('adopt1'), marker('adopt2'), marker('adopt3')];
      stack.model.addScenarios([
        answerAtOnce(t1, `ANSWER ${t1}`),
        answerAtOnce(t2, `ANSWER ${t2}`),
        answerAtOnce(t3, `ANSWER ${t3}`),
      ]);
      await stack.startBridge(opencodeAdapter, { AGENTMAIL_HEARTBEAT_MS: '1000' });
      const proc = stack.bridge;
      if (proc === undefined) throw new Error('no bridge');
      const oc = personOpencode(stack);

      // The person opens a session in opencode's UI and works in it.
      const created = await oc.session.create({ body: { title: 'Person refactoring work' } });
      const personSession = created.data as { id: string; slug?: string; title: string } | undefined;
      if (personSession === undefined) throw new Error(`session.create: ${JSON.stringify(created.error)}`);
      const slug = personSession.slug ?? '';
      expect(slug, 'opencode 1.18 gives every session a slug').toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);

      // Once a heartbeat carried it (G-25), the slug addresses it (G-37).
      const address = stack.taskAddress(slug);
      const first = await eventually('the adopted session accepts mail', () =>
        stack.sendAs(undefined, address, { subject: `Adopted ${t1}`, body: 'Go.' }),
      );
      expect(first.session_alias, 'the platform slug is the alias').toBe(slug);
      await stack.awaitReply({ inReplyTo: first.mail_id, from: agentName, timeoutMs: STEP_MS });
      let texts = await messageTexts(oc, personSession.id);
      expect(
        texts.some((t) => t.includes(t1)),
        'the prompt reached the person session',
      ).toBe(true);
      expect(texts.some((t) => t.includes(`ANSWER ${t1}`))).toBe(true);
      expect(await sessionIds(oc), 'no opencode session of our own').toEqual([personSession.id]);

      // The person renames it in opencode: adopted sessions are never synced (B-11).
      const renamed = await oc.session.update({
        path: { id: personSession.id },
        body: { title: 'Renamed by person' },
      });
      expect(renamed.data?.title).toBe('Renamed by person');
      const second = await stack.sendAs(undefined, address, { subject: `More ${t2}`, body: 'Go on.' });
      expect(second.session_id).toBe(first.session_id);
      const reply2 = await stack.awaitReply({
        inReplyTo: second.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      expect(reply2.session_alias).toBe(slug);
      texts = await messageTexts(oc, personSession.id);
      expect(
        texts.some((t) => t.includes(`ANSWER ${t2}`)),
        'the second turn ran there too',
      ).toBe(true);
      expect(proc.bridgeEvents('naming_synced'), 'an adopted session is not synced').toEqual([]);

      // The person deletes it: the next mail fails with session_missing, no fresh session.
      const deleted = await oc.session.delete({ path: { id: personSession.id } });
      expect(deleted.data).toBe(true);
      const third = await stack.sendAs(undefined, address, { subject: `Gone ${t3}`, body: 'Still there?' });
      expect(third.session_id).toBe(first.session_id);
      const failure = await stack.awaitReply({
        inReplyTo: third.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      expect(failure).toMatchObject({ in_reply_to: third.mail_id, relay: true });
      expect(failure.body).toMatch(textPattern('failure.session_missing'));
      expect(failure.body).toContain(personSession.id);
      expect(stack.model.requests({ match: turnStart(t3) }), 'no model turn ran').toEqual([]);
      expect(await sessionIds(oc), 'no new opencode session').toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'G-37, B-7: a mail into an adopted session the person is busy in gets the answer to the mail, not to the person',
    async (ctx) => {
      const stack = await startStack(ctx);
      const [p1, t1] = [marker('personturn'), marker('busymail')];
      stack.model.addScenarios([
        {
          name: `${p1}:sleep`,
          match: { lastUserMessage: p1, hasToolResult: false, hasTools: true },
          reply: {
            type: 'tool_calls',
            calls: [{ name: 'bash', arguments: { command: 'sleep 4', description: 'wait' } }],
          },
        },
        {
          name: `${p1}:done`,
          match: { lastUserMessage: p1, hasToolResult: true },
          reply: { type: 'text', text: `PERSON DONE ${p1}` },
        },
        answerAtOnce(t1, `ANSWER ${t1}`),
        // opencode folds a prompt into the session's running loop: the model may answer the
        // person's tool result with the mail as the last user message.
        {
          name: `${t1}:folded`,
          match: { lastUserMessage: t1, hasToolResult: true },
          reply: { type: 'text', text: `ANSWER ${t1}` },
        },
      ]);
      await stack.startBridge(opencodeAdapter, { AGENTMAIL_HEARTBEAT_MS: '1000' });
      const oc = personOpencode(stack);
      const created = await oc.session.create({ body: { title: 'Busy person' } });
      const personSession = created.data as { id: string; slug: string } | undefined;
      if (personSession === undefined) throw new Error(`session.create: ${JSON.stringify(created.error)}`);
      const address = stack.taskAddress(personSession.slug);
      // Adopt it first (a turn while idle), then the person starts a slow turn of their own.
      const warm = marker('warm');
      stack.model.addScenarios([answerAtOnce(warm, `ANSWER ${warm}`)]);
      const first = await eventually('the adopted session accepts mail', () =>
        stack.sendAs(undefined, address, { subject: `Warm ${warm}`, body: 'Go.' }),
      );
      await stack.awaitReply({ inReplyTo: first.mail_id, from: agentName, timeoutMs: STEP_MS });

      await oc.session.promptAsync({
        path: { id: personSession.id },
        body: { parts: [{ type: 'text', text: `Person asks ${p1}` }] },
      });
      await stack.awaitModelRequest({ lastUserMessage: p1, hasTools: true }, STEP_MS);
      const sent = await stack.sendAs(undefined, address, { subject: `Busy ${t1}`, body: 'Go.' });
      const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: agentName, timeoutMs: STEP_MS });
      expect(reply.body, 'the reply answers the mail').toContain(`ANSWER ${t1}`);
      expect(reply.body).not.toContain('PERSON DONE');
      // Record how opencode ran it (folded into the person's loop, or a turn of its own).
      const how = stack.model.requests({ match: { lastUserMessage: t1 } }).map((r) => r.scenario);
      expect(how.length).toBeGreaterThan(0);
      expect(how.every((name) => name?.startsWith(`${t1}:`))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'B-8: the failing model is tried first in its own session, the working one answers, and the thread keeps it',
    async (ctx) => {
      const stack = await startStack(ctx);
      const { failingA, working } = CONFORMANCE_MODELS;
      const [t1, t2, t3] = [marker('fallback1'), marker('fallback2'), marker('fallback3')];
      stack.model.addScenarios([
        {
          name: `${failingA}:outage`,
          match: { model: failingA, hasTools: true },
          reply: { type: 'error', status: 400, message: `scripted outage ${t1}` },
        },
        answerAtOnce(t1, `ANSWER ${t1}`),
        answerAtOnce(t2, `ANSWER ${t2}`),
        answerAtOnce(t3, `ANSWER ${t3}`),
      ]);
      await stack.setAllowedModels(agentName, [failingA, working]);
      await stack.startBridge(opencodeAdapter, { AGENTMAIL_HEARTBEAT_MS: '1000' });

      const first = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Fallback ${t1}`,
        body: 'Go.',
      });
      const reply1 = await stack.awaitReply({
        inReplyTo: first.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      expect(reply1.body).toContain(`ANSWER ${t1}`);
      const tried = stack.model.requests({ match: turnStart(t1) });
      const triedA = tried.filter((r) => r.model === failingA);
      const triedW = tried.filter((r) => r.model === working);
      expect(triedA.length, `${failingA} was tried`).toBeGreaterThan(0);
      expect(triedW.length, `${working} answered`).toBeGreaterThan(0);
      expect(triedA[0]?.seq ?? 0, 'in the admin order').toBeLessThan(triedW[0]?.seq ?? 0);
      // A fresh session: the working model is not shown the failed attempt's prompt.
      expect(userMessagesWith(triedW[0], t1), 'the prompt once, not the failed attempt too').toBe(1);
      const oc = personOpencode(stack);
      const ids = await sessionIds(oc);
      const bound = boundSession(stack, first.session_id);
      expect(ids, 'one opencode session per model').toHaveLength(2);
      expect(ids).toContain(bound);
      expect((await messageTexts(oc, bound ?? '')).some((t) => t.includes(`ANSWER ${t1}`))).toBe(true);

      // The thread goes on in the working model's session, with the working model (never switched).
      const second = await stack.sendAs(undefined, first.address, {
        subject: `Re: ${t2}`,
        body: 'Next.',
        replyTo: reply1.id,
      });
      const reply2 = await stack.awaitReply({
        inReplyTo: second.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      expect(reply2.body).toContain(`ANSWER ${t2}`);
      const followUp = stack.model.requests({ match: turnStart(t2) });
      expect(
        followUp.map((r) => r.model),
        'a resumed session keeps its model',
      ).toEqual([working]);
      expect(allText(followUp[0])).toContain(`ANSWER ${t1}`);
      expect(boundSession(stack, first.session_id)).toBe(bound);
      expect(await sessionIds(oc)).toHaveLength(2);

      // G-37: only sessions a person opened are offered for adoption; the bridge's own (the mail
      // session and the set-aside attempt) stay out of the snapshot. Synchronise on a person's
      // session becoming addressable (a heartbeat after all three existed).
      const created = await oc.session.create({ body: { title: 'Person session' } });
      const person = created.data as { id: string; slug: string } | undefined;
      if (person === undefined) throw new Error(`session.create: ${JSON.stringify(created.error)}`);
      const probe = await eventually('the person session is adopted', () =>
        stack.sendAs(undefined, stack.taskAddress(person.slug), { subject: `Person ${t3}`, body: 'Hi.' }),
      );
      await stack.awaitReply({ inReplyTo: probe.mail_id, from: agentName, timeoutMs: STEP_MS });
      for (const id of ids) {
        const own = (await oc.session.get({ path: { id } })).data as { slug: string } | undefined;
        await expect(
          stack.sendAs(undefined, stack.taskAddress(own?.slug ?? id), { subject: 'Steal', body: 'x' }),
          `the bridge's own session ${id} is not adoptable`,
        ).rejects.toThrow(/404/);
        await expect(
          stack.sendAs(undefined, stack.taskAddress(id), { subject: 'Steal', body: 'x' }),
        ).rejects.toThrow(/404/);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "B-11: a person's rename of the mail session's opencode session becomes the Gateway title and alias; the bridge's own title is not synced",
    async (ctx) => {
      const stack = await startStack(ctx);
      const [t1, t2, t3] = [marker('name1'), marker('name2'), marker('name3')];
      stack.model.addScenarios([
        answerAtOnce(t1, `ANSWER ${t1}`),
        answerAtOnce(t2, `ANSWER ${t2}`),
        answerAtOnce(t3, `ANSWER ${t3}`),
      ]);
      const proc = await stack.startBridge(opencodeAdapter);

      const first = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Start ${t1}`,
        body: 'Go.',
      });
      const reply1 = await stack.awaitReply({
        inReplyTo: first.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      expect(reply1.session_alias, 'the title the bridge gave is not synced back').toBe(first.session_alias);
      expect(proc.bridgeEvents('naming_synced')).toEqual([]);
      const ocId = boundSession(stack, first.session_id) ?? '';
      const oc = personOpencode(stack);
      expect((await oc.session.get({ path: { id: ocId } })).data?.title).toBe(`Start ${t1}`);

      // The person renames it in opencode.
      const name = `Quarterly report ${t1.split('.')[1]}`;
      await oc.session.update({ path: { id: ocId }, body: { title: name } });
      const second = await stack.sendAs(undefined, first.address, {
        subject: `Re: ${t2}`,
        body: 'More.',
        replyTo: reply1.id,
      });
      const reply2 = await stack.awaitReply({
        inReplyTo: second.mail_id,
        from: agentName,
        timeoutMs: STEP_MS,
      });
      const alias = aliasBase(agentName, name);
      expect(alias).not.toBe(first.session_alias);
      expect(proc.bridgeEvents('naming_synced').map((l) => [l.alias, l.title])).toEqual([[alias, name]]);
      expect(reply2.session_alias, "the relayed reply's session carries the new alias").toBe(alias);

      // Addressed by the new alias: the same session; nothing changed, nothing synced again.
      const third = await stack.sendAs(undefined, stack.taskAddress(alias), {
        subject: `Again ${t3}`,
        body: 'Go.',
      });
      expect(third.session_id).toBe(first.session_id);
      await stack.awaitReply({ inReplyTo: third.mail_id, from: agentName, timeoutMs: STEP_MS });
      expect(proc.bridgeEvents('naming_synced')).toHaveLength(1);
      expect((await oc.session.get({ path: { id: ocId } })).data?.title, 'the title stays the person’s').toBe(
        name,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'B-3: a mail to a missing directory runs in a per-session fallback directory, never creating the address path',
    async (ctx) => {
      const stack = await startStack(ctx);
      const missing = '/does/not/exist';
      const t1 = marker('cwd');
      stack.model.addScenarios([answerAtOnce(t1, `ANSWER ${t1}`)]);
      const proc = await stack.startBridge(opencodeAdapter);

      const sent = await stack.sendAs(
        undefined,
        formatAddress({ name: agentName, path: missing, session: 'new' }),
        {
          subject: `Somewhere ${t1}`,
          body: 'Go.',
        },
      );
      await stack.awaitReply({ inReplyTo: sent.mail_id, from: agentName, timeoutMs: STEP_MS });
      expect(existsSync(missing), 'the missing directory is never created').toBe(false);
      const fallback = proc.bridgeEvents('workspace_fallback');
      expect(fallback).toHaveLength(1);
      const cwd = String(fallback[0]?.cwd);
      expect(cwd.startsWith(join(bridgeDataDir(stack), 'workspaces'))).toBe(true);
      expect(existsSync(cwd)).toBe(true);
      const ocId = boundSession(stack, sent.session_id) ?? '';
      const session = await personOpencode(stack, cwd).session.get({ path: { id: ocId } });
      expect(session.data?.directory, 'the opencode session runs there').toBe(cwd);
    },
    TEST_TIMEOUT_MS,
  );
});
