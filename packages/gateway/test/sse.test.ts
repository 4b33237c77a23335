import { InboxResponse, MailResponse, NewMailEvent } from '@agentmail/protocol';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { addAgent, addUser, api, dataOf, openSse, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('SSE (G-22)', () => {
  it('fans out to every open stream of the agent, with increasing ids', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const a = openSse(gw, '/events', pi);
    const b = openSse(gw, '/events', pi);
    await Promise.all([a.ready, b.ready]);
    for (const s of ['1', '2', '3'])
      await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: s, body: 'x' });
    const ea = await a.waitFor(3);
    const eb = await b.waitFor(3);
    expect(ea.map((e) => dataOf(e).subject)).toEqual(['1', '2', '3']);
    expect(eb.map((e) => e.id)).toEqual(ea.map((e) => e.id));
    const ids = ea.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(3);
    for (const e of ea) expect(NewMailEvent.safeParse(dataOf(e)).success).toBe(true);
    a.close();
    b.close();
  });

  it('a live-only stream gets an event that commits while it reads the stream cursor (no gap at connect)', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    // Real SQLite; only the timing is arranged: a mail commits (and is published to the new,
    // still buffering connection) just before the hub reads the stream's cursor.
    const builder = gw.app.gateway.db.selectFrom('stream_cursors').selectAll();
    const proto = Object.getPrototypeOf(builder) as {
      executeTakeFirst: (this: { compile(): { sql: string } }) => Promise<unknown>;
    };
    const original = proto.executeTakeFirst;
    let injected = false;
    proto.executeTakeFirst = async function (this: { compile(): { sql: string } }) {
      if (!injected && this.compile().sql.includes('"stream_cursors"')) {
        injected = true;
        await api(gw as TestGateway, 'POST', '/me/mail/send', alice, {
          to: 'pi',
          subject: 'racing',
          body: 'x',
        });
      }
      return original.call(this);
    };
    onTestFinished(() => {
      proto.executeTakeFirst = original;
    });
    const s = openSse(gw, '/events', pi);
    await s.ready;
    const [e] = await s.waitFor(1);
    expect(injected).toBe(true);
    expect(dataOf(e ?? ({ data: '{}' } as never)).subject).toBe('racing');
    s.close();
  });

  it('replays everything after Last-Event-ID after a dropped connection: nothing lost, nothing twice', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const first = openSse(gw, '/events', pi);
    await first.ready;
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'before', body: 'x' });
    const [seen] = await first.waitFor(1);
    first.close();
    // sent while the agent is away
    for (const s of ['gap1', 'gap2', 'gap3'])
      await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: s, body: 'x' });
    const second = openSse(gw, '/events', pi, seen?.id);
    await second.ready;
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'live', body: 'x' });
    const got = await second.waitFor(4);
    expect(got.map((e) => dataOf(e).subject)).toEqual(['gap1', 'gap2', 'gap3', 'live']);
    second.close();
  });

  it('without Last-Event-ID only live events come; keep-alive comments are sent', async () => {
    gw = await startGateway({ sseKeepaliveMs: 50 });
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'old', body: 'x' });
    const s = openSse(gw, '/events', pi);
    await s.ready;
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'new', body: 'x' });
    const [e] = await s.waitFor(1);
    expect(dataOf(e ?? ({ data: '{}' } as never)).subject).toBe('new');
    s.close();
    // keep-alive: read the raw stream for a comment line beyond the first
    const { fetch } = await import('undici');
    const ctrl = new AbortController();
    const res = await fetch(`${gw.url}/api/v1/events`, {
      headers: { authorization: `Bearer ${pi}` },
      signal: ctrl.signal,
    });
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body ?? []) {
      text += decoder.decode(chunk as Uint8Array);
      if (text.includes(': ping')) break;
    }
    ctrl.abort();
    expect(text).toContain(': ping');
  });

  it('the event log is bounded per agent', async () => {
    gw = await startGateway({ eventLogMaxPerStream: 3 });
    await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    for (let i = 0; i < 6; i++)
      await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: `m${i}`, body: 'x' });
    const rows = await gw.app.gateway.db
      .selectFrom('events')
      .select('event_id')
      .where('stream', '=', 'agent:pi')
      .execute();
    expect(rows.map((r) => Number(r.event_id)).sort()).toEqual([4, 5, 6]);
  });

  it('a restart keeps every mail and the event log (replay across restarts)', async () => {
    const first = await startGateway();
    const pi = await addAgent(first, 'pi');
    const alice = await addUser(first, 'alice');
    const s = openSse(first, '/events', pi);
    await s.ready;
    await api(first, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'a', body: 'x' });
    const [e1] = await s.waitFor(1);
    s.close();
    const sent = await api(first, 'POST', '/me/mail/send', alice, {
      to: 'pi',
      subject: 'b',
      body: 'y',
      cc: [],
    });
    await first.stop();
    gw = await startGateway({ dataDir: first.dataDir, adminToken: first.adminToken });
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox?status=all', pi)).body);
    expect(inbox.mails.map((m) => m.subject).sort()).toEqual(['a', 'b']);
    const mail = MailResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${String(sent.body.mail_id)}`, pi)).body,
    );
    expect(mail.mail.body).toBe('y');
    const replay = openSse(gw, '/events', pi, e1?.id);
    await replay.ready;
    const [again] = await replay.waitFor(1);
    expect(dataOf(again ?? ({ data: '{}' } as never)).subject).toBe('b');
    // ids keep increasing after the restart
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'c', body: 'z' });
    const both = await replay.waitFor(2);
    expect(Number(both[1]?.id)).toBeGreaterThan(Number(both[0]?.id));
    replay.close();
  });

  it('a person has their own stream at /me/events', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    const s = openSse(gw, '/me/events', alice);
    await s.ready;
    await api(gw, 'POST', '/mail/send', pi, { to: 'alice', subject: 'hello person', body: 'x' });
    const [e] = await s.waitFor(1);
    expect(e?.event).toBe('new_mail');
    expect(dataOf(e ?? ({ data: '{}' } as never)).from_human).toBe(false);
    s.close();
  });
});
