import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type AgentEvent,
  type NewMailEvent,
  PERSON_EVENT_SCHEMAS,
  type PermissionDecisionEvent,
  type PersonEvent,
  routePath,
} from '@agentmail/protocol';
import fc from 'fast-check';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { SseClient } from '../../src/client/node-sse.js';
import { undiciTransport } from '../../src/client/node-transfer.js';
import {
  SseClient as FetchSseClient,
  type SseClientOptions,
  sseBackoffMs,
} from '../../src/client/sse-client.js';
import { type AgentMailError, ERROR_CODES } from '../../src/errors.js';

// ---- helpers -------------------------------------------------------------------------------

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}
function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void | Promise<void>;

interface TestServer {
  url: string;
  requests: IncomingMessage[];
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Handler): Promise<TestServer> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    void handler(req, res, requests.length - 1);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function openStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
}

/** A sleep that waits until aborted: the client never reconnects on its own. */
const never = (_ms: number, signal: AbortSignal) =>
  new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));

function mail(id: number, subject: string): NewMailEvent {
  return {
    mail_id: `m${id}`,
    session_id: 's1',
    from_name: '张三',
    from_human: true,
    to_workspace: '/srv/app',
    subject,
    in_reply_to: '',
    parent_from: '',
    permission_mode: 'workspace',
    permission_enforcement: 'native',
    session_alias: 'pi-修复-导入',
    reply_address: '张三@.pi-修复-导入',
    self_address: 'pi@/srv/app.pi-修复-导入',
    platform_session_id: '',
    kind: 'mail',
  };
}

function decision(note: string): PermissionDecisionEvent {
  return {
    relay_key: 'perm:s1:1',
    request_id: 'r1',
    session_id: 's1',
    decision: 'deny',
    answers: [],
    note,
    fresh_mails: [{ mail_id: 'm9', from_name: 'Zoë', from_human: true, subject: 'stop 🛑' }],
  };
}

function frame(type: string, id: string, data: unknown, eol = '\n'): string {
  return `event: ${type}${eol}id: ${id}${eol}data: ${JSON.stringify(data)}${eol}${eol}`;
}

