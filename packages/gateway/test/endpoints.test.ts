import { Writable } from 'node:stream';
import { ENDPOINT_IDS, endpoint } from '@agentmail/protocol';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { checkEvent } from '../src/answer-check.js';
import { buildApp } from '../src/index.js';
import { WEB_ROUTES } from '../src/routes/web.js';
import { addAgent, api, startGateway, type TestGateway, tempDir } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** Eleven allowed models, written straight into the store: more than a heartbeat answer may carry (≤10, G-27). */
async function overfullSelection(g: TestGateway): Promise<void> {
  await g.app.gateway.db
    .insertInto('allowed_models')
    .values(Array.from({ length: 11 }, (_, i) => ({ platform: 'pi', position: i, model_key: `p/m${i}` })))
    .execute();
}

describe('routes come from the endpoint table (protocol ENDPOINTS)', () => {
  it('the Fastify route list is exactly the table (plus the HEAD twin of each GET) and the declared web files', async () => {
    const seen: string[] = [];
    const app = await buildApp(
      { dataDir: tempDir(), logLevel: 'silent', sweepTimer: false },
      { onRoute: (r) => seen.push(`${r.method} ${r.url}`) },
    );
    await app.close();
    const expected = ENDPOINT_IDS.flatMap((id) => {
      const e = endpoint(id);
      return e.method === 'GET' ? [`GET ${e.path}`, `HEAD ${e.path}`] : [`${e.method} ${e.path}`];
    });
    const web = WEB_ROUTES.flatMap((path) => [`GET ${path}`, `HEAD ${path}`]);
    expect(seen.sort()).toEqual([...expected, ...web].sort());
  });

  it('web file routes are GET only, outside the API, and only the declared ones pass the guard', async () => {
    for (const path of WEB_ROUTES) {
      expect(path.startsWith('/api/'), path).toBe(false);
      expect(ENDPOINT_IDS.some((id) => endpoint(id).path === path)).toBe(false);
    }
    const app = await buildApp({ dataDir: tempDir(), logLevel: 'silent', sweepTimer: false, webDir: false });
    onTestFinished(() => app.close());
    const route = (method: 'GET' | 'POST', url: string) => () =>
      app.route({ method, url, config: { web: true }, handler: async () => ({}) });
    expect(route('GET', '/api/v1/shadow')).toThrow(/route GET \/api\/v1\/shadow is not registered/);
    expect(route('GET', '/other/*')).toThrow(/route GET \/other\/\* is not registered/);
    expect(route('POST', '/')).toThrow(/route POST \/ is not registered/);
    expect(route('GET', '/')).not.toThrow();
  });

  it('a route registered outside the table is refused at once, naming it and the fix', async () => {
    const app = await buildApp({ dataDir: tempDir(), logLevel: 'silent', sweepTimer: false });
    onTestFinished(() => app.close());
    expect(() => app.get('/api/v1/secret', async () => ({}))).toThrow(
      /route GET \/api\/v1\/secret is not registered from the endpoint table: add it to ENDPOINTS/,
    );
    expect(() =>
      app.route({
        method: 'POST',
        url: '/api/v1/mail/inbox',
        config: { endpoint: 'inbox' },
        handler: async () => ({}),
      }),
    ).toThrow(
      /route POST \/api\/v1\/mail\/inbox is not registered from the endpoint table \(it claims "inbox"\)/,
    );
  });
});

describe('response check (checkResponses, on in every Gateway test)', () => {
  it('an answer that breaks its schema is a 500 naming the endpoint and the field, logged as an error', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    gw = await startGateway({ logLevel: 'error' }, { logStream });
    const key = await addAgent(gw, 'pi');
    await overfullSelection(gw);
    const r = await api<Record<string, unknown>>(gw, 'POST', '/agent/heartbeat', key, {});
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({
      error: 'internal',
      code: 'AM_GW_RESPONSE_INVALID',
      endpoint: 'heartbeat',
      field: 'allowed_models',
    });
    expect(String(r.body.detail)).toMatch(/field "allowed_models": must be at most 10 items/);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 50,
        code: 'AM_GW_RESPONSE_INVALID',
        endpoint: 'heartbeat',
        field: 'allowed_models',
      }),
    );
  });

  it('is off by default (production): the same answer goes out unchecked', async () => {
    gw = await startGateway({ checkResponses: false });
    const key = await addAgent(gw, 'pi');
    await overfullSelection(gw);
    const r = await api<{ allowed_models: string[] }>(gw, 'POST', '/agent/heartbeat', key, {});
    expect(r.status).toBe(200);
    expect(r.body.allowed_models).toHaveLength(11);
  });

  it('events are checked before they are stored: unknown type, wrong or undeclared field', () => {
    const mail = {
      mail_id: 'm1',
      session_id: 's1',
      from_name: 'alice',
      from_human: true,
      subject: 'hi',
      in_reply_to: '',
    };
    expect(() => checkEvent('user:u1', 'new_mail', mail)).not.toThrow();
    const fields = (stream: `user:${string}` | `agent:${string}`, type: string, payload: unknown) => {
      try {
        checkEvent(stream, type, payload);
      } catch (err) {
        return { code: (err as { code: string }).code, ...(err as { extra: object }).extra };
      }
      return undefined;
    };
    expect(fields('user:u1', 'new_mail', { ...mail, from_human: 'yes' })).toEqual({
      code: 'AM_GW_RESPONSE_INVALID',
      endpoint: 'meEvents',
      event: 'new_mail',
      field: 'from_human',
    });
    expect(fields('user:u1', 'new_mail', { ...mail, body: 'leak' })).toMatchObject({ field: 'body' });
    expect(fields('agent:pi', 'permission_request', {})).toMatchObject({ endpoint: 'events', field: '' });
  });
});
