/**
 * Idempotent sends (SPEC G-41), on both dialects: a repeat with the same Idempotency-Key answers
 * the first answer and creates nothing, also after a restart; another request under the key is a
 * 409; the key is the sender's own.
 */
import { PermissionRequestResponse, SendMailResponse } from '@agentmail/protocol';
import { describe, expect, it } from 'vitest';
import { rawRequest } from './helpers/processes.js';
import { addAgent, addUser, startGateway } from './helpers.js';

async function post(url: string, token: string, body: unknown, key?: string) {
  return rawRequest(url, 'POST', {
    token,
    body,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

describe('Idempotency-Key (G-41)', () => {
  it('a repeated send answers the first answer, marked replayed, and sends nothing; another body is a 409', async () => {
    const gw = await startGateway();
    try {
      await addAgent(gw, 'pi');
      const alice = await addUser(gw, 'alice');
      const url = `${gw.url}/api/v1/me/mail/send`;
      const body = { to: 'pi@/w.new', subject: 'Task', body: 'go' };
      const first = await post(url, alice, body, 'k-1');
      expect(first.status).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await post(url, alice, body, 'k-1');
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      const mails = await gw.app.gateway.db.selectFrom('mails').select('id').execute();
      expect(mails).toHaveLength(1);
      const other = await post(url, alice, { ...body, body: 'something else' }, 'k-1');
      expect(other.status).toBe(409);
      expect((other.body as { code: string }).code).toBe('AM_GW_IDEMPOTENCY_KEY_REUSED');
      expect((other.body as { detail: string }).detail).toContain('its repeat must be the same request');
      // Without a key every send is a new mail; a fresh key too.
      expect((await post(url, alice, body)).status).toBe(200);
      expect((await post(url, alice, body, 'k-2')).status).toBe(200);
      expect(await gw.app.gateway.db.selectFrom('mails').select('id').execute()).toHaveLength(3);
    } finally {
      await gw.close();
    }
  });

  it('the answer is kept across a restart; keys are per sender; a bad key names the header', async () => {
    const gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const bob = await addUser(gw, 'bob');
    const body = { to: 'pi@/w.new', subject: 'Task', body: 'go' };
    const first = SendMailResponse.parse(
      (await post(`${gw.url}/api/v1/me/mail/send`, alice, body, 'same')).body,
    );
    await gw.stop();
    const again = await startGateway({ dataDir: gw.dataDir, adminToken: gw.adminToken });
    try {
      const url = `${again.url}/api/v1/me/mail/send`;
      const replay = await post(url, alice, body, 'same');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(SendMailResponse.parse(replay.body)).toEqual(first);
      // bob's "same" is his own key: a new mail.
      const bobs = SendMailResponse.parse((await post(url, bob, body, 'same')).body);
      expect(bobs.status === 'sent' && first.status === 'sent' && bobs.mail_id !== first.mail_id).toBe(true);
      for (const bad of ['', 'has space', 'x'.repeat(256), 'naïve']) {
        const r = await post(url, alice, body, bad);
        expect(r.status, JSON.stringify(bad)).toBe(400);
        expect((r.body as { detail: string }).detail).toContain('header "Idempotency-Key"');
      }
      // An agent's permission request and forward take keys too.
      if (first.status !== 'sent') throw new Error('not sent');
      const ask = {
        question: 'Run make?',
        options: ['approve', 'deny'],
        session_id: first.session_id,
        relay_key: 'q1',
        kind: 'approval',
      };
      const p1 = await post(`${again.url}/api/v1/permission/request`, pi, ask, 'ask-1');
      const p2 = await post(`${again.url}/api/v1/permission/request`, pi, ask, 'ask-1');
      expect(PermissionRequestResponse.parse(p2.body)).toEqual(PermissionRequestResponse.parse(p1.body));
      expect(p2.headers['idempotent-replayed']).toBe('true');
      const fwd = { to: 'pi@/w2.new' };
      const f1 = await post(`${again.url}/api/v1/me/mail/${first.mail_id}/forward`, alice, fwd, 'fwd-1');
      const f2 = await post(`${again.url}/api/v1/me/mail/${first.mail_id}/forward`, alice, fwd, 'fwd-1');
      expect(f1.status).toBe(200);
      expect(f2.body).toEqual(f1.body);
      expect(f2.headers['idempotent-replayed']).toBe('true');
    } finally {
      await again.close();
    }
  });
});
