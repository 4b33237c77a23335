import { Readable } from 'node:stream';
import { MailResponse, UploadAttachmentResponse } from '@agentmail/protocol';
import { FormData, fetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepBlobs } from '../src/index.js';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function upload(
  g: TestGateway,
  token: string,
  content: Uint8Array | string,
  name = 'report.txt',
  path = '/attachments',
) {
  const form = new FormData();
  form.append('file', new Blob([content]), name);
  const res = await fetch(`${g.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('attachments (G-35)', () => {
  it('upload, attach, download with the same bytes; recipients can download, others not', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const oc = await addAgent(gw, 'oc');
    const alice = await addUser(gw, 'alice');
    const up = await upload(gw, pi, 'hello ünïcode', 'notes – 1.txt');
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const att = UploadAttachmentResponse.parse(up.body).attachment;
    expect(att.size_bytes).toBe(Buffer.byteLength('hello ünïcode'));
    const sent = await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      subject: 'file',
      body: 'see',
      attachment_ids: [att.id],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const mail = MailResponse.parse(
      (await api(gw, 'GET', `/me/mail/${String(sent.body.mail_id)}`, alice)).body,
    ).mail;
    expect(mail.attachments.map((a) => a.id)).toEqual([att.id]);
    const dl = await fetch(`${gw.url}/api/v1/me/attachments/${att.id}`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    expect(dl.status).toBe(200);
    expect(await dl.text()).toBe('hello ünïcode');
    expect(dl.headers.get('content-disposition')).toContain("filename*=UTF-8''notes%20%E2%80%93%201.txt");
    const denied = await fetch(`${gw.url}/api/v1/attachments/${att.id}`, {
      headers: { authorization: `Bearer ${oc}` },
    });
    expect(denied.status).toBe(404);
    await denied.text();
  });

  it('refuses uploads over the limit with 413 and leaves no file behind', async () => {
    gw = await startGateway({ attachmentMaxBytes: 1024 });
    const pi = await addAgent(gw, 'pi');
    const r = await upload(gw, pi, new Uint8Array(4096));
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('payload_too_large');
    expect(await gw.app.gateway.blobs.list()).toEqual([]);
    expect(await gw.app.gateway.db.selectFrom('attachments').select('id').execute()).toEqual([]);
  });

  it('checks every attachment id before creating the mail: nothing is created on an unknown id', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const other = await addAgent(gw, 'other');
    const mine = UploadAttachmentResponse.parse((await upload(gw, pi, 'a')).body).attachment;
    const theirs = UploadAttachmentResponse.parse((await upload(gw, other, 'b')).body).attachment;
    const hers = UploadAttachmentResponse.parse(
      (await upload(gw, alice, 'c', 'c.txt', '/me/attachments')).body,
    ).attachment;
    for (const ids of [
      [hers.id, 'a_missing'],
      [hers.id, theirs.id],
    ]) {
      const r = await api(gw, 'POST', '/me/mail/send', alice, {
        to: 'pi@/w.new',
        subject: 's',
        body: 'b',
        attachment_ids: ids,
      });
      expect(r.status).toBe(404);
      expect(r.body.field).toBe('attachment_ids[1]');
    }
    const r = await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      subject: 's',
      body: 'b',
      attachment_ids: [mine.id, 'a_missing'],
      relay: 'summary',
      relay_key: 'rk',
    });
    expect(r.status).toBe(404);
    const db = gw.app.gateway.db;
    expect(await db.selectFrom('mails').select('id').execute()).toEqual([]);
    expect(
      await db
        .selectFrom('sessions')
        .select('id')
        .where('agent_name', '=', 'pi')
        .where('path', '=', '/w')
        .execute(),
    ).toEqual([]);
  });

  it('a failure after the mail exists rolls everything back: no mail, no session, key and budget untouched', async () => {
    let fail = true;
    gw = await startGateway(
      {},
      {
        afterMailCreated: () => {
          if (fail) throw new Error('injected failure after mail creation');
        },
      },
    );
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const att = UploadAttachmentResponse.parse((await upload(gw, pi, 'x')).body).attachment;
    const body = {
      to: 'oc',
      subject: 's',
      body: 'b',
      attachment_ids: [att.id],
      relay: 'summary',
      relay_key: 'after-fail',
    };
    await addAgent(gw, 'oc');
    const r = await api(gw, 'POST', '/mail/send', pi, { ...body, to: 'oc@/new-dir.new' });
    expect(r.status).toBe(500);
    const db = gw.app.gateway.db;
    expect(await db.selectFrom('mails').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('mail_attachments').select('mail_id').execute()).toEqual([]);
    expect(await db.selectFrom('sessions').select('id').where('agent_name', '=', 'oc').execute()).toEqual([]);
    expect(await db.selectFrom('events').select('event_id').execute()).toEqual([]);
    const budget = await db
      .selectFrom('sessions')
      .select('rounds_used')
      .where('agent_name', '=', 'pi')
      .execute();
    expect(budget.every((s) => s.rounds_used === 0)).toBe(true);
    fail = false;
    const again = await api(gw, 'POST', '/mail/send', pi, { ...body, to: 'oc@/new-dir.new' });
    expect(again.body.status).toBe('sent'); // the relay key was released
    void alice;
  });
});

describe('blob sweep (G-36)', () => {
  it('deletes unreferenced blobs and never-sent uploads older than 48 h, keeps the rest', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    await addUser(gw, 'alice');
    const sent = UploadAttachmentResponse.parse((await upload(gw, pi, 'kept')).body).attachment;
    await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      subject: 's',
      body: 'b',
      attachment_ids: [sent.id],
    });
    const unsent = UploadAttachmentResponse.parse((await upload(gw, pi, 'never sent')).body).attachment;
    const { db, blobs } = gw.app.gateway;
    await blobs.write('orphan_blob', Readable.from([Buffer.from('orphan')]), 100);
    const stored = async () => (await blobs.list()).map((b) => b.key);
    // young: nothing goes
    expect(await sweepBlobs(db, blobs, () => Date.now())).toEqual({ attachmentsDeleted: 0, blobsDeleted: 0 });
    // 49 h later
    const later = () => Date.now() + 49 * 60 * 60 * 1000;
    expect(await sweepBlobs(db, blobs, later)).toEqual({ attachmentsDeleted: 1, blobsDeleted: 2 });
    expect(await stored()).toEqual([sent.id]);
    const dl = await fetch(`${gw.url}/api/v1/attachments/${sent.id}`, {
      headers: { authorization: `Bearer ${pi}` },
    });
    expect(await dl.text()).toBe('kept');
  });
});
