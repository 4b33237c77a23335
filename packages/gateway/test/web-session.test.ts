import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway, tempDir } from './helpers.js';

// The web mailbox's session (SPEC G-12, H-4): sign in with a user token → an HttpOnly,
// SameSite=Strict cookie; every cookie-authenticated change must come from the Gateway's own
// origin; agent keys never get a session and agent routes never read the cookie.

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const ORIGIN = 'http://gw.test';
const HOST = 'gw.test';

async function signIn(app: FastifyInstance, token: string, origin: string | undefined = ORIGIN) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/web/session',
    headers: { host: HOST, 'content-type': 'application/json', ...(origin ? { origin } : {}) },
    payload: JSON.stringify({ token }),
  });
}

function cookieOf(res: { headers: Record<string, unknown> }): string {
  const set = String(res.headers['set-cookie'] ?? '');
  return set.split(';')[0] ?? '';
}

describe('web session', () => {
  it('sign-in sets an HttpOnly, SameSite=Strict cookie (not Secure over http); the session works on person routes', async () => {
    gw = await startGateway();
    const token = await addUser(gw, 'ann');
    const res = await signIn(gw.app, token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'ann', admin: false });
    const set = String(res.headers['set-cookie']);
    expect(set).toMatch(/^am_session=ams_[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/);
    const who = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/web/session',
      headers: { host: HOST, cookie: cookieOf(res) },
    });
    expect(who.json()).toMatchObject({ name: 'ann', admin: false, expires_at: expect.any(String) });
    const inbox = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/me/inbox',
      headers: { host: HOST, cookie: cookieOf(res) },
    });
    expect(inbox.statusCode).toBe(200);
  });

  it('behind an HTTPS origin the cookie is Secure and the Origin must be that origin', async () => {
    gw = await startGateway({ webOrigin: 'https://mail.example.com/' });
    const token = await addUser(gw, 'ann');
    expect((await signIn(gw.app, token)).statusCode, 'http://gw.test is not the public origin').toBe(403);
    const res = await signIn(gw.app, token, 'https://mail.example.com');
    expect(String(res.headers['set-cookie'])).toContain('; Secure');
  });

  it('agent keys never sign in; a wrong token names the field; agent routes ignore the cookie', async () => {
    gw = await startGateway();
    const key = await addAgent(gw, 'pi');
    const token = await addUser(gw, 'ann');
    const asAgent = await signIn(gw.app, key);
    expect(asAgent.statusCode).toBe(403);
    expect(asAgent.json()).toMatchObject({ code: 'AM_GW_FORBIDDEN', given: 'agent_key', field: 'token' });
    expect(asAgent.headers['set-cookie']).toBeUndefined();
    const wrong = await signIn(gw.app, 'amu_nope');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().detail).toContain('field "token"');
    const cookie = cookieOf(await signIn(gw.app, token));
    const agentRoute = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/mail/inbox',
      headers: { host: HOST, cookie },
    });
    expect(agentRoute.statusCode, 'a web session is no agent key').toBe(401);
  });

  it('CSRF: a change through the cookie needs the own Origin; a token in the header needs none', async () => {
    gw = await startGateway();
    await addAgent(gw, 'pi');
    const token = await addUser(gw, 'ann');
    const cookie = cookieOf(await signIn(gw.app, token));
    const send = (headers: Record<string, string>) =>
      gw?.app.inject({
        method: 'POST',
        url: '/api/v1/me/mail/send',
        headers: { host: HOST, 'content-type': 'application/json', ...headers },
        payload: JSON.stringify({ to: 'pi@.', subject: 's', body: 'b' }),
      });
    const evil = await send({ cookie, origin: 'http://gw.test:9999' });
    expect(evil?.statusCode).toBe(403);
    expect(evil?.json()).toMatchObject({ code: 'AM_GW_ORIGIN_REFUSED' });
    expect((await send({ cookie }))?.statusCode, 'no Origin: refused (fail closed)').toBe(403);
    expect((await send({ cookie, origin: ORIGIN }))?.statusCode).toBe(200);
    expect((await send({ authorization: `Bearer ${token}` }))?.statusCode, 'the CLI sends no Origin').toBe(
      200,
    );
    expect((await signIn(gw.app, token, 'http://evil.test')).statusCode, 'no login CSRF').toBe(403);
    const get = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/me/inbox',
      headers: { host: HOST, cookie, origin: 'http://evil.test' },
    });
    expect(get.statusCode, 'reads are safe methods (and CORS keeps their answers from other origins)').toBe(
      200,
    );
  });

  it('sessions expire; sign-out ends one; resetting the token ends them all', async () => {
    let now = Date.UTC(2026, 0, 1);
    gw = await startGateway({ clock: () => now, webSessionMaxAgeMs: 60_000 });
    const token = await addUser(gw, 'ann');
    const who = (cookie: string) =>
      gw?.app.inject({ method: 'GET', url: '/api/v1/web/session', headers: { host: HOST, cookie } });
    const first = cookieOf(await signIn(gw.app, token));
    now += 61_000;
    const expired = await who(first);
    expect(expired?.statusCode).toBe(401);
    expect(expired?.json()).toMatchObject({ session: 'expired', suggestion: 'sign in again' });

    const second = cookieOf(await signIn(gw.app, token));
    const out = await gw.app.inject({
      method: 'DELETE',
      url: '/api/v1/web/session',
      headers: { host: HOST, cookie: second, origin: ORIGIN },
    });
    expect(out.json()).toEqual({ status: 'signed_out' });
    expect(String(out.headers['set-cookie'])).toMatch(/^am_session=; Max-Age=0;/);
    expect((await who(second))?.statusCode).toBe(401);

    const third = cookieOf(await signIn(gw.app, token));
    const reset = await api<{ token: string; revoked_tokens: number }>(
      gw,
      'POST',
      '/admin/users/ann/token',
      gw.adminToken,
    );
    expect(reset.body.revoked_tokens).toBe(1);
    expect((await who(third))?.statusCode, 'the reset ended the session').toBe(401);
    expect((await signIn(gw.app, token)).statusCode, 'the old token is revoked').toBe(401);
    expect((await signIn(gw.app, reset.body.token)).statusCode).toBe(200);
  });
});

