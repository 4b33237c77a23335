import {
  AgentKeysResponse,
  AllowedModelsResponse,
  ContactsResponse,
  HeartbeatResponse,
  ResetTokenResponse,
  SuggestResponse,
} from '@agentmail/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('heartbeat (G-25..G-27)', () => {
  it('keeps the agent online for one window after the last heartbeat', async () => {
    let now = Date.now();
    gw = await startGateway({ clock: () => now });
    const pi = await addAgent(gw, 'pi');
    const contacts = async () =>
      ContactsResponse.parse((await api(gw as TestGateway, 'GET', '/agent/contacts', pi)).body).contacts.find(
        (c) => c.name === 'pi',
      );
    expect((await contacts())?.online).toBe(false);
    await api(gw, 'POST', '/agent/heartbeat', pi, { workspaces: [{ path: '/srv/app' }] });
    expect((await contacts())?.online).toBe(true);
    expect((await contacts())?.workspaces).toEqual(['/srv/app']);
    now += 91_000;
    expect((await contacts())?.online).toBe(false);
  });

  it('an omitted list keeps the stored one; an empty list clears it', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const models = [{ key: 'deepseek/deepseek-chat' }, { key: 'openrouter/anthropic/claude' }];
    await api(gw, 'POST', '/agent/heartbeat', pi, { models, sessions: [{ platform_id: 'p1', path: '/w' }] });
    const stored = async () =>
      gw?.app.gateway.db
        .selectFrom('agents')
        .select(['models', 'platform_sessions'])
        .where('name', '=', 'pi')
        .executeTakeFirstOrThrow();
    await api(gw, 'POST', '/agent/heartbeat', pi, {});
    expect(JSON.parse((await stored())?.models ?? '[]')).toHaveLength(2);
    expect(JSON.parse((await stored())?.platform_sessions ?? '[]')).toHaveLength(1);
    await api(gw, 'POST', '/agent/heartbeat', pi, { models: [] });
    expect(JSON.parse((await stored())?.models ?? '[]')).toHaveLength(0);
    expect(JSON.parse((await stored())?.platform_sessions ?? '[]')).toHaveLength(1);
  });

  it('caps the snapshot (≤200) and catalogue (≤300)', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const sessions = Array.from({ length: 201 }, (_, i) => ({ platform_id: `p${i}`, path: '/w' }));
    const r = await api(gw, 'POST', '/agent/heartbeat', pi, { sessions });
    expect(r.status).toBe(400);
    expect(String(r.body.detail)).toContain('sessions');
  });

  it('answers allowed_models, so an admin change takes effect on the next heartbeat; stale models stay selected', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi', 'pi');
    await api(gw, 'POST', '/agent/heartbeat', pi, {
      models: [{ key: 'deepseek/deepseek-chat' }, { key: 'openrouter/anthropic/claude-x' }],
    });
    let hb = HeartbeatResponse.parse((await api(gw, 'POST', '/agent/heartbeat', pi, {})).body);
    expect(hb.allowed_models).toEqual([]);
    const put = await api(gw, 'PUT', '/admin/platforms/pi/models', gw.adminToken, {
      models: ['openrouter/anthropic/claude-x', 'deepseek/deepseek-chat'],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    hb = HeartbeatResponse.parse((await api(gw, 'POST', '/agent/heartbeat', pi, {})).body);
    expect(hb.allowed_models).toEqual(['openrouter/anthropic/claude-x', 'deepseek/deepseek-chat']);
    // the model vanishes from the catalogue: still selected, shown stale
    await api(gw, 'POST', '/agent/heartbeat', pi, { models: [{ key: 'deepseek/deepseek-chat' }] });
    const view = AllowedModelsResponse.parse(
      (await api(gw, 'GET', '/admin/platforms/pi/models', gw.adminToken)).body,
    );
    expect(view.models).toEqual([
      { key: 'openrouter/anthropic/claude-x', stale: true },
      { key: 'deepseek/deepseek-chat', stale: false },
    ]);
    hb = HeartbeatResponse.parse((await api(gw, 'POST', '/agent/heartbeat', pi, {})).body);
    expect(hb.allowed_models).toHaveLength(2);
    // more than 10 is refused
    const tooMany = await api(gw, 'PUT', '/admin/platforms/pi/models', gw.adminToken, {
      models: Array.from({ length: 11 }, (_, i) => `p/m${i}`),
    });
    expect(tooMany.status).toBe(400);
  });

  it('regression: nothing is stale before any agent reported a catalogue; the view shows the catalogue beside the selection', async () => {
    gw = await startGateway();
    const a = await addAgent(gw, 'pi-a', 'pi');
    const b = await addAgent(gw, 'pi-b', 'pi');
    const set = await api(gw, 'PUT', '/admin/platforms/pi/models', gw.adminToken, {
      models: ['scripted/nonexistent', 'scripted/echo'],
    });
    // No catalogue yet: nothing is known, so nothing is flagged (it used to say "stale").
    expect(AllowedModelsResponse.parse(set.body)).toEqual({
      platform: 'pi',
      models: [
        { key: 'scripted/nonexistent', stale: false },
        { key: 'scripted/echo', stale: false },
      ],
      catalogue: [],
      reported_by: [],
    });
    await api(gw, 'POST', '/agent/heartbeat', a, { models: [{ key: 'scripted/echo', name: 'Echo' }] });
    await api(gw, 'POST', '/agent/heartbeat', b, { models: [{ key: 'scripted/echo' }, { key: 'x/y' }] });
    const view = AllowedModelsResponse.parse(
      (await api(gw, 'GET', '/admin/platforms/pi/models', gw.adminToken)).body,
    );
    expect(view).toEqual({
      platform: 'pi',
      models: [
        { key: 'scripted/nonexistent', stale: true },
        { key: 'scripted/echo', stale: false },
      ],
      catalogue: [
        { key: 'scripted/echo', name: 'Echo', agents: ['pi-a', 'pi-b'] },
        { key: 'x/y', name: '', agents: ['pi-b'] },
      ],
      reported_by: ['pi-a', 'pi-b'],
    });
  });

  it('heartbeat before register is a 409 that says to register', async () => {
    gw = await startGateway();
    const k = await api<{ key: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'late',
    });
    const r = await api(gw, 'POST', '/agent/heartbeat', k.body.key, {});
    expect(r.status).toBe(409);
    expect(String(r.body.suggestion)).toContain('register');
  });
});