/** Interceptor that reports every body chunk the client receives (to order server writes). */
function tapDispatcher(onBytes: (n: number) => void): Dispatcher {
  return new Agent().compose((dispatch) => (opts, handler) => {
    const h = handler as unknown as Record<string, unknown>;
    const wrapped = new Proxy(h, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (prop === 'onData' && typeof value === 'function')
          return (chunk: Buffer) => {
            onBytes(chunk.length);
            return (value as (c: Buffer) => boolean).call(target, chunk);
          };
        if (prop === 'onResponseData' && typeof value === 'function')
          return (controller: unknown, chunk: Buffer) => {
            onBytes(chunk.length);
            return (value as (c: unknown, d: Buffer) => void).call(target, controller, chunk);
          };
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return dispatch(opts, wrapped as unknown as Dispatcher.DispatchHandler);
  });
}

// A stream of several events with multi-byte text (3-byte CJK, 4-byte emoji, combining marks),
// a multi-line data field, a comment, CRLF line ends in one frame and LF elsewhere.
const EVENTS: AgentEvent[] = [
  { type: 'new_mail', id: '1', data: mail(1, '修复导入路径 🚀') },
  { type: 'permission_decision', id: '2', data: decision('不要删除 👀 e\u0301') },
  { type: 'new_mail', id: '3', data: mail(3, 'Ünïcödé ✓ 𝄞') },
  { type: 'new_mail', id: '4', data: mail(4, '最后一封') },
];
const STREAM_TEXT = [
  ': keep-alive 💤\n\n',
  frame('new_mail', '1', EVENTS[0]?.data),
  `event: permission_decision\nid: 2\n${JSON.stringify(EVENTS[1]?.data, null, 2)
    .split('\n')
    .map((l) => `data: ${l}`)
    .join('\n')}\n\n`,
  frame('new_mail', '3', EVENTS[2]?.data, '\r\n'),
  frame('new_mail', '4', EVENTS[3]?.data),
].join('');
const STREAM = Buffer.from(STREAM_TEXT, 'utf8');

/**
 * Serve STREAM cut into chunks at `cuts` (byte offsets) to one client; each chunk is written
 * only after the client received the previous one, so the cuts really reach the client.
 */
async function runCut(cuts: readonly number[]): Promise<{ events: AgentEvent[]; errors: AgentMailError[] }> {
  const points = [...new Set(cuts)].filter((c) => c > 0 && c < STREAM.length).sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let prev = 0;
  for (const c of [...points, STREAM.length]) {
    chunks.push(STREAM.subarray(prev, c));
    prev = c;
  }
  let received = 0;
  let waiter: { bytes: number; d: Deferred<void> } | undefined;
  const dispatcher = tapDispatcher((n) => {
    received += n;
    if (waiter && received >= waiter.bytes) waiter.d.resolve();
  });
  const server = await serve(async (_req, res) => {
    openStream(res);
    let sent = 0;
    for (const chunk of chunks) {
      sent += chunk.length;
      const d = deferred();
      waiter = { bytes: sent, d };
      if (received >= sent) d.resolve();
      res.write(chunk);
      await d.promise;
    }
    res.end();
  });
  const events: AgentEvent[] = [];
  const errors: AgentMailError[] = [];
  const ended = deferred();
  const client = new SseClient({
    url: server.url,
    key: 'k',
    dispatcher,
    sleep: never,
    onEvent: (e) => {
      events.push(e);
    },
    onError: (e) => {
      if (e.code === ERROR_CODES.SSE_CONNECTION) ended.resolve();
      else errors.push(e);
    },
  });
  void client.start();
  await ended.promise;
  await client.close();
  await server.close();
  await dispatcher.close();
  return { events, errors };
}

// ---- B-2: frame state across chunks ----------------------------------------------------------

describe('SseClient frames (SPEC B-2)', () => {
  it('the whole stream in one chunk yields the events', async () => {
    const { events, errors } = await runCut([]);
    expect(errors).toEqual([]);
    expect(events).toEqual(EVENTS);
  });

  it('FUZZ: a stream cut at every byte offset (two chunks) yields exactly the same events', async () => {
    expect(STREAM.length).toBeGreaterThan(500);
    for (let offset = 1; offset < STREAM.length; offset++) {
      const { events, errors } = await runCut([offset]);
      if (errors.length || events.length !== EVENTS.length)
        throw new Error(`cut at byte ${offset}: ${errors[0]?.message ?? events.length}`);
      expect(events, `cut at byte ${offset}`).toEqual(EVENTS);
    }
  }, 120_000);

  it('FUZZ: many random cuts (fast-check) yield exactly the same events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: STREAM.length - 1 }), { maxLength: 40 }),
        async (cuts) => {
          const { events, errors } = await runCut(cuts);
          expect(errors).toEqual([]);
          expect(events).toEqual(EVENTS);
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);

  it('a cut inside a 4-byte character, byte by byte, still decodes it', async () => {
    const at = STREAM.indexOf(Buffer.from('🚀'));
    const { events } = await runCut([at + 1, at + 2, at + 3]);
    expect(events).toEqual(EVENTS);
  });
});

// ---- B-2, G-22: reconnect with Last-Event-ID -------------------------------------------------

describe('SseClient reconnect (SPEC B-2, G-22)', () => {
  const RING = [1, 2, 3, 4, 5, 6].map((n) => ({
    id: String(n),
    text: frame('new_mail', String(n), mail(n, `第${n}封 ✉️`)),
  }));

  it('a dropped connection reconnects with Last-Event-ID = last id; no event lost or duplicated', async () => {
    const gotThree = deferred();
    const gotFive = deferred();
    const all = deferred();
    const server = await serve(async (req, res, index) => {
      openStream(res);
      const after = Number(req.headers['last-event-id'] ?? 0);
      const replay = RING.filter((e) => Number(e.id) > after);
      if (index === 0) {
        // events 1..3 and half of event 4, cut inside a multi-byte character, then drop
        const four = Buffer.from(replay[3]?.text ?? '');
        const cut = four.indexOf(Buffer.from('封')) + 1;
        res.write(
          replay
            .slice(0, 3)
            .map((e) => e.text)
            .join(''),
        );
        res.write(four.subarray(0, cut));
        await gotThree.promise;
        res.socket?.destroy();
      } else if (index === 1) {
        res.write(
          replay
            .slice(0, 2)
            .map((e) => e.text)
            .join(''),
        );
        await gotFive.promise;
        res.end(); // a clean end is a reconnect too
      } else {
        res.write(replay.map((e) => e.text).join(''));
      }
    });
    const events: AgentEvent[] = [];
    const delays: number[] = [];
    const client = new SseClient({
      url: server.url,
      key: 'k',
      jitter: false,
      sleep: async (ms) => {
        delays.push(ms);
      },
      onEvent: (e) => {
        events.push(e);
        if (e.id === '3') gotThree.resolve();
        if (e.id === '5') gotFive.resolve();
        if (e.id === '6') all.resolve();
      },
    });
    void client.start();
    await all.promise;
    await client.close();
    expect(events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(events.map((e) => (e.type === 'new_mail' ? e.data.subject : ''))).toEqual(
      RING.map((e) => `第${e.id}封 ✉️`),
    );
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '3', '5']);
    expect(server.requests.every((r) => r.headers.authorization === 'Bearer k')).toBe(true);
    expect(client.lastEventId).toBe('6');
    expect(delays.length).toBe(2);
  });

  it('the first connection sends a cursor given at start (SPEC B-1)', async () => {
    const opened = deferred();
    const server = await serve((_req, res) => openStream(res));
    const client = new SseClient({
      url: server.url,
      key: 'k',
      lastEventId: '41',
      onEvent: () => {},
      onOpen: () => opened.resolve(),
    });
    void client.start();
    await opened.promise;
    await client.close();
    expect(server.requests[0]?.headers['last-event-id']).toBe('41');
  });

  it('backs off exponentially with a cap, and resets after a healthy connection', async () => {
    let clock = 0;
    const done = deferred();
    const server = await serve((_req, res, index) => {
      if (index < 4 || index === 6) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"internal"}');
      } else if (index === 4) {
        // healthy by events: one event, then the server closes
        openStream(res);
        res.end(frame('new_mail', '1', mail(1, 'x')));
      } else if (index === 5) {
        // healthy by time: open for 60 s (injected clock), no event
        openStream(res);
        clock += 60_000;
        res.end();
      } else {
        openStream(res);
        done.resolve();
      }
    });
    const delays: number[] = [];
    const client = new SseClient({
      url: server.url,
      key: 'k',
      jitter: false,
      initialBackoffMs: 1000,
      maxBackoffMs: 5000,
      now: () => clock,
      sleep: async (ms) => {
        delays.push(ms);
      },
      onEvent: () => {},
    });
    void client.start();
    await done.promise;
    await client.close();
    expect(delays).toEqual([1000, 2000, 4000, 5000, 1000, 1000, 2000]);
  });

  it('a permanent 4xx waits the longest delay and is reported with its status', async () => {
    const reported = deferred<AgentMailError>();
    const server = await serve((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    });
    const delays: number[] = [];
    const slept = deferred();
    const client = new SseClient({
      url: server.url,
      key: 'bad',
      jitter: false,
      maxBackoffMs: 30_000,
      sleep: (ms, signal) => {
        delays.push(ms);
        slept.resolve();
        return never(ms, signal);
      },
      onEvent: () => {},
      onError: (e) => reported.resolve(e),
    });
    void client.start();
    const err = await reported.promise;
    await slept.promise;
    await client.close();
    expect(err.code).toBe(ERROR_CODES.SSE_HTTP);
    expect(err.status).toBe(401);
    expect(err.message).toContain('unauthorized');
    expect(delays).toEqual([30_000]);
  });

  it('jitter spreads a delay over [d/2, d)', () => {
    const o = { initialMs: 1000, maxMs: 30_000, jitter: true };
    expect(sseBackoffMs(2, { ...o, random: () => 0 })).toBe(2000);
    expect(sseBackoffMs(2, { ...o, random: () => 0.999 })).toBe(3998);
    expect(sseBackoffMs(10, { ...o, jitter: false, random: () => 0 })).toBe(30_000);
  });
});

