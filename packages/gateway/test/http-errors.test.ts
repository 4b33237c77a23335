/**
 * Regressions of the G-13 error shape: Fastify's own errors (bad URL, a too long id, a JSON body
 * sent as text/plain, a body over the limit, an unknown route) bypassed `{error, detail,
 * suggestion}` or echoed huge inputs; the rate limits did not say when to retry; a client abort
 * was logged as a server error.
 */
import { connect } from 'node:net';
import { MAIL_BODY_MAX_CHARS, SendMailResponse } from '@agentmail/protocol';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

/** A pino destination that keeps the lines and lets a test wait for one. */
function logCollector() {
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  return {
    lines,
    stream: {
      write: (line: string) => {
        lines.push(JSON.parse(line) as Record<string, unknown>);
        for (const w of [...waiters]) w();
      },
    },
    waitFor: (pred: (l: Record<string, unknown>) => boolean, timeoutMs = 5_000) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const check = () => {
          const hit = lines.find(pred);
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such log line; got ${JSON.stringify(lines.map((l) => l.msg))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}

const logs = logCollector();
let gw: TestGateway;
let pi: string;
beforeAll(async () => {
  gw = await startGateway({ logLevel: 'debug' }, { logStream: logs.stream });
  pi = await addAgent(gw, 'pi');
});
afterAll(async () => {
  await gw.close();
});

async function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const r = await request(`${gw.url}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${gw.adminToken}`, ...headers },
    ...(body === undefined ? {} : { body }),
  });
  const text = await r.body.text();
  return {
    status: r.statusCode,
    text,
    body: JSON.parse(text) as Record<string, unknown>,
    headers: r.headers,
  };
}

function expectG13(r: { body: Record<string, unknown>; text: string }, code: string) {
  expect(r.body.code).toBe(code);
  expect(typeof r.body.error).toBe('string');
  expect(typeof r.body.detail).toBe('string');
  expect(r.text).not.toContain('FST_');
  expect(r.body).not.toHaveProperty('statusCode');
  expect(r.body).not.toHaveProperty('message');
}

describe("Fastify's own errors in the G-13 shape", () => {
  it('a URL that does not decode (%ff) is a 400', async () => {
    const r = await raw('GET', '/api/v1/me/mail/%ff');
    expect(r.status).toBe(400);
    expectG13(r, 'AM_GW_BAD_REQUEST');
    expect(r.body.error).toBe('invalid_request');
    expect(String(r.body.suggestion)).toContain('percent-encode');
  });

  it('a 5000-character id is a 414 that does not echo it', async () => {
    const r = await raw('GET', `/api/v1/me/mail/${'x'.repeat(5000)}`);
    expect(r.status).toBe(414);
    expectG13(r, 'AM_GW_URI_TOO_LONG');
    expect(r.text.length).toBeLessThan(600);
    expect(r.body.max_chars).toBe(100);
  });

  it('JSON sent as text/plain is a 415 naming the content type (docs/errors.md)', async () => {
    const r = await raw('POST', '/api/v1/admin/users', { 'content-type': 'text/plain' }, '{"name":"carol"}');
    expect(r.status).toBe(415);
    expectG13(r, 'AM_GW_UNSUPPORTED_MEDIA_TYPE');
    expect(String(r.body.detail)).toContain('"text/plain"');
    expect(String(r.body.suggestion)).toContain('application/json');
  });

  it('a huge content type is cut, not echoed', async () => {
    const type = `text/${'y'.repeat(5000)}`;
    const r = await raw('POST', '/api/v1/admin/users', { 'content-type': type }, '{}');
    expect(r.status).toBe(415);
    expect(r.text.length).toBeLessThan(800);
    expect(String(r.body.detail)).toContain('(5005 characters)');
  });

  it('a body over the limit is a 413 that names the limit in bytes', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) });
    const r = await raw('POST', '/api/v1/admin/users', { 'content-type': 'application/json' }, big);
    expect(r.status).toBe(413);
    expectG13(r, 'AM_GW_PAYLOAD_TOO_LARGE');
    expect(String(r.body.detail)).toContain('2097152 bytes');
    expect(r.body.max_bytes).toBe(2097152);
  });

  it('regression: a mail body has one limit: a body within it is never refused by the request size', async () => {
    // Before, a body of 1,000,000 characters was refused by the 2 MiB request limit when its
    // characters took more than two bytes (a 413 naming bytes), and a shorter one by the schema.
    const key = await api<{ key: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'big',
    });
    await api(gw, 'POST', '/agent/register', key.body.key, { name: 'big', platform: 'pi' });
    const person = await api<{ token: string }>(gw, 'POST', '/admin/users', gw.adminToken, {
      name: 'writer',
    });
    const send = (body: string) =>
      raw(
        'POST',
        '/api/v1/me/mail/send',
        { 'content-type': 'application/json', authorization: `Bearer ${person.body.token}` },
        JSON.stringify({ to: 'big@/w.new', subject: 's', body }),
      );
    // 1,000,000 characters of three UTF-8 bytes each: 3 MB of JSON.
    expect((await send('界'.repeat(MAIL_BODY_MAX_CHARS))).status).toBe(200);
    const over = await send('界'.repeat(MAIL_BODY_MAX_CHARS + 1));
    expect(over.status).toBe(400);
    expect(String(over.body.detail)).toContain(String(MAIL_BODY_MAX_CHARS));
    // A request too large for any body names the body limit too.
    const huge = await send('x'.repeat(9 * 1024 * 1024));
    expect(huge.status).toBe(413);
    expect(String(huge.body.detail)).toContain(`at most ${MAIL_BODY_MAX_CHARS} characters`);
    expect(huge.body.max_chars).toBe(MAIL_BODY_MAX_CHARS);
  });

  it('an unknown route is a 404 that does not echo a huge path', async () => {
    const r = await raw('GET', `/api/v1/nope/${'z'.repeat(5000)}/x`);
    expect(r.status).toBe(404);
    expectG13(r, 'AM_GW_NOT_FOUND');
    expect(r.text.length).toBeLessThan(600);
  });
});

