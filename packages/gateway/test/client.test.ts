/**
 * The shared typed client of shared-policy (`ApiClient` and its facades `PersonApi`,
 * `GatewayClient`; `SseClient` on a person's stream) against the real Gateway on loopback with a
 * real SQLite file: the endpoint table drives both ends, so what one sends the other takes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { PERSON_EVENT_SCHEMAS, type PersonEvent, routePath } from '@agentmail/protocol';
import { hasErrorCode } from '@agentmail/shared-policy';
import {
  ApiClient,
  GatewayClient,
  GatewayHttpError,
  isPermanent,
  PersonApi,
  SseClient,
  undiciTransport,
} from '@agentmail/shared-policy/client';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { addAgent, addUser, startGateway, type TestGateway, tempDir, thrown } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('the typed client against the real Gateway', () => {
  it('admin, person and agent facades over one ApiClient: users, keys, models, mail both ways, files', async () => {
    gw = await startGateway();
    const base = new ApiClient({ baseUrl: gw.url, transport: undiciTransport });
    const admin = new PersonApi(base.extend({ token: gw.adminToken }));
    expect((await new PersonApi(base).health()).status).toBe('ok');

    const alice = await admin.createUser('alice');
    expect(alice).toMatchObject({ name: 'alice', admin: false });
    expect((await admin.users()).users.map((u) => u.name).sort()).toEqual(['admin', 'alice']);
    const issued = await admin.issueAgentKey('pi');
    const spare = await admin.issueAgentKey('pi');
    expect(await admin.revokeAgentKey(spare.key_id)).toEqual({ status: 'revoked', key_id: spare.key_id });
    expect((await admin.setAllowedModels('pi', ['p/a', 'p/b'])).models.map((m) => m.key)).toEqual([
      'p/a',
      'p/b',
    ]);
    // No agent has reported a catalogue yet: nothing is known, so nothing is stale (G-26).
    const view = await admin.allowedModels('pi');
    expect([view.models.some((m) => m.stale), view.reported_by]).toEqual([false, []]);

    const dir = tempDir();
    const pi = new GatewayClient({ baseUrl: gw.url, key: issued.key, allowedRoots: [dir] });
    await pi.register({ name: 'pi', platform: 'pi' });
    expect((await pi.heartbeat({ models: [{ key: 'p/a' }] })).allowed_models).toEqual(['p/a', 'p/b']);

    const me = new PersonApi(base.extend({ token: alice.token }));
    const up = await me.upload(new Blob(['notes of alice']), 'notes – 1.txt');
    const sent = await me.send({
      to: 'pi',
      subject: 'hello',
      body: 'first',
      attachment_ids: [up.attachment.id],
    });
    if (sent.status !== 'sent') throw new Error('not sent');
    const { mails } = await pi.inbox({ status: 'unread', limit: 5 });
    expect(mails.map((m) => m.id)).toEqual([sent.mail_id]);
    const target = join(dir, 'from-alice.txt');
    await pi.downloadAttachment(up.attachment.id, target);
    expect(readFileSync(target, 'utf8')).toBe('notes of alice');

    const file = join(dir, 'answer.txt');
    writeFileSync(file, 'the answer');
    const att = await pi.uploadAttachment(file, { contentType: 'text/plain' });
    const reply = await pi.send({
      to: 'alice',
      subject: 'Re: hello',
      body: 'done',
      reply_to: sent.mail_id,
      attachment_ids: [att.id],
    });
    if (reply.status !== 'sent') throw new Error('not sent');
    const got = (await me.mail(reply.mail_id)).mail;
    expect(got).toMatchObject({ from_name: 'pi', from_human: false, in_reply_to: sent.mail_id });
    const download = await me.download(att.id);
    expect([download.filename, download.contentType]).toEqual(['answer.txt', 'text/plain']);
    expect(new TextDecoder().decode(await download.bytes())).toBe('the answer');
    expect((await me.thread(sent.mail_id, { offset: 0 })).mails.map((m) => m.id)).toEqual([
      sent.mail_id,
      reply.mail_id,
    ]);
    expect((await me.markRead([reply.mail_id])).updated).toBe(1);
    expect((await me.inbox({ status: 'unread' })).unread_count).toBe(0);
  });

  it('refusals carry the status and the parsed body the Gateway sent (SPEC G-13)', async () => {
    gw = await startGateway();
    const key = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const bound = await thrown(
      new GatewayClient({ baseUrl: gw.url, key }).register({ name: 'oc', platform: 'opencode' }),
    );
    expect(bound).toBeInstanceOf(GatewayHttpError);
    expect((bound as GatewayHttpError).status).toBe(403);
    expect((bound as GatewayHttpError).body).toMatchObject({
      error: 'forbidden',
      code: 'AM_GW_KEY_BOUND_TO_OTHER_AGENT',
    });
    expect(isPermanent(bound)).toBe(true);
    // an agent key on a person route: 403 naming the credential it needs
    const wrongKind = await thrown(new PersonApi({ baseUrl: gw.url, token: key }).inbox());
    expect((wrongKind as GatewayHttpError).body).toMatchObject({ code: 'AM_GW_FORBIDDEN' });
    // a strict body: the G-10 message names the field
    const bad = await thrown(
      new PersonApi({ baseUrl: gw.url, token: alice }).send({
        to: 'pi',
        subject: 's',
        body: 'b',
        max_rounds: 0,
      }),
    );
    expect((bad as GatewayHttpError).body).toMatchObject({ error: 'invalid_request', field: 'max_rounds' });
  });

  it('an answer that breaks the contract is AM_GATEWAY_RESPONSE_INVALID at the client, naming the field', async () => {
    // A Gateway without the check (production default) over a store holding eleven allowed
    // models: the heartbeat answer breaks `allowed_models` (≤10, G-27) and the client says so.
    gw = await startGateway({ checkResponses: false });
    const key = await addAgent(gw, 'pi');
    await gw.app.gateway.db
      .insertInto('allowed_models')
      .values(Array.from({ length: 11 }, (_, i) => ({ platform: 'pi', position: i, model_key: `p/m${i}` })))
      .execute();
    const err = await thrown(new GatewayClient({ baseUrl: gw.url, key }).heartbeat());
    expect(hasErrorCode(err, 'AM_GATEWAY_RESPONSE_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(
      /POST \/api\/v1\/agent\/heartbeat answered 200 .* at "allowed_models"/,
    );
    expect(isPermanent(err)).toBe(true);
  });

  it("SseClient reads a person's stream with the person event map", async () => {
    gw = await startGateway();
    const key = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const events: PersonEvent[] = [];
    let wake: () => void = () => {};
    const arrived = new Promise<void>((r) => {
      wake = r;
    });
    const sse = new SseClient({
      url: gw.url,
      key: alice,
      path: routePath('meEvents'),
      events: PERSON_EVENT_SCHEMAS,
      lastEventId: '0',
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'new_mail') wake();
      },
    });
    onTestFinished(() => sse.close());
    void sse.start();
    await new GatewayClient({ baseUrl: gw.url, key }).send({ to: 'alice', subject: 'ping', body: 'x' });
    await arrived;
    expect(events[0]).toMatchObject({
      type: 'new_mail',
      data: { from_name: 'pi', from_human: false, subject: 'ping' },
    });
  });
});

describe('idempotent sends through a connection that drops the answer (G-41)', () => {
  it('the client resends with the same Idempotency-Key; the Gateway answers the stored answer: one mail', async () => {
    gw = await startGateway();
    const target = new URL(gw.url);
    await addAgent(gw, 'pi');
    const aliceToken = await addUser(gw, 'alice');
    // A proxy that forwards the first request but cuts the connection when its answer comes
    // back (the Gateway stored the mail; the client saw only a reset), then forwards normally.
    const keys: string[] = [];
    let connections = 0;
    const proxy = createNetServer((client) => {
      const first = ++connections === 1;
      const upstream = connect(Number(target.port), target.hostname);
      client.on('data', (chunk: Buffer) => {
        const key = /idempotency-key: (\S+)/i.exec(chunk.toString('latin1'))?.[1];
        if (key) keys.push(key);
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (first) {
          client.destroy();
          upstream.destroy();
        } else client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => {});
      upstream.on('error', () => {});
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => proxy.close(() => done())));
    const port = (proxy.address() as { port: number }).port;
    const alice = new PersonApi(
      new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, token: aliceToken, transport: undiciTransport }),
    );
    const sent = await alice.send({ to: 'pi@/w.new', subject: 'once', body: 'only once' });
    expect(sent.status).toBe('sent');
    expect(connections).toBe(2);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    const mails = await gw.app.gateway.db.selectFrom('mails').select('id').execute();
    expect(mails.map((m) => m.id)).toEqual([sent.status === 'sent' ? sent.mail_id : '']);
    // A read is not resent: no key on it either.
    expect((await alice.inbox()).mails).toHaveLength(0);
    expect(keys).toHaveLength(2);
  });
});