// ---- B-2: reconfigure drops the cursor -----------------------------------------------------

describe('SseClient reconfigure (SPEC B-2, B-18)', () => {
  it('a new URL gets no Last-Event-ID and the new key; the old stream is closed', async () => {
    const oldClosed = deferred();
    const a = await serve((req, res) => {
      openStream(res);
      res.write(frame('new_mail', '7', mail(7, 'a')));
      req.socket.on('close', () => oldClosed.resolve());
    });
    const bOpened = deferred();
    const b = await serve((_req, res) => {
      openStream(res);
      bOpened.resolve();
    });
    const got = deferred();
    const client = new SseClient({ url: a.url, key: 'k1', sleep: never, onEvent: () => got.resolve() });
    void client.start();
    await got.promise;
    expect(client.lastEventId).toBe('7');
    client.reconfigure({ url: b.url, key: 'k2' });
    expect(client.lastEventId).toBeUndefined();
    await bOpened.promise;
    await oldClosed.promise;
    await client.close();
    expect(b.requests[0]?.headers['last-event-id']).toBeUndefined();
    expect(b.requests[0]?.headers.authorization).toBe('Bearer k2');
    expect(a.requests.length).toBe(1);
  });

  it('a new key on the same URL drops the cursor too; the same URL and key keeps it', async () => {
    const opened: Deferred<void>[] = [deferred(), deferred()];
    const more = deferred();
    const got: string[] = [];
    const gotFirst = deferred();
    const gotSecond = deferred();
    const server = await serve(async (_req, res, index) => {
      openStream(res);
      opened[index]?.resolve();
      if (index === 0) {
        res.write(frame('new_mail', '7', mail(7, 'a')));
        await more.promise;
        res.write(frame('new_mail', '8', mail(8, 'b')));
      }
    });
    const client = new SseClient({
      url: server.url,
      key: 'k1',
      sleep: never,
      onEvent: (e) => {
        got.push(e.id);
        if (e.id === '7') gotFirst.resolve();
        if (e.id === '8') gotSecond.resolve();
      },
    });
    void client.start();
    await gotFirst.promise;
    client.reconfigure({ url: server.url, key: 'k1' }); // same: no-op
    more.resolve();
    await gotSecond.promise; // still the first connection
    expect(server.requests.length).toBe(1);
    expect(client.lastEventId).toBe('8');
    client.reconfigure({ url: server.url, key: 'k2' });
    await opened[1]?.promise;
    await client.close();
    expect(server.requests[1]?.headers['last-event-id']).toBeUndefined();
    expect(server.requests[1]?.headers.authorization).toBe('Bearer k2');
    expect(got).toEqual(['7', '8']);
  });

  it('reconfigure during a backoff sleep reconnects at once to the new URL', async () => {
    const a = await serve((_req, res) => {
      res.writeHead(503).end();
    });
    const bOpened = deferred();
    const b = await serve((_req, res) => {
      openStream(res);
      bOpened.resolve();
    });
    const sleeping = deferred();
    const client = new SseClient({
      url: a.url,
      key: 'k',
      sleep: (ms, signal) => {
        sleeping.resolve();
        return never(ms, signal);
      },
      onEvent: () => {},
    });
    void client.start();
    await sleeping.promise;
    client.reconfigure({ url: b.url, key: 'k' });
    await bOpened.promise;
    await client.close();
    expect(a.requests.length).toBe(1);
    expect(b.requests.length).toBe(1);
  });
});