describe('admin and directory', () => {
  it('users: create (token once), list, names unique across people and agents', async () => {
    gw = await startGateway();
    await addAgent(gw, 'pi');
    await addUser(gw, 'carol');
    expect((await api(gw, 'POST', '/admin/users', gw.adminToken, { name: 'carol' })).status).toBe(409);
    expect((await api(gw, 'POST', '/admin/users', gw.adminToken, { name: 'pi' })).status).toBe(409);
    const list = await api<{ users: { name: string }[] }>(gw, 'GET', '/admin/users', gw.adminToken);
    expect(list.body.users.map((u) => u.name)).toEqual(['admin', 'carol']);
  });

  it('agent keys are listed (id, name, created, last used, revoked; never the key)', async () => {
    let now = Date.parse('2026-12-01T08:00:00.000Z');
    gw = await startGateway({ clock: () => now });
    const pi = await addAgent(gw, 'pi');
    now += 30_000;
    await api(gw, 'POST', '/agent/heartbeat', pi, {});
    const idle = await api<{ key_id: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'oc',
    });
    await api(gw, 'DELETE', `/admin/agent-keys/${idle.body.key_id}`, gw.adminToken);
    const list = AgentKeysResponse.parse((await api(gw, 'GET', '/admin/agent-keys', gw.adminToken)).body);
    expect(list.keys.map((k) => [k.agent_name, k.last_used_at, k.revoked_at === null])).toEqual([
      // register (at 08:00:00) counted; the heartbeat 30 s later is within the same minute's resolution
      ['pi', '2026-12-01T08:00:00.000Z', true],
      ['oc', null, false],
    ]);
    expect(JSON.stringify(list)).not.toContain(pi);
    now += 61_000;
    await api(gw, 'POST', '/agent/heartbeat', pi, {});
    const later = AgentKeysResponse.parse((await api(gw, 'GET', '/admin/agent-keys', gw.adminToken)).body);
    expect(later.keys[0]?.last_used_at).toBe('2026-12-01T08:01:31.000Z');
    const alice = await addUser(gw, 'alice');
    expect((await api(gw, 'GET', '/admin/agent-keys', alice)).status).toBe(403);
  });

  it("a user's token is reset: the new one works, every older one is refused", async () => {
    gw = await startGateway();
    const old = await addUser(gw, 'alice');
    const r = await api(gw, 'POST', '/admin/users/alice/token', gw.adminToken);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const reset = ResetTokenResponse.parse(r.body);
    expect(reset).toMatchObject({ name: 'alice', revoked_tokens: 1 });
    expect((await api(gw, 'GET', '/me/inbox', old)).status).toBe(401);
    expect((await api(gw, 'GET', '/me/inbox', reset.token)).status).toBe(200);
    const missing = await api(gw, 'POST', '/admin/users/nobody/token', gw.adminToken);
    expect(missing.status).toBe(404);
  });

  it('register is idempotent', async () => {
    gw = await startGateway();
    const k = await api<{ key: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'pi',
    });
    const a = await api(gw, 'POST', '/agent/register', k.body.key, { name: 'pi', platform: 'pi' });
    const b = await api(gw, 'POST', '/agent/register', k.body.key, { name: 'pi', platform: 'pi' });
    expect(a.body.created).toBe(true);
    expect(b.body.created).toBe(false);
  });

  it('suggest lists sessions, announced workspaces and people', async () => {
    gw = await startGateway();
    const pi = await addAgent(gw, 'pi');
    const alice = await addUser(gw, 'alice');
    await api(gw, 'POST', '/agent/heartbeat', pi, { workspaces: [{ path: '/srv/app' }] });
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/srv/app.new', subject: 'Build it', body: 'x' });
    const s = SuggestResponse.parse(
      (await api(gw, 'GET', '/agent/contacts/suggest?name=pi&path=/srv', pi)).body,
    );
    const addresses = s.suggestions.map((x) => x.address);
    expect(addresses).toContain('pi@/srv/app.pi-build-it');
    expect(addresses).toContain('pi@/srv/app.new');
    const people = SuggestResponse.parse((await api(gw, 'GET', '/agent/contacts/suggest?name=ali', pi)).body);
    expect(people.suggestions.map((x) => x.address)).toEqual(['alice@.']);
  });
});

