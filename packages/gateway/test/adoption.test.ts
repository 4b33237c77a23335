import {
  InboxResponse,
  NewMailEvent,
  SendMailResponse,
  SessionSyncResponse,
  ThreadResponse,
} from '@agentmail/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, dataOf, openSse, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('adoption of platform sessions (G-37)', () => {
  it('a snapshot session receives mail: one local session per platform session, directory and title kept, slug as alias, platform_session_id on every delivery', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    await api(gw, 'POST', '/agent/heartbeat', pi, {
      sessions: [
        { platform_id: 'plat-1', path: '/home/me/proj', title: 'Refactor parser', slug: 'refactor-parser' },
        { platform_id: 'plat-2', path: '/home/me/other', title: 'Other', slug: 'taken' },
      ],
    });
    const events = openSse(gw, '/events', pi);
    await events.ready;
    const a = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.refactor-parser', subject: 'hi', body: 'x' }))
        .body,
    );
    const b = SendMailResponse.parse(
      (
        await api(gw, 'POST', '/me/mail/send', alice, {
          to: 'pi@.refactor-parser',
          subject: 'again',
          body: 'y',
        })
      ).body,
    );
    if (a.status !== 'sent' || b.status !== 'sent') throw new Error('not sent');
    expect(b.session_id).toBe(a.session_id);
    // the platform id reaches the same local session, never a second one
    const c = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.plat-1', subject: 'by id', body: 'z' })).body,
    );
    expect(c.status === 'sent' && c.session_id).toBe(a.session_id);
    const rows = await gw.app.gateway.db
      .selectFrom('sessions')
      .selectAll()
      .where('platform_id', '=', 'plat-1')
      .execute();
    expect(rows.length).toBe(1);
    expect(rows[0]?.path).toBe('/home/me/proj');
    expect(rows[0]?.title).toBe('Refactor parser');
    expect(rows[0]?.alias).toBe('refactor-parser');
    const got = await events.waitFor(3);
    for (const e of got) expect(NewMailEvent.parse(dataOf(e)).platform_session_id).toBe('plat-1');
    expect(NewMailEvent.parse(dataOf(got[0] ?? ({ data: '{}' } as never))).to_workspace).toBe(
      '/home/me/proj',
    );
    events.close();
    // catch-up reads the inbox: the agent's items carry the platform session too (B-4, B-20);
    // the person's view of the same thread does not
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/mail/inbox?status=unread', pi)).body);
    expect(inbox.mails.map((m) => m.platform_session_id)).toEqual(['plat-1', 'plat-1', 'plat-1']);
    const thread = ThreadResponse.parse((await api(gw, 'GET', `/me/mail/${a.mail_id}/thread`, alice)).body);
    expect(thread.mails.length).toBe(3);
    for (const m of thread.mails) expect(m.platform_session_id).toBe('');
  });

  it('the slug gets a suffix when the alias is taken; the platform id also addresses it', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    // a local session already has the alias "taken"
    await api(gw, 'POST', '/mail/send', pi, {
      to: 'pi@/x.new',
      subject: 's',
      body: 'b',
      session_alias: 'taken',
    });
    await api(gw, 'POST', '/agent/heartbeat', pi, {
      sessions: [{ platform_id: 'plat-2', path: '/o', slug: 'taken' }],
    });
    const r = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.plat-2', subject: 'hi', body: 'x' })).body,
    );
    expect(r.status === 'sent' && r.session_alias).toBe('taken-2');
  });

  it('adoption counts toward the new-session rate limit (G-34)', async () => {
    gw = await startGateway({ newSessionsPerHour: 1 });
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    await api(gw, 'POST', '/agent/heartbeat', pi, {
      sessions: [
        { platform_id: 'p1', path: '/a', slug: 'one' },
        { platform_id: 'p2', path: '/b', slug: 'two' },
      ],
    });
    expect(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.one', subject: 's', body: 'b' })).status,
    ).toBe(200);
    expect(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.two', subject: 's', body: 'b' })).status,
    ).toBe(429);
  });
});

describe('naming sync (sessions/{id}/sync)', () => {
  it('renames with a suffix on collision and answers the final alias', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const oc = await addAgent(gw, 'oc');
    const alice = await addUser(gw, 'alice');
    const a = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'First', body: 'x' })).body,
    );
    const b = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Second', body: 'x' })).body,
    );
    if (a.status !== 'sent' || b.status !== 'sent') throw new Error('not sent');
    const r1 = SessionSyncResponse.parse(
      (await api(gw, 'POST', `/sessions/${a.session_id}/sync`, pi, { alias: 'parser', title: 'Parser work' }))
        .body,
    );
    expect(r1).toEqual({ session_id: a.session_id, alias: 'parser', title: 'Parser work' });
    const r2 = SessionSyncResponse.parse(
      (await api(gw, 'POST', `/sessions/${b.session_id}/sync`, pi, { alias: 'parser' })).body,
    );
    expect(r2.alias).toBe('parser-2');
    // the new alias addresses the session
    const via = await api(gw, 'POST', '/me/mail/send', alice, {
      to: 'pi@/w.parser',
      subject: 's',
      body: 'b',
    });
    expect(via.body.session_id).toBe(a.session_id);
    // another agent can not rename it
    expect((await api(gw, 'POST', `/sessions/${a.session_id}/sync`, oc, { alias: 'mine' })).status).toBe(404);
    expect((await api(gw, 'POST', `/sessions/${a.session_id}/sync`, pi, { alias: 'new' })).status).toBe(400);
  });
});