// ---- abort -----------------------------------------------------------------------------------

describe('SseClient abort', () => {
  it('aborting the signal ends an open stream; no request follows', async () => {
    const reqClosed = deferred();
    const opened = deferred();
    const server = await serve((req, res) => {
      openStream(res);
      req.socket.on('close', () => reqClosed.resolve());
    });
    const ac = new AbortController();
    const client = new SseClient({
      url: server.url,
      key: 'k',
      signal: ac.signal,
      onEvent: () => {},
      onOpen: () => opened.resolve(),
    });
    const done = client.start();
    await opened.promise;
    ac.abort();
    await done; // the loop has ended: nothing can send another request
    await reqClosed.promise;
    expect(client.closed).toBe(true);
    expect(server.requests.length).toBe(1);
  });

  it('close() during a backoff sleep ends the loop at once, even when the sleep ignores its signal', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(503).end();
    });
    const sleeping = deferred();
    const client = new SseClient({
      url: server.url,
      key: 'k',
      sleep: () => {
        sleeping.resolve();
        return new Promise(() => {}); // never settles
      },
      onEvent: () => {},
    });
    const done = client.start();
    await sleeping.promise;
    await client.close();
    await done;
    expect(server.requests.length).toBe(1);
  });

  it('an already aborted signal makes no request at all', async () => {
    const server = await serve((_req, res) => openStream(res));
    const client = new SseClient({
      url: server.url,
      key: 'k',
      signal: AbortSignal.abort(),
      onEvent: () => {},
    });
    await client.start();
    expect(server.requests.length).toBe(0);
  });
});

