import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, dispositionFilename, gatewayUrl } from '../../src/client/api-client.js';
import {
  GatewayHttpError,
  GatewayNetworkError,
  type GatewayResponseError,
  parseErrorBody,
} from '../../src/client/api-errors.js';
import { undiciTransport } from '../../src/client/node-transfer.js';
import { PersonApi } from '../../src/client/person-api.js';
import { ERROR_CODES, hasErrorCode } from '../../src/errors.js';
import { attachment, type FakeGateway, fakeGateway } from '../support/fake-gateway.js';
import { thrown, thrownSync } from './support.js';

// The client's own mechanics (URL, auth per endpoint, query, hooks, extend, transports) against a
// loopback stand-in; the same client against the real Gateway is tested in packages/gateway
// (test/client.test.ts) and through the CLI and the testkit.

let gw: FakeGateway;
afterEach(async () => {
  await gw?.close();
});

const INBOX = { mails: [], unread_count: 0, has_more: false };

describe('ApiClient.call (driven by ENDPOINTS)', () => {
  it('method, full path with encoded params, query without undefined values, JSON body, Bearer token', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/prefix/api/v1/me/inbox', () => ({ json: INBOX }));
    gw.on('POST', '/prefix/api/v1/me/permissions/:id/decide', () => ({
      json: { status: 'decided', id: 'p/1', decision: 'approve_once' },
    }));
    const api = new ApiClient({
      baseUrl: `${gw.url}/prefix/`,
      token: 't1',
      headers: { 'user-agent': 'ua/1' },
    });
    expect(await api.call('meInbox', { query: { status: 'all', limit: 3, session_id: undefined } })).toEqual(
      INBOX,
    );
    const decided = await api.call('meDecide', { params: { id: 'p/1' }, body: { decision: 'approve' } });
    expect(decided.decision).toBe('approve_once');
    expect(gw.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /prefix/api/v1/me/inbox',
      'POST /prefix/api/v1/me/permissions/p%2F1/decide',
    ]);
    expect(gw.requests[0]?.query).toEqual({ status: 'all', limit: '3' });
    expect(gw.requests[1]?.json).toEqual({ decision: 'approve' });
    expect(gw.requests[1]?.headers['content-type']).toBe('application/json');
    for (const r of gw.requests) {
      expect(r.headers.authorization).toBe('Bearer t1');
      expect(r.headers['user-agent']).toBe('ua/1');
    }
  });

  it('sends no credential to an auth "none" endpoint, nor without a token', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/healthz', () => ({ json: { status: 'ok', version: '1' } }));
    gw.on('GET', '/api/v1/me/inbox', () => ({ json: INBOX }));
    const api = new ApiClient({ baseUrl: gw.url, token: 'secret' });
    // the health answer is loose: extra fields stay
    expect(await api.call('healthz')).toEqual({ status: 'ok', version: '1' });
    await api.extend({ token: undefined }).call('meInbox');
    expect(gw.requests.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
  });

  it('extend() is immutable: a new client with merged defaults and hooks', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/api/v1/me/inbox', () => ({ json: INBOX }));
    const seen: string[] = [];
    const base = new ApiClient({
      baseUrl: gw.url,
      token: 'a',
      hooks: { beforeRequest: (r) => seen.push(`base ${r.id}`) },
    });
    const other = base.extend({ token: 'b', hooks: { beforeError: () => new Error('mapped') } });
    await base.call('meInbox');
    await other.call('meInbox');
    expect(gw.requests.map((r) => r.headers.authorization)).toEqual(['Bearer a', 'Bearer b']);
    expect(seen).toEqual(['base meInbox', 'base meInbox']);
    expect(base.options.token).toBe('a');
    expect(base.options.hooks?.beforeError).toBeUndefined();
    expect(() => base.extend({ baseUrl: 'ftp://x' })).toThrow(/must start with http:\/\/ or https:\/\//);
  });

  it('beforeRequest can refuse a call before anything is sent; beforeError maps what is thrown', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/api/v1/me/inbox', () => ({
      status: 401,
      json: { error: 'unauthorized', detail: 'no token' },
    }));
    const refusing = new ApiClient({
      baseUrl: gw.url,
      hooks: {
        beforeRequest: (r) => {
          if (r.auth !== 'none' && !r.hasToken) throw new Error(`${r.method} ${r.path} needs a token`);
        },
      },
    });
    expect(((await thrown(refusing.call('meInbox'))) as Error).message).toBe(
      'GET /api/v1/me/inbox needs a token',
    );
    expect(gw.requests).toEqual([]);

    const mapped = new ApiClient({
      baseUrl: gw.url,
      token: 't',
      hooks: { beforeError: (e, r) => new Error(`${r.id}: ${e.code} ${String(e.status)}`) },
    });
    expect(((await thrown(mapped.call('meInbox'))) as Error).message).toBe('meInbox: AM_GATEWAY_HTTP 401');
    // a hook that returns nothing leaves the error as it is
    const plain = mapped.extend({ hooks: { beforeError: () => undefined } });
    const err = await thrown(plain.call('meInbox'));
    expect(err).toBeInstanceOf(GatewayHttpError);
    expect((err as GatewayHttpError).body).toEqual({ error: 'unauthorized', detail: 'no token' });
  });

  it('a 2xx answer that is not JSON or breaks the schema is AM_GATEWAY_RESPONSE_INVALID with its status and field', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/api/v1/me/inbox', () => (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
    });
    gw.on('POST', '/api/v1/me/mail/read', () => ({ json: { updated: 'two' } }));
    const api = new ApiClient({ baseUrl: gw.url, token: 't' });
    const html = (await thrown(api.call('meInbox'))) as GatewayResponseError;
    expect([html.code, html.status, html.problem]).toEqual([
      ERROR_CODES.GATEWAY_RESPONSE_INVALID,
      200,
      { reason: 'not_json' },
    ]);
    const shape = (await thrown(api.call('meMarkRead', { body: { ids: ['m1'] } }))) as GatewayResponseError;
    expect(shape.problem).toMatchObject({ reason: 'schema', field: 'updated' });
    expect(shape.message).toContain('"updated"');
  });

  it('a timeout is a network error naming the request; per call timeoutMs wins', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/api/v1/me/inbox', () => () => {}); // never answers
    const api = new ApiClient({ baseUrl: gw.url, token: 't', timeoutMs: 60_000 });
    const err = await thrown(api.call('meInbox', { timeoutMs: 50 }));
    expect(err).toBeInstanceOf(GatewayNetworkError);
    expect((err as Error).message).toMatch(
      /^GET \/api\/v1\/me\/inbox did not get an answer \(.*timeout.*\); retry later$/,
    );
  });

  it('uploads a file as multipart field "file" and downloads in chunks, with the Gateway file name', async () => {
    gw = await fakeGateway();
    gw.on('POST', '/api/v1/me/attachments', () => ({ json: { attachment: attachment('a1', 'r.txt') } }));
    gw.on('GET', '/api/v1/me/attachments/:id', () => (_req, res) => {
      res.writeHead(200, {
        'content-type': 'text/plain',
        'content-length': '6',
        'content-disposition': "attachment; filename*=UTF-8''%E6%8A%A5.txt",
      });
      res.write('abc');
      res.end('def');
    });
    const me = new PersonApi({ baseUrl: gw.url, token: 't', transport: undiciTransport });
    const up = await me.upload(new Blob(['héllo'], { type: 'text/plain' }), 'r.txt');
    expect(up.attachment.id).toBe('a1');
    const raw = gw.requests[0]?.raw.toString('utf8') ?? '';
    expect(gw.requests[0]?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(raw).toContain('name="file"; filename="r.txt"');
    expect(raw).toContain('héllo');
    const down = await me.download('a1');
    expect([down.status, down.contentType, down.filename, down.sizeBytes]).toEqual([
      200,
      'text/plain',
      '报.txt',
      6,
    ]);
    expect(new TextDecoder().decode(await down.bytes())).toBe('abcdef');
  });

  it('hands an undici dispatcher to undici fetch', async () => {
    gw = await fakeGateway();
    gw.on('GET', '/api/v1/me/inbox', () => ({ json: INBOX }));
    let dispatched = 0;
    const dispatcher = new Agent().compose((dispatch) => (opts, handler) => {
      dispatched++;
      return dispatch(opts, handler);
    });
    const api = new ApiClient({ baseUrl: gw.url, token: 't', transport: undiciTransport, dispatcher });
    await api.call('meInbox');
    expect(dispatched).toBe(1);
    await dispatcher.close();
  });

  it('refuses a stream or download endpoint in call() with a clear error', async () => {
    const api = new ApiClient({ baseUrl: 'http://127.0.0.1:1' });
    // @ts-expect-error events is an SSE endpoint: not callable as JSON
    const err = await thrown(api.call('events'));
    expect((err as Error).message).toBe(
      'ApiClient.call(events): a sse endpoint; use download() or SseClient',
    );
  });
});

