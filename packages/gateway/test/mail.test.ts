import { relaySubject } from '@agentmail/bridge-kit';
import {
  InboxResponse,
  MailResponse,
  NewMailEvent,
  ParticipantsResponse,
  SendMailResponse,
  ThreadResponse,
} from '@agentmail/protocol';
import { DERIVED_SUBJECT_MAX_CHARS } from '@agentmail/shared-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addAgent,
  addUser,
  api,
  dataOf,
  openSse,
  type SseStream,
  startGateway,
  type TestGateway,
} from './helpers.js';

let gw: TestGateway;
let piKey: string;
let ocKey: string;
let alice: string;
let bob: string;
let piEvents: SseStream;
beforeAll(async () => {
  gw = await startGateway();
  piKey = await addAgent(gw, 'pi');
  ocKey = await addAgent(gw, 'oc', 'opencode');
  alice = await addUser(gw, 'alice');
  bob = await addUser(gw, 'bob');
  piEvents = openSse(gw, '/events', piKey);
  await piEvents.ready;
});
afterAll(async () => {
  piEvents.close();
  await gw.close();
});

async function personSend(token: string, body: Record<string, unknown>) {
  const r = await api(gw, 'POST', '/me/mail/send', token, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return SendMailResponse.parse(r.body);
}

describe('sessions: default, new, alias (G-2, G-5)', () => {
  it('.new creates a session with an alias from agent name and subject; collisions get -2', async () => {
    const a = await personSend(alice, {
      to: 'pi@/srv/app.new',
      subject: 'Fix import paths!',
      body: 'please',
    });
    const b = await personSend(alice, { to: 'pi@/srv/app.new', subject: 'Fix import paths!', body: 'again' });
    expect(a.status === 'sent' && a.session_alias).toBe('pi-fix-import-paths');
    expect(b.status === 'sent' && b.session_alias).toBe('pi-fix-import-paths-2');
    expect(a.status === 'sent' && a.address).toBe('pi@/srv/app.pi-fix-import-paths');
    if (a.status === 'sent' && b.status === 'sent') expect(a.session_id).not.toBe(b.session_id);
  });

  it('empty session part reaches the default session of (name, path), the same every time', async () => {
    const a = await personSend(alice, { to: 'pi@/srv/app.', subject: 'one', body: 'x' });
    const b = await personSend(bob, { to: 'pi@/srv/app', subject: 'two', body: 'x' });
    const c = await personSend(alice, { to: 'pi@/other.', subject: 'three', body: 'x' });
    if (a.status !== 'sent' || b.status !== 'sent' || c.status !== 'sent') throw new Error('not sent');
    expect(a.session_id).toBe(b.session_id);
    expect(c.session_id).not.toBe(a.session_id);
    expect(a.address).toBe('pi@/srv/app.');
  });

  it('an alias reaches its session; an unknown alias is a 404 naming it, never a new session', async () => {
    const a = await personSend(alice, { to: 'pi@/srv/app.new', subject: 'alias target', body: 'x' });
    if (a.status !== 'sent') throw new Error('not sent');
    const b = await personSend(bob, { to: `pi@/srv/app.${a.session_alias}`, subject: 'more', body: 'x' });
    expect(b.status === 'sent' && b.session_id).toBe(a.session_id);
    const before = await gw.app.gateway.db.selectFrom('sessions').select('id').execute();
    const r = await api(gw, 'POST', '/me/mail/send', alice, {
      to: 'pi@/srv/app.no-such-alias',
      subject: 's',
      body: 'b',
    });
    expect(r.status).toBe(404);
    expect(r.body.alias).toBe('no-such-alias');
    expect(String(r.body.detail)).toContain('"no-such-alias"');
    const after = await gw.app.gateway.db.selectFrom('sessions').select('id').execute();
    expect(after.length).toBe(before.length);
  });

  it('an explicit session_alias is used for a .new session (suffixed on collision)', async () => {
    const r = await api(gw, 'POST', '/mail/send', ocKey, {
      to: 'pi@/srv/x.new',
      subject: 's',
      body: 'b',
      session_alias: 'review',
    });
    expect(r.body.session_alias).toBe('review');
    const r2 = await api(gw, 'POST', '/mail/send', ocKey, {
      to: 'pi@/srv/x.new',
      subject: 's',
      body: 'b',
      session_alias: 'review',
    });
    expect(r2.body.session_alias).toBe('review-2');
  });

  it('unknown recipient and relative path are clear 4xx naming the field', async () => {
    const r = await api(gw, 'POST', '/me/mail/send', alice, { to: 'nobody', subject: 's', body: 'b' });
    expect(r.status).toBe(404);
    expect(r.body.field).toBe('to');
    const rel = await api(gw, 'POST', '/me/mail/send', alice, {
      to: 'pi',
      cc: ['pi@srv/app.'],
      subject: 's',
      body: 'b',
    });
    expect(rel.status).toBe(400);
    expect(String(rel.body.detail)).toContain('cc[0]');
  });
});

describe('permission mode of an existing session (P-1)', () => {
  it('regression: --mode on an existing session is applied for its owner, refused for anyone else, never ignored', async () => {
    const start = await personSend(alice, { to: 'pi@/srv/mode.new', subject: 'Mode', body: 'a' });
    if (start.status !== 'sent') throw new Error('not sent');
    expect(start.permission_mode).toBe('workspace');
    const address = `pi@/srv/mode.${start.session_alias}`;
    const changed = await personSend(alice, {
      to: address,
      subject: 'go full',
      body: 'b',
      permission_mode: 'full',
    });
    expect(changed.status === 'sent' && changed.permission_mode).toBe('full');
    const event = await piEvents.next(
      (e) => e.event === 'new_mail' && dataOf<NewMailEvent>(e).subject === 'go full',
    );
    expect(dataOf<NewMailEvent>(event).permission_mode).toBe('full');
    const refused = await api(gw, 'POST', '/me/mail/send', bob, {
      to: address,
      subject: 'plan please',
      body: 'c',
      permission_mode: 'plan',
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ field: 'permission_mode', owner: 'alice', permission_mode: 'full' });
    expect(String(refused.body.detail)).toContain('alice');
    // The same mode, or none, is no change: it passes for anyone.
    const same = await api(gw, 'POST', '/me/mail/send', bob, {
      to: address,
      subject: 'ok',
      body: 'd',
      permission_mode: 'full',
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
  });
});

describe('new_mail payload (G-6, G-20, G-30)', () => {
  it('carries session_alias, reply_address, self_address, from_human and never .new', async () => {
    const sent = await personSend(alice, { to: 'pi@/srv/app.new', subject: 'Payload check', body: 'hello' });
    if (sent.status !== 'sent') throw new Error('not sent');
    const e = await piEvents.next((x) => x.event === 'new_mail' && dataOf(x).mail_id === sent.mail_id);
    const ev = NewMailEvent.parse(dataOf(e));
    expect(ev.session_alias).toBe('pi-payload-check');
    expect(ev.self_address).toBe('pi@/srv/app.pi-payload-check');
    expect(ev.reply_address).toBe('alice@.pi-payload-check');
    expect(ev.from_human).toBe(true);
    expect(ev.to_workspace).toBe('/srv/app');
    expect(ev.permission_mode).toBe('workspace');
    expect(ev.in_reply_to).toBe('');
    expect(JSON.stringify(ev)).not.toMatch(/\.new\b/);
  });

  it('an agent sender is from_human false; a reply carries in_reply_to and parent_from', async () => {
    const sent = await personSend(alice, { to: 'pi@/srv/app.new', subject: 'Ask oc', body: 'x' });
    if (sent.status !== 'sent') throw new Error('not sent');
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox?status=all&limit=50', piKey)).body);
    const m = inbox.mails.find((x) => x.id === sent.mail_id);
    expect(m?.from_human).toBe(true);
    expect(m?.to_human).toBe(false);
    // pi answers alice: reply_to keeps the session; to_human is true on the reply
    const reply = await api(gw, 'POST', '/mail/send', piKey, {
      to: m?.reply_address,
      subject: 'Re: Ask oc',
      body: 'done',
      reply_to: sent.mail_id,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const r = SendMailResponse.parse(reply.body);
    if (r.status !== 'sent') throw new Error('not sent');
    expect(r.session_id).toBe(sent.session_id);
    const mail = MailResponse.parse((await api(gw, 'GET', `/me/mail/${r.mail_id}`, alice)).body).mail;
    expect(mail.from_human).toBe(false);
    expect(mail.to_human).toBe(true);
    expect(mail.in_reply_to).toBe(sent.mail_id);
    expect(mail.parent_from).toBe('alice');
    expect(mail.self_address).toBe(`alice@.${sent.session_alias}`);
    expect(mail.reply_address).toBe(`pi@/srv/app.${sent.session_alias}`);
  });

  it('agent to agent: the reply lands back in the session the question came from', async () => {
    const task = await personSend(alice, { to: 'oc@/w.new', subject: 'Delegate', body: 'ask pi' });
    if (task.status !== 'sent') throw new Error('not sent');
    // oc asks pi from within its task session (reply_to keeps oc in that session)
    const ask = await api(gw, 'POST', '/mail/send', ocKey, {
      to: 'pi@/srv/app.new',
      subject: 'Question',
      body: '?',
      cc: [],
      reply_to: task.mail_id,
    });
    // reply_to of a mail from alice, to pi: oc writes from its task session
    expect(ask.status, JSON.stringify(ask.body)).toBe(200);
    const askId = String(ask.body.mail_id);
    const ev = NewMailEvent.parse(dataOf(await piEvents.next((x) => dataOf(x).mail_id === askId)));
    expect(ev.from_human).toBe(false);
    expect(ev.reply_address).toBe(`oc@/w.${task.session_alias}`);
    const answer = await api(gw, 'POST', '/mail/send', piKey, {
      to: ev.reply_address,
      subject: 'Re: Question',
      body: '!',
      reply_to: askId,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.session_id).toBe(task.session_id);
    const ocInbox = InboxResponse.parse(
      (await api(gw, 'GET', `/mail/inbox?session_id=${task.session_id}&limit=50`, ocKey)).body,
    );
    const got = ocInbox.mails.find((x) => x.id === answer.body.mail_id);
    expect(got?.from_human).toBe(false);
    expect(got?.in_reply_to).toBe(askId);
  });
});

describe('inbox, read, thread, participants (G-39)', () => {
  it('offline mail stays unread until marked read; read marks only the listed ids', async () => {
    const key = await addAgent(gw, 'sleeper');
    const a = await personSend(alice, { to: 'sleeper', subject: 'first', body: '1' });
    const b = await personSend(alice, { to: 'sleeper', subject: 'second', body: '2' });
    if (a.status !== 'sent' || b.status !== 'sent') throw new Error('not sent');
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox', key)).body);
    expect(inbox.mails.map((m) => m.subject)).toEqual(['first', 'second']); // oldest first
    expect(inbox.unread_count).toBe(2);
    const read = await api(gw, 'POST', '/mail/read', key, { ids: [a.mail_id] });
    expect(read.body.updated).toBe(1);
    const after = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox', key)).body);
    expect(after.mails.map((m) => m.id)).toEqual([b.mail_id]);
    // limit and has_more
    await personSend(alice, { to: 'sleeper', subject: 'third', body: '3' });
    const page = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox?limit=1', key)).body);
    expect(page.mails.length).toBe(1);
    expect(page.has_more).toBe(true);
  });

  it('order=newest with before pages back through the inbox without gaps or repeats', async () => {
    const key = await addAgent(gw, 'pager');
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      const sent = await personSend(alice, { to: 'pager', subject: `m${n}`, body: 'x' });
      if (sent.status === 'sent') ids.push(sent.mail_id);
    }
    const page = async (query: string) =>
      InboxResponse.parse((await api(gw, 'GET', `/mail/inbox?${query}`, key)).body);
    const first = await page('status=unread&order=newest&limit=2');
    expect(first.mails.map((m) => m.subject)).toEqual(['m5', 'm4']);
    expect(first.has_more).toBe(true);
    const second = await page(`status=unread&order=newest&limit=2&before=${first.mails[1]?.id}`);
    expect(second.mails.map((m) => m.subject)).toEqual(['m3', 'm2']);
    const last = await page(`status=unread&order=newest&limit=2&before=${second.mails[1]?.id}`);
    expect(last.mails.map((m) => m.subject)).toEqual(['m1']);
    expect(last.has_more).toBe(false);
    // The defaults stay: unread oldest first (catch-up, B-20), all newest first.
    expect((await page('limit=1')).mails[0]?.subject).toBe('m1');
    expect((await page('status=all&limit=1')).mails[0]?.subject).toBe('m5');
  });

  it('thread ?around= gives the page holding that mail (in its middle where it can); a mail of another thread is refused by field', async () => {
    const start = await personSend(alice, { to: 'pi@/srv/around.new', subject: 'Around', body: 'm0' });
    if (start.status !== 'sent') throw new Error('not sent');
    const ids = [start.mail_id];
    for (let i = 1; i < 10; i++) {
      const r = await api(gw, 'POST', '/mail/send', piKey, {
        to: `alice@.${start.session_alias}`,
        subject: 'Re',
        body: `m${i}`,
        relay: 'summary',
        relay_key: `around:${i}`,
      });
      ids.push((r.body as { mail_id: string }).mail_id);
    }
    const page = async (id: string, query: string) =>
      ThreadResponse.parse((await api(gw, 'GET', `/me/mail/${id}/thread?${query}`, alice)).body);
    const middle = await page(ids[6] as string, `limit=4&around=${ids[6]}`);
    expect([middle.offset, middle.mails.map((m) => m.body)]).toEqual([4, ['m4', 'm5', 'm6', 'm7']]);
    const end = await page(ids[9] as string, `limit=4&around=${ids[9]}&offset=0`);
    expect([end.offset, end.mails.map((m) => m.body), end.next_offset]).toEqual([
      6,
      ['m6', 'm7', 'm8', 'm9'],
      null,
    ]);
    const first = await page(ids[0] as string, `limit=4&around=${ids[0]}`);
    expect(first.offset).toBe(0);
    const other = await personSend(alice, { to: 'pi@/srv/other.new', subject: 'Other', body: 'x' });
    const refused = await api(gw, 'GET', `/me/mail/${ids[0]}/thread?around=${other.mail_id}`, alice);
    expect([refused.status, (refused.body as { field?: string }).field]).toEqual([400, 'around']);
  });

  it('a failure mail (relay key model-failure:…, B-9) says so in its summary; a reply relay does not', async () => {
    const task = await personSend(alice, { to: 'pi@/srv/fail.new', subject: 'Fail', body: 'x' });
    if (task.status !== 'sent') throw new Error('not sent');
    const send = async (key: string) =>
      (
        (await api(gw, 'POST', '/mail/send', piKey, {
          to: 'alice',
          subject: 'Could not process: Fail',
          body: 'cause',
          reply_to: task.mail_id,
          relay: 'summary',
          relay_key: key,
        })) as { body: { mail_id: string } }
      ).body.mail_id;
    const failure = await send(`model-failure:${task.mail_id}`);
    const reply = await send(`auto-relay:${task.mail_id}:s:1`);
    const read = async (id: string) =>
      MailResponse.parse((await api(gw, 'GET', `/me/mail/${id}`, alice)).body).mail;
    expect((await read(failure)).failure).toBe(true);
    expect((await read(reply)).failure).toBe(false);
    expect((await read(task.mail_id)).request).toBeNull();
  });

  it('thread pages the session oldest first; participants name who has not spoken', async () => {
    const start = await personSend(alice, { to: 'pi@/srv/t.new', subject: 'Thread', body: 'a', cc: ['bob'] });
    if (start.status !== 'sent') throw new Error('not sent');
    await api(gw, 'POST', '/mail/send', piKey, {
      to: `alice@.${start.session_alias}`,
      subject: 'Re',
      body: 'b',
      reply_to: start.mail_id,
    });
    await api(gw, 'POST', '/mail/send', piKey, {
      to: `alice@.${start.session_alias}`,
      subject: 'Re2',
      body: 'c',
    });
    const page1 = ThreadResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${start.mail_id}/thread?limit=2`, piKey)).body,
    );
    expect(page1.total).toBe(3);
    expect(page1.mails.map((m) => m.body)).toEqual(['a', 'b']);
    expect(page1.next_offset).toBe(2);
    const page2 = ThreadResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${start.mail_id}/thread?offset=2`, piKey)).body,
    );
    expect(page2.mails.map((m) => m.body)).toEqual(['c']);
    expect(page2.next_offset).toBeNull();
    const p = ParticipantsResponse.parse(
      (await api(gw, 'GET', `/agent/sessions/${start.session_id}/participants`, piKey)).body,
    );
    expect(p.participants.map((x) => [x.name, x.human, x.has_spoken]).sort()).toEqual([
      ['alice', true, true],
      ['bob', true, false],
      ['pi', false, true],
    ]);
    expect(p.silent).toEqual(['bob']);
    expect(p.participants.find((x) => x.name === 'pi')?.address).toBe(`pi@/srv/t.${start.session_alias}`);
    // bob (cc) sees the mail, with cc listed
    const bobMail = MailResponse.parse((await api(gw, 'GET', `/me/mail/${start.mail_id}`, bob)).body).mail;
    expect(bobMail.cc.map((c) => c.name)).toEqual(['bob']);
    expect(bobMail.cc[0]?.human).toBe(true);
  });

  it('a mail is visible only to its sender and recipients', async () => {
    const s = await personSend(alice, { to: 'pi', subject: 'private', body: 'x' });
    if (s.status !== 'sent') throw new Error('not sent');
    expect((await api(gw, 'GET', `/agent/mail/${s.mail_id}`, ocKey)).status).toBe(404);
    expect((await api(gw, 'GET', `/me/mail/${s.mail_id}`, bob)).status).toBe(404);
    expect((await api(gw, 'GET', `/agent/mail/${s.mail_id}`, piKey)).status).toBe(200);
  });

  it('forward quotes the original', async () => {
    const s = await personSend(alice, { to: 'pi', subject: 'fwd me', body: 'line1\nline2' });
    if (s.status !== 'sent') throw new Error('not sent');
    const f = await api(gw, 'POST', `/mail/${s.mail_id}/forward`, piKey, { to: 'oc', comment: 'FYI' });
    expect(f.status, JSON.stringify(f.body)).toBe(200);
    const m = MailResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${String(f.body.mail_id)}`, ocKey)).body,
    ).mail;
    expect(m.subject).toBe('Fwd: fwd me');
    expect(m.body).toContain('FYI');
    expect(m.body).toContain('> line1\n> line2');
  });
});

describe('subjects hold no control characters (issue 18)', () => {
  const raw = 'Deploy \u001b[31mnow\u0007\r\nplease\b\u007f\tok';
  const clean = 'Deploy [31mnow please ok';
  const subjectOf = async (path: string, token: string) =>
    MailResponse.parse((await api(gw, 'GET', path, token)).body).mail.subject;

  it('a person send, an agent send, its relay "Re:" and a forward are all stored normalised', async () => {
    const person = await personSend(alice, { to: 'pi@/srv/ctl.new', subject: raw, body: 'x' });
    if (person.status !== 'sent') throw new Error('not sent');
    expect(await subjectOf(`/me/mail/${person.mail_id}`, alice)).toBe(clean);
    expect(await subjectOf(`/agent/mail/${person.mail_id}`, piKey)).toBe(clean);
    // The session alias (G-5) is made from the normalised subject too.
    expect(person.session_alias).toBe('pi-deploy-31mnow-please-ok');

    // A bridge's relay of the turn's answer, its "Re:" built from a subject it held raw.
    const relay = await api(gw, 'POST', '/mail/send', piKey, {
      to: 'alice',
      subject: `Re: ${raw}`,
      body: 'done',
      reply_to: person.mail_id,
      relay: 'summary',
      relay_key: `subject-test-${person.mail_id}`,
    });
    expect(relay.status, JSON.stringify(relay.body)).toBe(200);
    expect(await subjectOf(`/me/mail/${String(relay.body.mail_id)}`, alice)).toBe(`Re: ${clean}`);

    const agent = await api(gw, 'POST', '/mail/send', piKey, {
      to: 'oc',
      subject: `\u001b]0;title\u0007${raw}`,
      body: 'x',
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    expect(await subjectOf(`/agent/mail/${String(agent.body.mail_id)}`, ocKey)).toBe(`]0;title${clean}`);

    const forward = await api(gw, 'POST', `/mail/${person.mail_id}/forward`, piKey, { to: 'oc' });
    expect(forward.status, JSON.stringify(forward.body)).toBe(200);
    expect(await subjectOf(`/agent/mail/${String(forward.body.mail_id)}`, ocKey)).toBe(`Fwd: ${clean}`);
  });
});

describe("a send without a subject gets the one rule's subject (issue 20)", () => {
  const subjectOf = async (path: string, token: string) =>
    MailResponse.parse((await api(gw, 'GET', path, token)).body).mail.subject;

  it("a person send with an empty subject is stored, listed and answered with the body's first line", async () => {
    const sent = await personSend(alice, {
      to: 'pi@/srv/subj.new',
      subject: '  ',
      body: '\n   \nDeploy the fix to staging\nthen tell me',
    });
    if (sent.status !== 'sent') throw new Error('not sent');
    expect(await subjectOf(`/me/mail/${sent.mail_id}`, alice)).toBe('Deploy the fix to staging');
    expect(await subjectOf(`/agent/mail/${sent.mail_id}`, piKey)).toBe('Deploy the fix to staging');
    // The ".new" alias (G-5) is made from the same subject.
    expect(sent.session_alias).toBe('pi-deploy-the-fix-to-staging');
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox?status=all&limit=50', piKey)).body);
    expect(inbox.mails.find((m) => m.id === sent.mail_id)?.subject).toBe('Deploy the fix to staging');

    // The agent's answer as its bridge relays it: "Re: <derived>", not "Re:".
    const mail = MailResponse.parse((await api(gw, 'GET', `/agent/mail/${sent.mail_id}`, piKey)).body).mail;
    const reply = await api(gw, 'POST', '/mail/send', piKey, {
      to: mail.reply_address,
      subject: relaySubject(mail.subject, 'en'),
      body: 'done',
      reply_to: sent.mail_id,
      relay: 'summary',
      relay_key: `derived-subject-${sent.mail_id}`,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(await subjectOf(`/me/mail/${String(reply.body.mail_id)}`, alice)).toBe(
      'Re: Deploy the fix to staging',
    );
  });

  it('an agent send without a subject, and one with neither subject nor body', async () => {
    const long = await api(gw, 'POST', '/mail/send', piKey, {
      to: 'oc',
      subject: '',
      body: `${'a'.repeat(300)}\nmore`,
    });
    expect(long.status, JSON.stringify(long.body)).toBe(200);
    const derived = await subjectOf(`/agent/mail/${String(long.body.mail_id)}`, ocKey);
    expect(derived).toBe(`${'a'.repeat(DERIVED_SUBJECT_MAX_CHARS - 1)}…`);
    const empty = await api(gw, 'POST', '/mail/send', piKey, { to: 'oc', subject: '', body: '' });
    expect(empty.status, JSON.stringify(empty.body)).toBe(200);
    expect(await subjectOf(`/agent/mail/${String(empty.body.mail_id)}`, ocKey)).toBe('(no subject)');
  });
});
