/**
 * Regression: a person could read other people's mail through a thread. The default session
 * `pi@.` is shared by everyone who writes to it; its thread, participants and attachments must
 * show a reader only the mails it could open one by one (sent by it, or to/cc it).
 */
import {
  InboxResponse,
  MailResponse,
  ParticipantsResponse,
  SendMailResponse,
  ThreadResponse,
  UploadAttachmentResponse,
} from '@agentmail/protocol';
import { FormData, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let pi: string;
let oc: string;
let alice: string;
let bob: string;
let aliceMail: string;
let bobMail: string;
let aliceAttachment: string;

async function send(token: string, path: string, body: Record<string, unknown>) {
  const r = await api(gw, 'POST', path, token, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const s = SendMailResponse.parse(r.body);
  if (s.status !== 'sent') throw new Error('not sent');
  return s;
}

async function thread(token: string, route: string, id: string) {
  const r = await api(gw, 'GET', `${route}/${id}/thread`, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return ThreadResponse.parse(r.body);
}

beforeAll(async () => {
  gw = await startGateway();
  pi = await addAgent(gw, 'pi');
  oc = await addAgent(gw, 'oc');
  alice = await addUser(gw, 'alice');
  bob = await addUser(gw, 'bob');
  const form = new FormData();
  form.append('file', new Blob(['alice secret file']), 'salary.txt');
  const up = await fetch(`${gw.url}/api/v1/me/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}` },
    body: form,
  });
  aliceAttachment = UploadAttachmentResponse.parse(await up.json()).attachment.id;
  aliceMail = (
    await send(alice, '/me/mail/send', {
      to: 'pi@.',
      subject: 'alice private',
      body: 'ALICE-SECRET',
      attachment_ids: [aliceAttachment],
    })
  ).mail_id;
  bobMail = (await send(bob, '/me/mail/send', { to: 'pi@.', subject: 'bob', body: 'bob body' })).mail_id;
});
afterAll(async () => {
  await gw.close();
});

describe('visibility in a shared default session', () => {
  it('both mails are in one session (the setting of the leak)', async () => {
    const rows = await gw.app.gateway.db
      .selectFrom('mails')
      .select('session_id')
      .where('id', 'in', [aliceMail, bobMail])
      .execute();
    expect(new Set(rows.map((r) => r.session_id)).size).toBe(1);
  });

  it("bob's thread shows his mails only: no body, subject or attachment of alice's", async () => {
    const t = await thread(bob, '/me/mail', bobMail);
    expect(t.mails.map((m) => m.id)).toEqual([bobMail]);
    expect(t.total).toBe(1);
    const text = JSON.stringify(t);
    expect(text).not.toContain('ALICE-SECRET');
    expect(text).not.toContain('alice private');
    expect(text).not.toContain(aliceAttachment);
    expect(t.mails[0]?.participants.map((p) => p.name).sort()).toEqual(['bob', 'pi']);
  });

  it("bob can open neither alice's mail, nor her attachment, nor attach it", async () => {
    expect((await api(gw, 'GET', `/me/mail/${aliceMail}`, bob)).status).toBe(404);
    const dl = await fetch(`${gw.url}/api/v1/me/attachments/${aliceAttachment}`, {
      headers: { authorization: `Bearer ${bob}` },
    });
    expect(dl.status).toBe(404);
    const attach = await api(gw, 'POST', '/me/mail/send', bob, {
      to: 'pi@.',
      subject: 's',
      body: 'b',
      attachment_ids: [aliceAttachment],
    });
    expect(attach.status).toBe(404);
    expect(attach.body.code).toBe('AM_GW_UNKNOWN_ATTACHMENT');
  });

  it("one mail's participants list only who the reader could see", async () => {
    const m = MailResponse.parse((await api(gw, 'GET', `/me/mail/${bobMail}`, bob)).body).mail;
    expect(m.participants.map((p) => p.name).sort()).toEqual(['bob', 'pi']);
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/me/inbox?status=all', bob)).body);
    expect(JSON.stringify(inbox)).not.toContain('ALICE-SECRET');
  });

  it('the agent of the session got both and sees both; replies stay with their person', async () => {
    const t = await thread(pi, '/agent/mail', bobMail);
    expect(t.mails.map((m) => m.id)).toEqual([aliceMail, bobMail]);
    const reply = await send(pi, '/mail/send', {
      to: 'alice',
      subject: 'Re',
      body: 'PI-TO-ALICE',
      reply_to: aliceMail,
    });
    const forAlice = await thread(alice, '/me/mail', aliceMail);
    expect(forAlice.mails.map((m) => m.id)).toEqual([aliceMail, reply.mail_id]);
    const forBob = await thread(bob, '/me/mail', bobMail);
    expect(forBob.mails.map((m) => m.id)).toEqual([bobMail]);
    expect(JSON.stringify(forBob)).not.toContain('PI-TO-ALICE');
  });
});

describe('the agent side', () => {
  it('an agent that wrote into a session sees only its own exchange in the participants', async () => {
    const s = await send(oc, '/mail/send', { to: 'pi@.', subject: 'from oc', body: 'x' });
    const r = await api(gw, 'GET', `/agent/sessions/${s.session_id}/participants`, oc);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const p = ParticipantsResponse.parse(r.body);
    expect(p.participants.map((x) => x.name).sort()).toEqual(['oc', 'pi']);
  });

  it("a person's reply to another person in the agent's session stays out of the agent's thread", async () => {
    const task = await send(alice, '/me/mail/send', { to: 'pi@/w.new', subject: 'task', body: 'x' });
    const update = await send(pi, '/mail/send', {
      to: `alice@.${task.session_alias}`,
      cc: ['bob'],
      subject: 'update',
      body: 'y',
      reply_to: task.mail_id,
    });
    const aside = await send(alice, '/me/mail/send', {
      to: 'bob',
      subject: 'aside',
      body: 'ALICE-TO-BOB-ONLY',
      reply_to: update.mail_id,
    });
    const forPi = await thread(pi, '/agent/mail', task.mail_id);
    expect(forPi.mails.map((m) => m.id)).toEqual([task.mail_id, update.mail_id]);
    expect(JSON.stringify(forPi)).not.toContain('ALICE-TO-BOB-ONLY');
    expect((await api(gw, 'GET', `/agent/mail/${aside.mail_id}`, pi)).status).toBe(404);
    // bob, the addressee, sees it in his thread
    const forBob = await thread(bob, '/me/mail', aside.mail_id);
    expect(forBob.mails.map((m) => m.id)).toContain(aside.mail_id);
  });

  it('an agent can not read the participants of a session it never touched', async () => {
    const s = await send(alice, '/me/mail/send', { to: 'pi@/private.new', subject: 'p', body: 'x' });
    expect((await api(gw, 'GET', `/agent/sessions/${s.session_id}/participants`, oc)).status).toBe(404);
  });
});