describe('helpers', () => {
  it('parseErrorBody: the JSON body as sent, else http_<status> with the text (≤500 chars)', () => {
    expect(parseErrorBody(409, '{"error":"conflict","detail":"d","permission_mode":"full"}')).toEqual({
      error: 'conflict',
      detail: 'd',
      permission_mode: 'full',
    });
    expect(parseErrorBody(502, '  <h1>Bad</h1> ')).toEqual({ error: 'http_502', detail: '<h1>Bad</h1>' });
    expect(parseErrorBody(500, '')).toEqual({ error: 'http_500' });
    expect(parseErrorBody(503, 'x'.repeat(900)).detail).toHaveLength(500);
  });

  it('dispositionFilename keeps only a safe base name', () => {
    expect(dispositionFilename('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(dispositionFilename("attachment; filename*=UTF-8''a%5Cb%2F..%2Fc.txt")).toBe('c.txt');
    expect(dispositionFilename('attachment; filename=".."')).toBe('');
    expect(dispositionFilename('inline')).toBe('');
    expect(dispositionFilename('attachment; filename="a\u0007b.txt"')).toBe('ab.txt');
  });

  it('gatewayUrl keeps a base path prefix and drops undefined query values', () => {
    expect(gatewayUrl('http://h:1/agentmail/', '/api/v1/events').href).toBe(
      'http://h:1/agentmail/api/v1/events',
    );
    expect(gatewayUrl('http://h:1', '/x', { a: 1, b: undefined, c: true }).search).toBe('?a=1&c=true');
    expect(
      hasErrorCode(
        thrownSync(() => gatewayUrl('nope', '/')),
        ERROR_CODES.GATEWAY_URL_INVALID,
      ),
    ).toBe(true);
  });
});

describe('GatewayHttpError message', () => {
  it('puts a ";" between a detail and its suggestion, none after a detail that ends a sentence', () => {
    const words = (detail: string) =>
      new GatewayHttpError('POST', '/api/v1/mail/send', 401, {
        error: 'AM_GW_UNAUTHENTICATED',
        detail,
        suggestion: 'check AGENTMAIL_AGENT_KEY',
      }).message;
    expect(words('unknown agent key')).toContain(': unknown agent key; check AGENTMAIL_AGENT_KEY');
    expect(words('the key was revoked.')).toContain(': the key was revoked. check AGENTMAIL_AGENT_KEY');
  });
});