describe('GET /me/contacts (person token)', () => {
  it('answers what agents see: agents with online and last_seen, then people; agent keys are refused', async () => {
    let now = Date.parse('2026-11-29T22:00:00.000Z');
    gw = await startGateway({ clock: () => now });
    const pi = await addAgent(gw, 'pi');
    await addAgent(gw, 'oc', 'opencode');
    const alice = await addUser(gw, 'alice');
    await api(gw, 'POST', '/agent/heartbeat', pi, { workspaces: [{ path: '/srv/app' }] });
    now += 1_000;
    const res = await api(gw, 'GET', '/me/contacts', alice);
    expect(res.status).toBe(200);
    const mine = ContactsResponse.parse(res.body);
    expect(mine).toEqual(ContactsResponse.parse((await api(gw, 'GET', '/agent/contacts', pi)).body));
    expect(mine.contacts.map((c) => [c.name, c.kind, c.online, c.last_seen])).toEqual([
      ['oc', 'agent', false, null],
      ['pi', 'agent', true, '2026-11-29T22:00:00.000Z'],
      ['admin', 'person', false, null],
      ['alice', 'person', false, null],
    ]);
    expect((await api(gw, 'GET', '/me/contacts', pi)).status).toBe(403); // G-12: agent keys never reach /me
    expect((await api(gw, 'GET', '/me/contacts', undefined)).status).toBe(401);
  });
});