// ---- validation and handler errors ------------------------------------------------------------

describe('SseClient validation (SPEC G-20, G-21)', () => {
  it('invalid, non-JSON and unknown events are reported and skipped; the stream goes on', async () => {
    const bad = { ...mail(1, 'x'), from_human: 'yes' };
    const server = await serve((_req, res) => {
      openStream(res);
      res.write(frame('new_mail', '1', bad));
      res.write('event: new_mail\nid: 2\ndata: {not json\n\n');
      res.write(frame('calendar_tick', '3', {}));
      res.write('data: no type\n\n');
      res.write(frame('new_mail', '5', mail(5, 'ok')));
    });
    const got = deferred<AgentEvent>();
    const errors: AgentMailError[] = [];
    const client = new SseClient({
      url: server.url,
      key: 'k',
      sleep: never,
      onEvent: (e) => got.resolve(e),
      onError: (e) => errors.push(e),
    });
    void client.start();
    const event = await got.promise;
    await client.close();
    expect(event.id).toBe('5');
    expect(errors.map((e) => e.code)).toEqual([
      ERROR_CODES.SSE_EVENT_INVALID,
      ERROR_CODES.SSE_EVENT_INVALID,
      ERROR_CODES.SSE_EVENT_UNKNOWN,
      ERROR_CODES.SSE_EVENT_UNKNOWN,
    ]);
    expect(errors[0]?.message).toContain('field "from_human": expected boolean, got string');
    // the default event map is the agent's (a person stream passes PERSON_EVENT_SCHEMAS)
    expect(errors[2]?.message).toContain('(known: new_mail, permission_decision)');
    expect(client.lastEventId).toBe('5');
  });

  it('a frame left unterminated by a clean end is not dispatched and does not move the cursor', async () => {
    const server = await serve((_req, res) => {
      openStream(res);
      // event 2 is complete but for its blank line: the frame never ended
      res.end(
        `${frame('new_mail', '1', mail(1, 'a'))}event: new_mail\nid: 2\ndata: ${JSON.stringify(mail(2, 'b'))}\n`,
      );
    });
    const ended = deferred();
    const events: AgentEvent[] = [];
    const client = new SseClient({
      url: server.url,
      key: 'k',
      sleep: never,
      onEvent: (e) => {
        events.push(e);
      },
      onError: (e) => {
        if (e.code === ERROR_CODES.SSE_CONNECTION) ended.resolve();
      },
    });
    void client.start();
    await ended.promise;
    await client.close();
    expect(events.map((e) => e.id)).toEqual(['1']);
    expect(client.lastEventId).toBe('1');
  });

  it('a throwing or rejecting handler is reported and the next event still arrives', async () => {
    const server = await serve((_req, res) => {
      openStream(res);
      res.write(
        frame('new_mail', '1', mail(1, 'a')) +
          frame('new_mail', '2', mail(2, 'b')) +
          frame('new_mail', '3', mail(3, 'c')),
      );
    });
    const third = deferred();
    const failures: AgentMailError[] = [];
    const twoFailures = deferred();
    const options: SseClientOptions = {
      url: server.url,
      key: 'k',
      sleep: never,
      onEvent: (e) => {
        if (e.id === '1') throw new Error('boom');
        if (e.id === '2') return Promise.reject(new Error('async boom'));
        third.resolve();
      },
      onError: (e) => {
        failures.push(e);
        if (failures.length === 2) twoFailures.resolve();
      },
    };
    const client = new SseClient(options);
    void client.start();
    await third.promise;
    await twoFailures.promise;
    await client.close();
    expect(failures.map((e) => e.code)).toEqual([
      ERROR_CODES.SSE_HANDLER_FAILED,
      ERROR_CODES.SSE_HANDLER_FAILED,
    ]);
    expect(failures[0]?.message).toContain('boom');
  });

  it('a slow handler does not stall reading (SPEC B-12)', async () => {
    const firstStarted = deferred();
    const server = await serve(async (_req, res) => {
      openStream(res);
      res.write(frame('new_mail', '1', mail(1, 'a')));
      await firstStarted.promise; // event 2 is sent while the handler of event 1 still runs
      res.write(frame('new_mail', '2', mail(2, 'b')));
    });
    const second = deferred();
    const release = deferred();
    const client = new SseClient({
      url: server.url,
      key: 'k',
      sleep: never,
      onEvent: async (e) => {
        if (e.id === '1') {
          firstStarted.resolve();
          await release.promise; // released only after event 2 arrived
        } else second.resolve();
      },
    });
    void client.start();
    await second.promise;
    release.resolve();
    await client.close();
    expect(client.lastEventId).toBe('2');
  });
});

