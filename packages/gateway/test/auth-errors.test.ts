import { ErrorBody, HeartbeatResponse, isTransientStatus } from '@agentmail/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let piKey: string;
let aliceToken: string;
beforeAll(async () => {
  gw = await startGateway();
  piKey = await addAgent(gw, 'pi');
  aliceToken = await addUser(gw, 'alice');
});
afterAll(async () => {
  await gw.close();
});

describe('G-12 authentication', () => {
  it('accepts Bearer and the X-Agent-Secret fallback', async () => {
    expect((await api(gw, 'GET', '/mail/inbox', piKey)).status).toBe(200);
    expect(
      (await api(gw, 'GET', '/mail/inbox', undefined, undefined, { 'x-agent-secret': piKey })).status,
    ).toBe(200);
  });

  it('a key used for another name is a 403 naming the bound name', async () => {
    const r = await api(gw, 'POST', '/agent/register', piKey, { name: 'opencode', platform: 'opencode' });
    expect(r.status).toBe(403);
    expect(r.body.bound_name).toBe('pi');
    expect(String(r.body.detail)).toContain('"pi"');
    expect(ErrorBody.safeParse(r.body).success).toBe(true);
  });

  it('stores keys hashed only', async () => {
    const rows = await gw.app.gateway.db.selectFrom('agent_keys').select('key_hash').execute();
    for (const r of rows) expect(r.key_hash).not.toBe(piKey);
  });

  it('human routes are never reachable with an agent key; agent routes refuse user tokens', async () => {
    const me = await api(gw, 'GET', '/me/inbox', piKey);
    expect(me.status).toBe(403);
    expect(me.body.error).toBe('forbidden');
    // A valid credential of the wrong kind is a 403 either way, saying which kind the route needs
    // (was 401 for a user token on an agent route).
    expect(String(me.body.detail)).toMatch(/needs a user token; an agent key was given/);
    const agent = await api(gw, 'GET', '/mail/inbox', aliceToken);
    expect(agent.status).toBe(403);
    expect(agent.body.code).toBe('AM_GW_FORBIDDEN');
    expect(String(agent.body.detail)).toMatch(/needs an agent key; a user token was given/);
    const x = await api(gw, 'GET', '/me/inbox', undefined, undefined, { 'x-agent-secret': piKey });
    expect(x.status).toBe(401);
  });

  it('admin routes need an admin', async () => {
    expect((await api(gw, 'GET', '/admin/users', aliceToken)).status).toBe(403);
    expect((await api(gw, 'GET', '/admin/users', piKey)).status).toBe(403);
    expect((await api(gw, 'GET', '/admin/users', gw.adminToken)).status).toBe(200);
  });

  it('a revoked key stops working', async () => {
    const k = await api<{ key: string; key_id: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'tmp',
    });
    expect(
      (await api(gw, 'POST', '/agent/register', k.body.key, { name: 'tmp', platform: 'pi' })).status,
    ).toBe(200);
    expect((await api(gw, 'DELETE', `/admin/agent-keys/${k.body.key_id}`, gw.adminToken)).status).toBe(200);
    expect((await api(gw, 'GET', '/mail/inbox', k.body.key)).status).toBe(401);
  });

  it('no credential is a 401', async () => {
    expect((await api(gw, 'GET', '/mail/inbox', undefined)).status).toBe(401);
    expect((await api(gw, 'GET', '/me/inbox', 'nonsense')).status).toBe(401);
  });
});

describe('G-10 strict decoding', () => {
  it('unknown field: 400 naming it and listing accepted fields', async () => {
    const r = await api(gw, 'POST', '/agent/register', piKey, { name: 'pi', platform: 'pi', evil: 1 });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
    expect(String(r.body.detail)).toContain('"evil"');
    expect(r.body.accepted_fields).toEqual([
      'name',
      'platform',
      'version',
      'expire_pending',
      'keep_existing',
    ]);
  });

  it('wrong type names the field and the JSON type, never a TS type name', async () => {
    const r = await api(gw, 'POST', '/mail/send', piKey, { to: 'alice', subject: 's', body: 'b', cc: 'bob' });
    expect(r.status).toBe(400);
    expect(String(r.body.detail)).toContain('field "cc": expected array of strings, got string');
    expect(String(r.body.detail)).not.toMatch(/Zod|ZodError|\bany\b/);
  });

  it('empty body, syntax error and truncated JSON are each a 400 with a useful message', async () => {
    const empty = await api(gw, 'POST', '/mail/send', piKey, undefined);
    expect(empty.status).toBe(400);
    expect(String(empty.body.detail)).toContain('empty body');
    const emptyJson = await api(gw, 'POST', '/mail/send', piKey, '');
    expect(emptyJson.status).toBe(400);
    expect(String(emptyJson.body.detail)).toContain('empty body');
    const syntax = await api(gw, 'POST', '/mail/send', piKey, '{"to": "ü",}');
    expect(syntax.status).toBe(400);
    // character 11, byte 12 (ü is two bytes in UTF-8)
    expect(String(syntax.body.detail)).toMatch(/syntax error at byte offset 12/);
    const truncated = await api(gw, 'POST', '/mail/send', piKey, '{"to": "alice", "sub');
    expect(truncated.status).toBe(400);
    expect(String(truncated.body.detail)).toMatch(/truncated JSON at byte offset/);
    expect(truncated.body.accepted_fields).toContain('relay_key');
  });

  it('regression: a syntax error Node reports without a position ({"to": x}) names its byte offset, not "truncated"', async () => {
    // Node 22's JSON.parse says `Unexpected token 'x', "{"to": x}" is not valid JSON`: no position.
    const r = await api(gw, 'POST', '/mail/send', piKey, '{"to": x}');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
    expect(String(r.body.detail)).toContain('JSON syntax error at byte offset 7');
    expect(String(r.body.detail)).not.toContain('truncated');
    expect(r.body.accepted_fields).toContain('from_session_id');
  });

  it('unknown query parameters are refused too', async () => {
    const r = await api(gw, 'GET', '/mail/inbox?colour=red', piKey);
    expect(r.status).toBe(400);
    expect(String(r.body.detail)).toContain('"colour"');
  });

  it('G-11: the heartbeat decodes leniently and names unknown fields', async () => {
    const r = await api(gw, 'POST', '/agent/heartbeat', piKey, { workspaces: [], future_field: { a: 1 } });
    expect(r.status).toBe(200);
    const hb = HeartbeatResponse.parse(r.body);
    expect(hb.unknown_fields).toEqual(['future_field']);
  });
});

describe('G-13 error bodies', () => {
  it('status alone separates retry-later from never', async () => {
    const notFound = await api(gw, 'GET', '/agent/mail/m_nope', piKey);
    expect(notFound.status).toBe(404);
    expect(isTransientStatus(notFound.status)).toBe(false);
    expect(ErrorBody.parse(notFound.body).error).toBe('not_found');
    const noRoute = await api(gw, 'GET', '/api/v1/nope', piKey);
    expect(noRoute.status).toBe(404);
    expect(noRoute.body.error).toBe('not_found');
  });

  it('healthz answers', async () => {
    expect((await api(gw, 'GET', '/healthz', undefined)).body).toEqual({
      status: 'ok',
      version: expect.any(String),
    });
  });

  it('a wrong content type is a 415 JSON error', async () => {
    const r = await api(gw, 'POST', '/mail/send', piKey, 'to=alice', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(r.status).toBe(415);
    expect(r.body.code).toBe('AM_GW_UNSUPPORTED_MEDIA_TYPE');
  });
});
