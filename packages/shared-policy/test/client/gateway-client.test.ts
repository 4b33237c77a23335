import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATTACHMENT_MAX_BYTES } from '@agentmail/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GatewayClient,
  GatewayHttpError,
  GatewayNetworkError,
  gatewayUrl,
  isPermanent,
  isTransient,
} from '../../src/client/gateway-client.js';
import { ERROR_CODES, hasErrorCode } from '../../src/errors.js';
import { attachment, type FakeGateway, fakeGateway, fullMail, summary } from '../support/fake-gateway.js';
import { thrown } from './support.js';

let gw: FakeGateway;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'am-gw-client-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await gw?.close();
});

async function setup(): Promise<GatewayClient> {
  gw = await fakeGateway();
  return new GatewayClient({ baseUrl: gw.url, key: 'key-1', allowedRoots: [dir] });
}

const SENT = {
  status: 'sent',
  mail_id: 'm9',
  session_id: 's1',
  session_alias: 'pi-fix',
  address: 'alice@.pi-fix',
  rounds_left: 4,
};

describe('GatewayClient endpoints (SPEC §3, G-12)', () => {
  it('every agent endpoint: method, path, Bearer key, body or query, validated answer', async () => {
    const c = await setup();
    const A = '/api/v1';
    gw.on('POST', `${A}/agent/register`, () => ({
      json: { name: 'pi', platform: 'pi', created: true, heartbeat_interval_ms: 30000 },
    }));
    gw.on('POST', `${A}/agent/heartbeat`, () => ({
      json: {
        status: 'ok',
        server_time: 't',
        allowed_models: ['a/b'],
        unknown_fields: [],
        heartbeat_interval_ms: 30000,
      },
    }));
    gw.on('GET', `${A}/mail/inbox`, () => ({
      json: { mails: [summary('m1')], unread_count: 1, has_more: false },
    }));
    gw.on('POST', `${A}/mail/read`, () => ({ json: { updated: 2 } }));
    gw.on('GET', `${A}/agent/mail/:id`, () => ({ json: { mail: fullMail('m1') } }));
    gw.on('GET', `${A}/agent/mail/:id/thread`, () => ({
      json: {
        session_id: 's1',
        session_alias: 'pi-fix',
        mails: [fullMail('m1')],
        total: 1,
        offset: 0,
        next_offset: null,
      },
    }));
    gw.on('POST', `${A}/mail/send`, () => ({ json: SENT }));
    gw.on('POST', `${A}/mail/:id/forward`, () => ({ json: SENT }));
    gw.on('POST', `${A}/permission/request`, () => ({
      json: { status: 'pending', request_id: 'r1', mail_id: 'm2', asked: 'alice' },
    }));
    gw.on('GET', `${A}/agent/contacts`, () => ({ json: { contacts: [] } }));
    gw.on('GET', `${A}/agent/contacts/suggest`, () => ({ json: { suggestions: [] } }));
    gw.on('GET', `${A}/agent/sessions/:id/participants`, () => ({
      json: { session_id: 's 1', session_alias: 'a', participants: [], silent: [] },
    }));
    gw.on('POST', `${A}/sessions/:id/sync`, () => ({ json: { session_id: 's1', alias: 'x-2', title: 't' } }));

    expect((await c.register({ name: 'pi', platform: 'pi' })).created).toBe(true);
    expect(
      (await c.heartbeat({ workspaces: [{ path: '/srv' }], mode_enforcement: 'native' })).allowed_models,
    ).toEqual(['a/b']);
    expect((await c.inbox({ status: 'all', limit: 3, session_id: 's1' })).mails[0]?.id).toBe('m1');
    expect((await c.markRead(['m1', 'm2'])).updated).toBe(2);
    expect((await c.mail('m/1')).body).toBe('body of m1');
    expect((await c.thread('m1', { offset: 20 })).total).toBe(1);
    expect(await c.send({ to: 'alice@.pi-fix', subject: 's', body: 'b', attachment_ids: ['a1'] })).toEqual(
      SENT,
    );
    expect((await c.forward('m1', { to: 'bob', comment: 'fyi' })).status).toBe('sent');
    expect(
      (
        await c.permissionRequest({
          question: 'run rm?',
          options: ['approve'],
          session_id: 's1',
          relay_key: 'k',
          kind: 'approval',
        })
      ).status,
    ).toBe('pending');
    expect((await c.contacts()).contacts).toEqual([]);
    expect((await c.suggest({ name: 'bob', path: '/srv/bob' })).suggestions).toEqual([]);
    expect((await c.participants('s 1')).session_id).toBe('s 1');
    expect((await c.sessionSync('s1', { alias: 'x', title: 't' })).alias).toBe('x-2');

    expect(gw.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST ${A}/agent/register`,
      `POST ${A}/agent/heartbeat`,
      `GET ${A}/mail/inbox`,
      `POST ${A}/mail/read`,
      `GET ${A}/agent/mail/m%2F1`,
      `GET ${A}/agent/mail/m1/thread`,
      `POST ${A}/mail/send`,
      `POST ${A}/mail/m1/forward`,
      `POST ${A}/permission/request`,
      `GET ${A}/agent/contacts`,
      `GET ${A}/agent/contacts/suggest`,
      `GET ${A}/agent/sessions/s%201/participants`,
      `POST ${A}/sessions/s1/sync`,
    ]);
    for (const r of gw.requests) expect(r.headers.authorization).toBe('Bearer key-1');
    const byPath = (p: string) => gw.requests.find((r) => r.path === `${A}${p}`);
    expect(byPath('/mail/inbox')?.query).toEqual({ status: 'all', limit: '3', session_id: 's1' });
    expect(byPath('/agent/mail/m1/thread')?.query).toEqual({ offset: '20' });
    expect(byPath('/agent/contacts/suggest')?.query).toEqual({ name: 'bob', path: '/srv/bob' });
    expect(byPath('/mail/read')?.json).toEqual({ ids: ['m1', 'm2'] });
    expect(byPath('/mail/send')?.headers['content-type']).toBe('application/json');
    expect(byPath('/mail/send')?.json).toEqual({
      to: 'alice@.pi-fix',
      subject: 's',
      body: 'b',
      attachment_ids: ['a1'],
    });
    expect(byPath('/mail/m1/forward')?.json).toEqual({ to: 'bob', comment: 'fyi' });
    expect(byPath('/sessions/s1/sync')?.json).toEqual({ alias: 'x', title: 't' });
  });

  it('keeps a path prefix of the base URL', async () => {
    expect(gatewayUrl('http://h:1/agentmail/', '/api/v1/events').href).toBe(
      'http://h:1/agentmail/api/v1/events',
    );
    expect(gatewayUrl('http://h:1', '/api/v1/mail/inbox', { limit: 5, x: undefined }).href).toBe(
      'http://h:1/api/v1/mail/inbox?limit=5',
    );
    expect(() => gatewayUrl('ftp://h', '/')).toThrow(/http:\/\/ or https:\/\//);
    expect(() => new GatewayClient({ baseUrl: 'not a url', key: 'k' })).toThrow(/not a URL/);
  });
});

describe('GatewayClient errors (SPEC G-13)', () => {
  it('a 4xx is a GatewayHttpError with status, parsed body and code; permanent', async () => {
    const c = await setup();
    gw.on('POST', '/api/v1/mail/send', () => ({
      status: 403,
      json: {
        error: 'forbidden',
        detail: 'key is bound to "pi"',
        suggestion: 'use the key of "bob"',
        bound_name: 'pi',
      },
    }));
    const err = await thrown(c.send({ to: 'x', subject: '', body: '' }));
    expect(err).toBeInstanceOf(GatewayHttpError);
    const e = err as GatewayHttpError;
    expect(e.code).toBe(ERROR_CODES.GATEWAY_HTTP);
    expect(e.status).toBe(403);
    expect(e.body).toEqual({
      error: 'forbidden',
      detail: 'key is bound to "pi"',
      suggestion: 'use the key of "bob"',
      bound_name: 'pi',
    });
    expect(e.message).toContain('403');
    expect(e.message).toContain('use the key of "bob"');
    expect(isPermanent(e)).toBe(true);
    expect(isTransient(e)).toBe(false);
  });

  it.each([500, 502, 503, 408, 429])('HTTP %i is transient', async (status) => {
    const c = await setup();
    gw.on('GET', '/api/v1/agent/contacts', () => ({ status, json: { error: 'internal' } }));
    const err = await thrown(c.contacts());
    expect((err as GatewayHttpError).status).toBe(status);
    expect(isTransient(err)).toBe(true);
    expect(isPermanent(err)).toBe(false);
  });

  it.each([400, 401, 404, 409, 413])('HTTP %i is permanent', async (status) => {
    const c = await setup();
    gw.on('GET', '/api/v1/agent/contacts', () => ({ status, json: { error: 'x' } }));
    const err = await thrown(c.contacts());
    expect(isPermanent(err)).toBe(true);
    expect(isTransient(err)).toBe(false);
  });

  it('a non-JSON error page becomes http_<status> with the text as detail', async () => {
    const c = await setup();
    gw.on('GET', '/api/v1/agent/contacts', () => (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
    });
    const err = (await thrown(c.contacts())) as GatewayHttpError;
    expect(err.body).toEqual({ error: 'http_502', detail: '<h1>Bad Gateway</h1>' });
    expect(isTransient(err)).toBe(true);
  });

  it('no server: a network error without status, transient', async () => {
    const port = await new Promise<number>((r) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => r(p));
      });
    });
    const c = new GatewayClient({ baseUrl: `http://127.0.0.1:${port}`, key: 'k' });
    const err = await thrown(c.contacts());
    expect(err).toBeInstanceOf(GatewayNetworkError);
    expect(hasErrorCode(err, ERROR_CODES.GATEWAY_NETWORK)).toBe(true);
    expect((err as GatewayNetworkError).status).toBeUndefined();
    expect(isTransient(err)).toBe(true);
    expect(isPermanent(err)).toBe(false);
  });

  it('a timeout is a network error (transient)', async () => {
    await setup();
    const slow = new GatewayClient({ baseUrl: gw.url, key: 'k', timeoutMs: 50 });
    gw.on('GET', '/api/v1/agent/contacts', () => () => {}); // never answers
    const err = await thrown(slow.contacts());
    expect(hasErrorCode(err, ERROR_CODES.GATEWAY_NETWORK)).toBe(true);
    expect(isTransient(err)).toBe(true);
  });

  it("the caller's abort is rethrown as is, not turned into a network error", async () => {
    const c = await setup();
    gw.on('GET', '/api/v1/agent/contacts', () => () => {});
    const ac = new AbortController();
    const p = thrown(c.contacts({ signal: ac.signal }));
    ac.abort(new Error('shutting down'));
    const err = await p;
    expect((err as Error).message).toBe('shutting down');
    expect(isTransient(err)).toBe(false);
  });

  it('a 2xx answer that breaks the schema is AM_GATEWAY_RESPONSE_INVALID naming the field', async () => {
    const c = await setup();
    gw.on('POST', '/api/v1/mail/read', () => ({ json: { updated: 'two' } }));
    const err = await thrown(c.markRead(['m1']));
    expect(hasErrorCode(err, ERROR_CODES.GATEWAY_RESPONSE_INVALID)).toBe(true);
    expect((err as Error).message).toContain('"updated"');
  });

  it('status decides for plain objects too (errors from another package copy)', () => {
    expect(isTransient({ status: 503 })).toBe(true);
    expect(isPermanent({ status: 404 })).toBe(true);
    expect(isTransient({ code: 'AM_GATEWAY_NETWORK' })).toBe(true);
    expect(isTransient(new Error('x'))).toBe(false);
    expect(isPermanent(new Error('x'))).toBe(false);
  });
});

describe('GatewayClient attachments', () => {
  it('uploads a file as multipart field "file", streamed from its path', async () => {
    const c = await setup();
    const file = join(dir, 'report 报告.txt');
    const content = 'héllo 世界\n'.repeat(20_000);
    writeFileSync(file, content);
    gw.on('POST', '/api/v1/attachments', () => ({
      json: { attachment: attachment('a1', 'report 报告.txt') },
    }));
    const info = await c.uploadAttachment(file, { contentType: 'text/plain' });
    expect(info.id).toBe('a1');
    const req = gw.requests[0];
    expect(req?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(req?.headers.authorization).toBe('Bearer key-1');
    const raw = req?.raw.toString('utf8') ?? '';
    expect(raw).toContain('name="file"');
    expect(raw).toContain('Content-Type: text/plain');
    expect(raw).toContain(content);
  });

  it('refuses a relative, missing or too large upload before any request', async () => {
    const c = await setup();
    const rel = await thrown(c.uploadAttachment('notes.txt'));
    expect(hasErrorCode(rel, ERROR_CODES.GATEWAY_PATH_RELATIVE)).toBe(true);
    expect((rel as Error).message).toContain('"notes.txt"');
    const missing = await thrown(c.uploadAttachment(join(dir, 'nope.txt')));
    expect(hasErrorCode(missing, ERROR_CODES.GATEWAY_FILE_UNREADABLE)).toBe(true);
    const big = join(dir, 'big.bin');
    writeFileSync(big, '');
    truncateSync(big, ATTACHMENT_MAX_BYTES + 1); // sparse: no real 25 MB written
    const tooBig = await thrown(c.uploadAttachment(big));
    expect(hasErrorCode(tooBig, ERROR_CODES.GATEWAY_UPLOAD_TOO_LARGE)).toBe(true);
    expect(gw.requests).toEqual([]);
  });

  function serveBlob(content: Buffer, disposition = 'attachment; filename="data.bin"'): void {
    gw.on('GET', '/api/v1/attachments/:id', () => (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': disposition });
      // several writes: the client streams them to the file
      for (let i = 0; i < content.length; i += 65_536) res.write(content.subarray(i, i + 65_536));
      res.end();
    });
  }

  it('downloads to a file inside an allowed root, streamed; into a directory under the given name', async () => {
    const c = await setup();
    const content = Buffer.alloc(300_000, 7);
    serveBlob(content, "attachment; filename*=UTF-8''%E6%8A%A5%E5%91%8A.bin");
    const target = join(dir, 'out.bin');
    const res = await c.downloadAttachment('a1', target);
    expect(res).toEqual({
      path: target,
      size_bytes: content.length,
      filename: '报告.bin',
      content_type: 'application/octet-stream',
    });
    expect(readFileSync(target).equals(content)).toBe(true);
    const sub = join(dir, 'downloads');
    mkdirSync(sub);
    const res2 = await c.downloadAttachment('a1', sub);
    expect(res2.path).toBe(join(sub, '报告.bin'));
    expect(gw.requests[0]?.path).toBe('/api/v1/attachments/a1');
    expect(gw.requests[0]?.headers.authorization).toBe('Bearer key-1');
  });

  it('a hostile file name cannot leave the directory', async () => {
    const c = await setup();
    serveBlob(Buffer.from('x'), 'attachment; filename="../../escape.txt"');
    const sub = join(dir, 'hostile');
    mkdirSync(sub);
    const res = await c.downloadAttachment('a1', `${sub}/`);
    expect(res.path).toBe(join(sub, 'escape.txt'));
  });

  it('refuses relative paths and paths outside the allowed roots, naming the path and the fix', async () => {
    const c = await setup();
    serveBlob(Buffer.from('x'));
    const rel = await thrown(c.downloadAttachment('a1', 'out.bin'));
    expect(hasErrorCode(rel, ERROR_CODES.GATEWAY_PATH_RELATIVE)).toBe(true);
    expect((rel as Error).message).toContain('"out.bin"');
    expect((rel as Error).message).toContain(`absolute path inside one of: ${dir}`);

    const outside = await thrown(c.downloadAttachment('a1', join(tmpdir(), 'elsewhere.bin')));
    expect(hasErrorCode(outside, ERROR_CODES.GATEWAY_PATH_OUTSIDE_ROOT)).toBe(true);
    expect((outside as Error).message).toContain(join(tmpdir(), 'elsewhere.bin'));
    expect((outside as Error).message).toContain(dir);

    const dotdot = await thrown(c.downloadAttachment('a1', `${dir}/../escape.bin`));
    expect(hasErrorCode(dotdot, ERROR_CODES.GATEWAY_PATH_OUTSIDE_ROOT)).toBe(true);

    // a symlink inside the root that points outside it
    const link = join(dir, 'link-out');
    symlinkSync(tmpdir(), link);
    const viaLink = await thrown(c.downloadAttachment('a1', join(link, 'x.bin')));
    expect(hasErrorCode(viaLink, ERROR_CODES.GATEWAY_PATH_OUTSIDE_ROOT)).toBe(true);

    const missing = await thrown(c.downloadAttachment('a1', join(dir, 'no-such-dir', 'x.bin')));
    expect(hasErrorCode(missing, ERROR_CODES.GATEWAY_DOWNLOAD_DIR_MISSING)).toBe(true);
    expect(gw.requests).toEqual([]);

    const none = new GatewayClient({ baseUrl: gw.url, key: 'k' });
    const noRoots = await thrown(none.downloadAttachment('a1', join(dir, 'x.bin')));
    expect(hasErrorCode(noRoots, ERROR_CODES.GATEWAY_PATH_OUTSIDE_ROOT)).toBe(true);
    expect((noRoots as Error).message).toContain('configure allowedRoots');
  });

  it('does not overwrite an existing file unless asked; a failed download leaves no file', async () => {
    const c = await setup();
    serveBlob(Buffer.from('new'));
    const target = join(dir, 'exists.txt');
    writeFileSync(target, 'old');
    const err = await thrown(c.downloadAttachment('a1', target));
    expect(hasErrorCode(err, ERROR_CODES.GATEWAY_FILE_EXISTS)).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('old');
    await c.downloadAttachment('a1', target, { overwrite: true });
    expect(readFileSync(target, 'utf8')).toBe('new');

    gw.on('GET', '/api/v1/attachments/:id', () => ({
      status: 404,
      json: { error: 'not_found', detail: 'no attachment "a9"' },
    }));
    const nf = await thrown(c.downloadAttachment('a9', join(dir, 'a9.bin')));
    expect((nf as GatewayHttpError).status).toBe(404);
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(() => readFileSync(join(dir, 'a9.bin'))).toThrow();
  });
});