describe('SseClient over another event map (a person stream, GET /me/events)', () => {
  it('decodes the events of the map it is given, on the path it is given, with the person token', async () => {
    const request = {
      request_id: 'p1',
      agent_name: 'pi',
      session_id: 's1',
      kind: 'approval',
      question: 'run rm?',
      options: ['approve', 'deny'],
    };
    const server = await serve((_req, res) => {
      openStream(res);
      res.write(frame('permission_request', '7', request));
      res.write(frame('new_mail', '8', { mail_id: 'm8' }));
      res.write(
        frame('new_mail', '9', {
          mail_id: 'm9',
          session_id: 's1',
          from_name: 'pi',
          from_human: false,
          subject: 'Re: hi',
          in_reply_to: 'm1',
        }),
      );
    });
    const events: PersonEvent[] = [];
    const errors: AgentMailError[] = [];
    const done = deferred();
    const client = new SseClient({
      url: server.url,
      key: 'user-token',
      path: routePath('meEvents'),
      events: PERSON_EVENT_SCHEMAS,
      sleep: never,
      onEvent: (e) => {
        events.push(e);
        if (e.id === '9') done.resolve();
      },
      onError: (e) => errors.push(e),
    });
    void client.start();
    await done.promise;
    await client.close();
    expect(events.map((e) => e.type)).toEqual(['permission_request', 'new_mail']);
    const first = events[0];
    if (first?.type !== 'permission_request') throw new Error('expected a permission_request');
    expect(first.data.question).toBe('run rm?');
    expect(errors.map((e) => e.code)).toEqual([ERROR_CODES.SSE_EVENT_INVALID]);
    expect(errors[0]?.message).toContain(
      'event new_mail "8" breaks the contract: field "session_id": required',
    );
    expect(server.requests[0]?.url).toBe('/api/v1/me/events');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer user-token');
  });
});

