/**
 * Regressions of uploads and attachments: broken multipart bodies were a 500 "retry later", a
 * file in the wrong field or a second file was silently taken or dropped, and the same
 * attachment id twice in one send was a 500 (UNIQUE constraint).
 */
import { MailResponse, UploadAttachmentResponse } from '@agentmail/protocol';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let pi: string;
let alice: string;
beforeAll(async () => {
  gw = await startGateway();
  pi = await addAgent(gw, 'pi');
  alice = await addUser(gw, 'alice');
});
afterAll(async () => {
  await gw.close();
});

const B = 'XyZboundary';
const part = (field: string, filename: string, data: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
  `Content-Type: text/plain\r\n\r\n${data}\r\n`;
const textField = (field: string, value: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n${value}\r\n`;
const end = `--${B}--\r\n`;

async function rawUpload(contentType: string, body: string) {
  const r = await request(`${gw.url}/api/v1/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${pi}`, 'content-type': contentType },
    body,
  });
  return { status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> };
}

async function countAttachments() {
  const rows = await gw.app.gateway.db.selectFrom('attachments').select('id').execute();
  return rows.length;
}

function expectNeverRetry(r: { status: number; body: Record<string, unknown> }) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.code).toBe('AM_GW_BAD_REQUEST');
  expect(String(r.body.suggestion ?? '')).not.toMatch(/retry/i);
}

describe('broken multipart uploads are a 400 that says what is wrong', () => {
  it('no boundary', async () => {
    const r = await rawUpload('multipart/form-data', part('file', 'a.txt', 'hello') + end);
    expectNeverRetry(r);
    expect(String(r.body.detail)).toMatch(/malformed.*boundary not found/i);
  });

  it('a truncated body', async () => {
    const r = await rawUpload(
      `multipart/form-data; boundary=${B}`,
      part('file', 'a.txt', 'hello').slice(0, -10),
    );
    expectNeverRetry(r);
    expect(String(r.body.detail)).toMatch(/unexpected end of multipart data|terminated early/i);
  });

  it('a file in another field names that field', async () => {
    const before = await countAttachments();
    const r = await rawUpload(`multipart/form-data; boundary=${B}`, part('upload', 'a.txt', 'hello') + end);
    expectNeverRetry(r);
    expect(r.body.field).toBe('upload');
    expect(String(r.body.detail)).toContain('"file"');
    expect(await countAttachments()).toBe(before);
  });

  it('a second file is refused, not silently dropped, and nothing is kept', async () => {
    const before = await countAttachments();
    const blobsBefore = (await gw.app.gateway.blobs.list()).length;
    const r = await rawUpload(
      `multipart/form-data; boundary=${B}`,
      part('file', 'a.txt', 'hello') + part('file', 'b.txt', 'world') + end,
    );
    expectNeverRetry(r);
    expect(r.body.field).toBe('file');
    expect(String(r.body.detail)).toContain('one file per upload');
    expect(await countAttachments()).toBe(before);
    expect((await gw.app.gateway.blobs.list()).length).toBe(blobsBefore);
  });

  it('a well-formed upload with an extra text field still works', async () => {
    const r = await rawUpload(
      `multipart/form-data; boundary=${B}`,
      textField('note', 'hi') + part('file', 'a.txt', 'hello') + end,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(UploadAttachmentResponse.parse(r.body).attachment.size_bytes).toBe(5);
  });
});

describe('the same attachment id twice in one send', () => {
  it('attaches the file once, in the place it was first named', async () => {
    const a = UploadAttachmentResponse.parse(
      (await rawUpload(`multipart/form-data; boundary=${B}`, part('file', 'a.txt', 'A') + end)).body,
    ).attachment.id;
    const b = UploadAttachmentResponse.parse(
      (await rawUpload(`multipart/form-data; boundary=${B}`, part('file', 'b.txt', 'B') + end)).body,
    ).attachment.id;
    const sent = await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      subject: 'twice',
      body: 'x',
      attachment_ids: [a, b, a, b],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const mail = MailResponse.parse(
      (await api(gw, 'GET', `/me/mail/${String(sent.body.mail_id)}`, alice)).body,
    ).mail;
    expect(mail.attachments.map((x) => x.id)).toEqual([a, b]);
  });

  it('an unknown id is still named by its place in the request', async () => {
    const a = UploadAttachmentResponse.parse(
      (await rawUpload(`multipart/form-data; boundary=${B}`, part('file', 'c.txt', 'C') + end)).body,
    ).attachment.id;
    const r = await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      subject: 's',
      body: 'x',
      attachment_ids: [a, a, 'a_nope'],
    });
    expect(r.status).toBe(404);
    expect(r.body.field).toBe('attachment_ids[2]');
  });
});
