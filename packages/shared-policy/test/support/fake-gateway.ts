/**
 * A loopback `node:http` stand-in for the Gateway's agent API, for client and tool tests: it
 * records every request (method, path, query, headers, body) and answers from a route table.
 * Not the real Gateway (packages/gateway); only enough to exercise the clients.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AttachmentInfo, Mail, MailSummary, Participant } from '@agentmail/protocol';

/** One recorded request. */
export interface Recorded {
  method: string;
  /** Path without the query. */
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** Raw body bytes. */
  raw: Buffer;
  /** Body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** What a route answers: JSON with a status, or full control over the response. */
export type Reply = { status?: number; json: unknown } | ((req: Recorded, res: ServerResponse) => void);

export type Route = (req: Recorded) => Reply | Promise<Reply>;

export interface FakeGateway {
  url: string;
  requests: Recorded[];
  /** Set or replace the route for `METHOD /api/v1/path` (`:id` segments match anything). */
  on(method: string, pattern: string, route: Route): void;
  close(): Promise<void>;
}

function match(pattern: string, path: string): boolean {
  const re = new RegExp(`^${pattern.replace(/:[a-z]+/g, '[^/]+')}$`);
  return re.test(path);
}

export async function fakeGateway(): Promise<FakeGateway> {
  const requests: Recorded[] = [];
  const routes: { method: string; pattern: string; route: Route }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const raw = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        json = undefined;
      }
      const rec: Recorded = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        raw,
        json,
      };
      requests.push(rec);
      const found = [...routes].reverse().find((r) => r.method === rec.method && match(r.pattern, rec.path));
      void Promise.resolve(
        found
          ? found.route(rec)
          : { status: 404, json: { error: 'not_found', detail: `no route ${rec.path}` } },
      ).then((reply) => {
        if (typeof reply === 'function') reply(rec, res);
        else {
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(reply.json));
        }
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (method, pattern, route) => routes.push({ method, pattern, route }),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---- fixtures --------------------------------------------------------------------------------

export const ALICE: Participant = { name: 'alice', address: 'alice@.pi-fix', human: true };
export const PI: Participant = { name: 'pi', address: 'pi@/srv/app.pi-fix', human: false };
export const BOB: Participant = { name: 'bob', address: 'bob@/srv/bob.', human: false };

export function attachment(id: string, filename = `${id}.txt`): AttachmentInfo {
  return {
    id,
    filename,
    content_type: 'text/plain',
    size_bytes: 12,
    sha256: 'ab'.repeat(32),
    created_at: '2026-11-29T22:52:45.123Z',
  };
}

export function summary(id: string, over: Partial<MailSummary> = {}): MailSummary {
  return {
    id,
    session_id: 's1',
    session_alias: 'pi-fix',
    from_name: 'alice',
    from_human: true,
    from_address: ALICE.address,
    to: [PI],
    cc: [BOB],
    to_human: false,
    subject: `subject ${id}`,
    snippet: `snippet of ${id}`,
    created_at: '2026-11-29T22:52:45.123Z',
    status: 'unread',
    attachments: [],
    in_reply_to: '',
    kind: 'mail',
    is_permission: false,
    relay: false,
    permission_mode: 'workspace',
    reply_address: ALICE.address,
    self_address: PI.address,
    platform_session_id: '',
    ...over,
  };
}

export function fullMail(id: string, over: Partial<Mail> = {}): Mail {
  return {
    ...summary(id),
    body: `body of ${id}`,
    participants: [ALICE, PI, BOB],
    parent_from: '',
    ...over,
  };
}