// ---- transports: fetch (the browser entry), undici (the Node entry) -----------------------------

describe('SseClient transports', () => {
  it('the browser-safe SseClient reads over fetch and, without a key, sends no Authorization (a cookie authenticates)', async () => {
    const server = await serve((_req, res) => {
      openStream(res);
      res.write(frame('new_mail', '1', mail(1, 'über fetch ✉️')));
    });
    const got = deferred<AgentEvent>();
    const client = new FetchSseClient({ url: server.url, sleep: never, onEvent: (e) => got.resolve(e) });
    void client.start();
    const event = await got.promise;
    await client.close();
    expect(event.type === 'new_mail' ? event.data.subject : '').toBe('über fetch ✉️');
    const viaNode = deferred();
    const node = new SseClient({ url: server.url, key: 'k', sleep: never, onEvent: () => viaNode.resolve() });
    void node.start();
    await viaNode.promise;
    await node.close();
    const [browser, undici] = server.requests;
    expect(browser?.headers.authorization).toBeUndefined();
    expect(browser?.headers.accept).toBe('text/event-stream');
    // fetch marks its requests; undici's request (the Node entry's default) does not
    expect(browser?.headers['sec-fetch-mode']).toBe('cors');
    expect(undici?.headers['sec-fetch-mode']).toBeUndefined();
    expect(undici?.headers.authorization).toBe('Bearer k');
  });

  const TRANSPORTS = [
    ['fetch', {}],
    ['undici', { transport: undiciTransport }],
  ] as const;

  it.each(TRANSPORTS)(
    'over %s: a stream silent for idleTimeoutMs is dropped and reopened with Last-Event-ID',
    async (_name, transport) => {
      const reopened = deferred();
      const server = await serve((_req, res, index) => {
        openStream(res);
        if (index === 0)
          res.write(frame('new_mail', '1', mail(1, 'a'))); // then nothing, not even a ping
        else reopened.resolve();
      });
      const errors: AgentMailError[] = [];
      const client = new FetchSseClient({
        url: server.url,
        key: 'k',
        idleTimeoutMs: 300,
        sleep: async () => {},
        ...transport,
        onEvent: () => {},
        onError: (e) => errors.push(e),
      });
      void client.start();
      await reopened.promise;
      await client.close();
      expect(errors.map((e) => e.code)).toEqual([ERROR_CODES.SSE_CONNECTION]);
      expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '1']);
    },
  );

  it.each(TRANSPORTS)(
    'over %s: keep-alive comments hold a stream open past idleTimeoutMs',
    async (_name, transport) => {
      const server = await serve(async (_req, res) => {
        openStream(res);
        // 1.5 s of pings 50 ms apart, against an idle timeout of 1 s
        for (let i = 0; i < 30; i++) {
          res.write(': ping\n\n');
          await delay(50);
        }
        res.write(frame('new_mail', '2', mail(2, 'after the pings')));
      });
      const got = deferred();
      const errors: AgentMailError[] = [];
      const client = new FetchSseClient({
        url: server.url,
        key: 'k',
        idleTimeoutMs: 1_000,
        sleep: never,
        ...transport,
        onEvent: () => got.resolve(),
        onError: (e) => {
          errors.push(e); // a drop ends the wait at once (no reconnect: sleep never ends)
          got.resolve();
        },
      });
      void client.start();
      await got.promise;
      await client.close();
      expect(errors).toEqual([]);
      expect(server.requests.length).toBe(1);
    },
  );
});