describe('rate limits say when to retry', () => {
  it('AM_GW_RATE_LIMIT: the seconds are in the suggestion and in retry-after', async () => {
    const g = await startGateway({ requestsPerMinute: 2 });
    try {
      for (let i = 0; i < 2; i++)
        expect((await api(g, 'GET', '/admin/users', g.adminToken)).status).toBe(200);
      const r = await request(`${g.url}/api/v1/admin/users`, {
        headers: { authorization: `Bearer ${g.adminToken}` },
      });
      const body = (await r.body.json()) as Record<string, unknown>;
      expect(r.statusCode).toBe(429);
      expect(body.code).toBe('AM_GW_RATE_LIMIT');
      const m = /retry in (\d+) s/.exec(String(body.suggestion));
      expect(m, String(body.suggestion)).not.toBeNull();
      expect(Number(m?.[1])).toBeGreaterThan(0);
      expect(r.headers['retry-after']).toBe(m?.[1]);
    } finally {
      await g.close();
    }
  });

  it('AM_GW_SESSION_RATE_LIMIT (G-34) sends retry-after too: when the oldest session leaves the hour', async () => {
    let now = 1_000_000_000_000;
    const g = await startGateway({ newSessionsPerHour: 1, clock: () => now });
    try {
      await addAgent(g, 'pi');
      const alice = await addUser(g, 'alice');
      const first = await api(g, 'POST', '/me/mail/send', alice, {
        to: 'pi@/a.new',
        subject: 's',
        body: 'b',
      });
      expect(SendMailResponse.parse(first.body).status).toBe('sent');
      now += 600_000; // ten minutes later: 50 minutes to go
      const r = await request(`${g.url}/api/v1/me/mail/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ to: 'pi@/b.new', subject: 's', body: 'b' }),
      });
      const body = (await r.body.json()) as Record<string, unknown>;
      expect(r.statusCode).toBe(429);
      expect(body.code).toBe('AM_GW_SESSION_RATE_LIMIT');
      expect(r.headers['retry-after']).toBe('3000');
      expect(String(body.suggestion)).toContain('retry in 3000 s');
    } finally {
      await g.close();
    }
  });
});

describe('a client that goes away', () => {
  it('an upload aborted mid-body is logged at info, not as a failed request', async () => {
    const port = Number(new URL(gw.url).port);
    const socket = connect(port, '127.0.0.1');
    const B = 'b0undary';
    socket.write(
      `POST /api/v1/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pi}\r\n` +
        `Content-Type: multipart/form-data; boundary=${B}\r\nContent-Length: 1000000\r\n\r\n` +
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n${'x'.repeat(70_000)}`,
    );
    // The request reached the server (debug logs every incoming request): now go away.
    const incoming = await logs.waitFor(
      // Fastify's request line: the one with a `req` object (its message text is Fastify's).
      (l) => l.req !== undefined && String((l.req as { url?: string }).url) === '/api/v1/attachments',
    );
    socket.destroy();
    const outcome = await logs.waitFor(
      (l) => l.reqId === incoming.reqId && typeof l.code === 'string' && l.req === undefined,
    );
    expect(outcome.level).toBeLessThan(50);
    expect(logs.lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});