describe('web files', () => {
  it('index.html is revalidated, hashed assets are immutable, both with the strict CSP; a missing build says how to build', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    gw = await startGateway({ webDir: dir });
    const page = await gw.app.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers.etag).toBeDefined();
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    const asset = await gw.app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(String(asset.headers['content-type'])).toContain('javascript');
    expect((await gw.app.inject({ method: 'GET', url: '/assets/nope.js' })).statusCode).toBe(404);
    const outside = await gw.app.inject({ method: 'GET', url: '/assets/..%2Findex.html' });
    expect(outside.statusCode, 'no way out of assets/').toBe(403);
    expect(outside.body).not.toContain('<title>');
    await gw.close();

    gw = await startGateway({ webDir: tempDir() });
    const missing = await gw.app.inject({ method: 'GET', url: '/' });
    expect(missing.statusCode).toBe(503);
    expect(missing.body).toContain('pnpm build');
  });

  it('attachments download with a sandboxing CSP, so an uploaded page never runs on the Gateway origin', async () => {
    gw = await startGateway();
    const token = await addUser(gw, 'ann');
    const up = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/me/attachments',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=X' },
      payload:
        '--X\r\nContent-Disposition: form-data; name="file"; filename="x.html"\r\nContent-Type: text/html\r\n\r\n<script>alert(1)</script>\r\n--X--\r\n',
    });
    const id = up.json().attachment.id as string;
    const down = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/me/attachments/${id}`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(String(down.headers['content-security-policy'])).toMatch(/^sandbox/);
    expect(String(down.headers['content-disposition'])).toMatch(/^attachment;/);
    expect(down.headers['x-content-type-options']).toBe('nosniff');
  });
});
