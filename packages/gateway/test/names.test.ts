/**
 * Regression: `POST /admin/users` and `POST /admin/agent-keys` took names that break addressing
 * (`a@b`, spaces, `/`, empty), and one such row turned contacts and suggestions into a 500 for
 * everyone. Names follow protocol's `Name` rule; stored rows that do not form an address are
 * skipped and logged.
 */
import {
  ContactsResponse,
  MailResponse,
  parseAddress,
  SendMailResponse,
  SuggestResponse,
} from '@agentmail/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

const logLines: Array<Record<string, unknown>> = [];
let gw: TestGateway;
let pi: string;
beforeAll(async () => {
  gw = await startGateway(
    { logLevel: 'warn' },
    { logStream: { write: (line: string) => void logLines.push(JSON.parse(line)) } },
  );
  pi = await addAgent(gw, 'pi');
});
afterAll(async () => {
  await gw.close();
});

const BAD_NAMES = ['a@b', '/', 'a/b', 'a b', 'a\tb', '', ' ', '-x', '.x', 'x\n'];

describe('names are validated like an agent name (protocol Name)', () => {
  it.each(BAD_NAMES)('POST /admin/users refuses %j with a 400 naming the field', async (name) => {
    const r = await api(gw, 'POST', '/admin/users', gw.adminToken, { name });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('AM_GW_BAD_REQUEST');
    expect(r.body.field).toBe('name');
  });

  it.each(BAD_NAMES)('POST /admin/agent-keys refuses %j with a 400 naming the field', async (name) => {
    const r = await api(gw, 'POST', '/admin/agent-keys', gw.adminToken, { agent_name: name });
    expect(r.status).toBe(400);
    expect(r.body.field).toBe('agent_name');
  });

  it('nothing was stored for a refused name', async () => {
    const users = await gw.app.gateway.db.selectFrom('users').select('name').execute();
    expect(users.map((u) => u.name).sort()).toEqual(['admin']);
    const keys = await gw.app.gateway.db.selectFrom('agent_keys').select('agent_name').execute();
    expect(keys.map((k) => k.agent_name)).toEqual(['pi']);
  });

  it('a "." in a name is fine: the name ends at the first "@"', async () => {
    const token = await addUser(gw, 'x.y');
    await addAgent(gw, 'a.b');
    expect(parseAddress('a.b@/srv/app.new')).toEqual({ name: 'a.b', path: '/srv/app', session: 'new' });
    const toAgent = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', token, { to: 'a.b@/srv/app.new', subject: 'dots', body: 'x' }))
        .body,
    );
    if (toAgent.status !== 'sent') throw new Error('not sent');
    expect(toAgent.address).toBe('a.b@/srv/app.a-b-dots');
    const toPerson = await api(gw, 'POST', '/mail/send', pi, { to: 'x.y', subject: 'hi', body: 'b' });
    expect(toPerson.status, JSON.stringify(toPerson.body)).toBe(200);
    const m = MailResponse.parse(
      (await api(gw, 'GET', `/me/mail/${String(toPerson.body.mail_id)}`, token)).body,
    ).mail;
    expect(m.self_address).toBe('x.y@.');
    expect(parseAddress(m.self_address).name).toBe('x.y');
  });
});

describe('a stored row that does not form an address', () => {
  it('is skipped and logged; contacts and suggestions still answer', async () => {
    const db = gw.app.gateway.db;
    // rows written before names were validated
    await db
      .insertInto('users')
      .values({ id: 'u_legacy1', name: 'bad name', is_admin: 0, created_at: 1 })
      .execute();
    await db
      .insertInto('users')
      .values({ id: 'u_legacy2', name: 'x@y', is_admin: 0, created_at: 1 })
      .execute();
    await db
      .insertInto('agents')
      .values({
        name: 'old agent',
        platform: 'pi',
        registered_at: 1,
        last_seen: null,
        mode_enforcement: null,
        workspaces: '[]',
        platform_sessions: '[]',
        models: '[]',
        meta: '{}',
      })
      .execute();
    // and a workspace path that can not be part of an address, through the API
    expect(
      (
        await api(gw, 'POST', '/agent/heartbeat', pi, {
          workspaces: [{ path: '/srv/a\u0001b' }, { path: '/srv/ok' }],
        })
      ).status,
    ).toBe(200);
    logLines.length = 0;

    const contacts = await api(gw, 'GET', '/agent/contacts', pi);
    expect(contacts.status, JSON.stringify(contacts.body)).toBe(200);
    const names = ContactsResponse.parse(contacts.body).contacts.map((c) => c.name);
    expect(names).toContain('pi');
    expect(names).toContain('x.y');
    expect(names).not.toContain('bad name');
    expect(names).not.toContain('x@y');
    expect(names).not.toContain('old agent');

    const suggest = await api(gw, 'GET', '/agent/contacts/suggest?name=', pi);
    expect(suggest.status, JSON.stringify(suggest.body)).toBe(200);
    const addresses = SuggestResponse.parse(suggest.body).suggestions.map((s) => s.address);
    expect(addresses).toContain('pi@/srv/ok.new');
    expect(addresses.some((a) => a.includes('\u0001'))).toBe(false);

    const skipped = logLines.filter((l) => l.event === 'directory_entry_skipped');
    expect(skipped.map((l) => l.name)).toEqual(expect.arrayContaining(['bad name', 'x@y', 'old agent']));
    expect(skipped.some((l) => l.path === '/srv/a\u0001b')).toBe(true);
    expect(skipped.every((l) => l.level === 40)).toBe(true);
  });
});
