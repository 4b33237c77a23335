/**
 * Presence is honest (SPEC H-3, G-25, G-39): an agent stayed "online" for up to 90 s after its
 * bridge stopped. A bridge that stops says so (`POST /agent/offline`) and the agent is offline at
 * once, its last contact kept; the next heartbeat brings it back; a send to an offline agent is
 * kept and its answer says who is offline since when.
 */
import { AgentOfflineResponse, ContactsResponse, SendMailResponse } from '@agentmail/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presenceOf } from '../src/presence.js';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let now = Date.parse('2026-12-01T10:00:00.000Z');
let echo: string;
let alice: string;
beforeAll(async () => {
  gw = await startGateway({ clock: () => now });
  echo = await addAgent(gw, 'echo');
  alice = await addUser(gw, 'alice');
});
afterAll(async () => {
  await gw.close();
});

async function echoContact() {
  const r = await api(gw, 'GET', '/me/contacts', alice);
  return ContactsResponse.parse(r.body).contacts.find((c) => c.name === 'echo');
}

describe('presence (SPEC H-3)', () => {
  it('regression: a bridge that says it stops is offline at once, not 90 s later; a heartbeat brings it back', async () => {
    await api(gw, 'POST', '/agent/heartbeat', echo, {});
    expect(await echoContact()).toMatchObject({ online: true, offline_since: null });
    now += 5_000;
    const bye = await api(gw, 'POST', '/agent/offline', echo, { reason: 'shutdown' });
    expect(bye.status, JSON.stringify(bye.body)).toBe(200);
    expect(AgentOfflineResponse.parse(bye.body)).toEqual({
      status: 'offline',
      name: 'echo',
      offline_since: new Date(now).toISOString(),
    });
    // Within the 90 s window of the last heartbeat, and still offline.
    expect(await echoContact()).toMatchObject({
      online: false,
      last_seen: new Date(now).toISOString(),
      offline_since: new Date(now).toISOString(),
    });
    now += 1_000;
    await api(gw, 'POST', '/agent/heartbeat', echo, {});
    expect(await echoContact()).toMatchObject({ online: true, offline_since: null });
  });

  it('a send to an offline agent is kept, and the answer names it with offline since', async () => {
    await api(gw, 'POST', '/agent/offline', echo, {});
    const stoppedAt = new Date(now).toISOString();
    now += 60_000;
    const r = await api(gw, 'POST', '/me/mail/send', alice, { to: 'echo', subject: 'hi', body: 'x' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const sent = SendMailResponse.parse(r.body);
    expect(sent.status === 'sent' && sent.offline_recipients).toEqual([
      { name: 'echo', last_seen: stoppedAt, offline_since: stoppedAt },
    ]);
    // G-39: the mail waits unread in the agent's inbox.
    const inbox = await api<{ mails: { subject: string }[] }>(gw, 'GET', '/mail/inbox', echo);
    expect(inbox.body.mails.map((m) => m.subject)).toContain('hi');
    // Online again: no offline_recipients in the answer.
    await api(gw, 'POST', '/agent/heartbeat', echo, {});
    const again = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'echo', subject: 'hi 2', body: 'x' })).body,
    );
    expect(again.status === 'sent' && again.offline_recipients).toBeUndefined();
  });

  it('an agent that only went silent is offline from the end of its online window', () => {
    const last = Date.parse('2026-12-01T09:00:00.000Z');
    expect(presenceOf({ last_seen: last, offline_since: null }, last + 90_000).online).toBe(true);
    expect(presenceOf({ last_seen: last, offline_since: null }, last + 91_000)).toEqual({
      online: false,
      last_seen: '2026-12-01T09:00:00.000Z',
      offline_since: '2026-12-01T09:01:30.000Z',
    });
    expect(presenceOf({ last_seen: null, offline_since: null }, last)).toEqual({
      online: false,
      last_seen: null,
      offline_since: null,
    });
  });

  it('an agent key of an unregistered name gets 409 on goodbye; a user token is refused', async () => {
    const k = await api<{ key: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'ghost',
    });
    expect((await api(gw, 'POST', '/agent/offline', k.body.key, {})).status).toBe(409);
    expect((await api(gw, 'POST', '/agent/offline', alice, {})).status).toBe(403);
  });
});
