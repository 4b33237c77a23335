/**
 * A pass-through HTTP proxy between a bridge and the Gateway. Everything is forwarded unchanged;
 * the agent event streams (`GET /api/v1/events`) are also watched, so a test can see when a
 * bridge holds its stream (readiness), which `Last-Event-ID` it sent, and cut a stream in the
 * middle of an event frame (SPEC B-2, G-22).
 */
import { EventEmitter } from 'node:events';
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { routePath } from '@agentmail/protocol';
import { SseFrameDecoder } from '@agentmail/shared-policy/client';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { createLoopbackServer } from './loopback-server.js';

/** One complete event frame forwarded to the bridge. */
export interface EventFrame {
  /** The frame's `id:` field ('' when none). */
  readonly id: string;
  /** The frame's `event:` field, e.g. `new_mail` ('' when none). */
  readonly event: string;
  /** The frame's `data:` field, as sent (JSON text for the Gateway's events). */
  readonly data: string;
}

/** A request the proxy holds back (see {@link GatewayProxy.holdNextRequest}). */
export interface HeldRequest {
  readonly method: string;
  /** Path and query as the client sent them. */
  readonly url: string;
  /** The client closed the connection while the request was held (e.g. its own timeout ran out). */
  readonly abandoned: boolean;
  /** Resolves once the client closed the connection (the process that sent it is gone, or gave up). */
  readonly clientGone: Promise<void>;
  /**
   * Forwards the request now; resolves once its answer was handed on to the client completely
   * (or the connection ended). A request the client {@link abandoned} is not forwarded: it resolves at once.
   */
  release(): Promise<void>;
}

/** One agent event stream that went through the proxy. Updated in place while it is open. */
export interface EventStreamRecord {
  /** 1-based, in the order the requests arrived. */
  readonly seq: number;
  readonly openedAtMs: number;
  /** Request headers as sent by the client, names lower-cased. */
  readonly requestHeaders: Readonly<Record<string, string>>;
  /** The `Last-Event-ID` request header, `undefined` when none was sent. */
  readonly lastEventIdSent: string | undefined;
  /** Status answered (503 while the proxy holds streams), `undefined` until known. */
  readonly status: number | undefined;
  /** Ids of the complete event frames forwarded to the client, in order. */
  readonly deliveredIds: readonly string[];
  /** The complete event frames forwarded to the client, in order. */
  readonly frames: readonly EventFrame[];
  /** The connection has ended (either side, or a cut). */
  readonly closed: boolean;
  /** The proxy cut this connection in the middle of a frame. */
  readonly cut: boolean;
}

/** What {@link GatewayProxy.cutNextEvent} did. */
export interface CutResult {
  /** The stream that was cut. */
  stream: EventStreamRecord;
  /** Id of the last complete frame the client received before the cut, `undefined` if none. */
  lastDeliveredId: string | undefined;
  /** Bytes of the cut frame that were forwarded (the frame minus its data line's end). */
  partialBytes: number;
}

type MutableStream = { -readonly [K in keyof EventStreamRecord]: EventStreamRecord[K] } & {
  deliveredIds: string[];
  frames: EventFrame[];
};

interface PendingHold {
  match: (method: string, path: string, url: string) => boolean;
  resolve: (held: HeldRequest) => void;
}

interface PendingCut {
  hold: boolean;
  resolve: (result: CutResult) => void;
}

// Hop-by-hop headers are the proxy's own business on each leg.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/**
 * Forwards every request to `target`; see the module comment. Start with {@link GatewayProxy.start}.
 * @example
 * const proxy = await GatewayProxy.start(gatewayUrl);
 * // give the bridge proxy.url; later:
 * const cut = await proxy.cutNextEvent({ hold: true }); // cut in the next event frame, refuse reconnects
 * proxy.release();
 */
export class GatewayProxy {
  /** Origin to give the bridge, e.g. `http://127.0.0.1:40125`. */
  readonly url: string;
  readonly #target: URL;
  readonly #server: Server;
  readonly #events = new EventEmitter();
  readonly #streams: MutableStream[] = [];
  readonly #upstreams = new Set<ReturnType<typeof httpRequest>>();
  readonly #eventsPath = routePath('events');
  #pendingCut: PendingCut | undefined;
  #pendingHold: PendingHold | undefined;
  #held = false;
  #closed: Promise<void> | undefined;

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = target;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.#events.setMaxListeners(0);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#handle(req, res));
  }

  /** Starts a proxy on a random 127.0.0.1 port forwarding to `target` (an origin). */
  static async start(target: string): Promise<GatewayProxy> {
    const server = createLoopbackServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new GatewayProxy(server, new URL(target));
  }

  /** Every agent event stream seen so far, in arrival order (live records). */
  eventStreams(): readonly EventStreamRecord[] {
    return [...this.#streams];
  }

  /**
   * First event stream (already answered or to come) whose answer status is known and that
   * satisfies `predicate`. Event-driven.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` after `timeoutMs` (the message lists the streams seen).
   */
  waitForEventStream(
    predicate: (stream: EventStreamRecord) => boolean,
    timeoutMs: number,
  ): Promise<EventStreamRecord> {
    const ready = (s: EventStreamRecord): boolean => s.status !== undefined && predicate(s);
    const found = this.#streams.find(ready);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<EventStreamRecord>((resolve, reject) => {
      const onAnswered = (stream: EventStreamRecord): void => {
        if (!ready(stream)) return;
        clearTimeout(timer);
        this.#events.off('answered', onAnswered);
        resolve(stream);
      };
      const timer = setTimeout(() => {
        this.#events.off('answered', onAnswered);
        const seen = this.#streams.map(
          (s) =>
            `#${s.seq} status=${s.status} last-event-id=${s.lastEventIdSent ?? '(none)'} closed=${s.closed}`,
        );
        reject(
          new TestkitError(
            TESTKIT_ERROR_CODES.WAIT_TIMEOUT,
            `no matching agent event stream (GET ${this.#eventsPath}) within ${timeoutMs} ms; seen: ${seen.length === 0 ? 'none' : seen.join('; ')}. Is the bridge using the gateway URL it was given?`,
          ),
        );
      }, timeoutMs);
      this.#events.on('answered', onAnswered);
    });
  }

  /**
   * Arms a cut: the next event frame forwarded on any open agent event stream is cut after its
   * `data:` field but before the line end, and that connection is destroyed, so the client holds
   * an incomplete frame (which must not be dispatched) and has to reconnect with the last complete
   * id as `Last-Event-ID`. With `hold`, new event streams are answered 503 from the cut on, until
   * {@link release}. Resolves once the cut happened (waits as long as it takes: race it with a
   * timeout).
   */
  cutNextEvent(options: { hold?: boolean } = {}): Promise<CutResult> {
    return new Promise<CutResult>((resolve) => {
      this.#pendingCut = { hold: options.hold === true, resolve };
    });
  }

  /**
   * Arms a hold: the next request (any route but the event stream) for which `match(method,
   * pathname, url)` is true (`url`: path and query as sent) is not forwarded until the test calls `release()` on the resolved
   * {@link HeldRequest}. Lets a test order what a bridge cannot be told, e.g. a mail arriving on
   * the event stream while the bridge's catch-up listing is on its way (SPEC B-20). Resolves when
   * such a request arrives (race it with a timeout). One hold at a time; a new one replaces it.
   */
  holdNextRequest(match: (method: string, path: string, url: string) => boolean): Promise<HeldRequest> {
    return new Promise<HeldRequest>((resolve) => {
      this.#pendingHold = { match, resolve };
    });
  }

  /** Refuse new agent event streams with 503 until {@link release}. */
  hold(): void {
    this.#held = true;
  }

  /** Accept agent event streams again. */
  release(): void {
    this.#held = false;
  }

  /** Stops listening and ends every open connection. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#pendingCut = undefined;
      this.#pendingHold = undefined;
      for (const upstream of this.#upstreams) upstream.destroy();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', this.url).pathname;
    const isEvents = req.method === 'GET' && path === this.#eventsPath;
    let stream: MutableStream | undefined;
    if (isEvents) {
      const lastEventId = req.headers['last-event-id'];
      stream = {
        seq: this.#streams.length + 1,
        openedAtMs: Date.now(),
        requestHeaders: flatten(req.headers),
        lastEventIdSent: Array.isArray(lastEventId) ? lastEventId[0] : lastEventId,
        status: undefined,
        deliveredIds: [],
        frames: [],
        closed: false,
        cut: false,
      };
      this.#streams.push(stream);
      const record = stream;
      res.on('close', () => {
        record.closed = true;
      });
      if (this.#held) {
        record.status = 503;
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(
          JSON.stringify({
            error: 'unavailable',
            detail: 'the test proxy holds event streams for a moment',
          }),
        );
        this.#events.emit('answered', record);
        return;
      }
    }

    const hold = this.#pendingHold;
    if (!isEvents && hold !== undefined && hold.match(req.method ?? 'GET', path, req.url ?? '/')) {
      this.#pendingHold = undefined;
      let released: Promise<void> | undefined;
      // The client may give up while it is held (its own timeout): then there is nothing to
      // forward, and release() must not wait for a close that already happened.
      let gone = false;
      const clientGone = new Promise<void>((resolve) =>
        res.once('close', () => {
          gone = true;
          resolve();
        }),
      );
      hold.resolve({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        get abandoned() {
          return gone;
        },
        clientGone,
        release: () => {
          released ??= gone
            ? Promise.resolve()
            : new Promise<void>((resolve) => {
                res.once('close', () => resolve());
                this.#forward(req, res, undefined);
              });
          return released;
        },
      });
      return;
    }
    this.#forward(req, res, stream);
  }

  /** Forwards one request to the Gateway; an agent event stream (`stream`) is followed frame by frame. */
  #forward(req: IncomingMessage, res: ServerResponse, stream: MutableStream | undefined): void {
    const upstream = httpRequest({
      host: this.#target.hostname,
      port: this.#target.port,
      method: req.method,
      path: req.url,
      headers: { ...forwardable(req.headers), host: this.#target.host },
    });
    this.#upstreams.add(upstream);
    upstream.on('close', () => this.#upstreams.delete(upstream));
    req.pipe(upstream);
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) {
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'bad_gateway', detail: `test proxy: ${error.message}` }));
      } else res.destroy();
      if (stream !== undefined && stream.status === undefined) {
        stream.status = 502;
        this.#events.emit('answered', stream);
      }
    });
    upstream.on('response', (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, forwardable(upRes.headers));
      if (stream === undefined || upRes.statusCode !== 200) {
        if (stream !== undefined) {
          stream.status = upRes.statusCode;
          this.#events.emit('answered', stream);
        }
        upRes.pipe(res);
        return;
      }
      res.flushHeaders();
      stream.status = 200;
      this.#events.emit('answered', stream);
      this.#followEvents(stream, upRes, res, upstream);
    });
  }

  /** Forward an event stream chunk by chunk, tracking complete frames and applying an armed cut. */
  #followEvents(
    stream: MutableStream,
    upRes: IncomingMessage,
    res: ServerResponse,
    upstream: ReturnType<typeof httpRequest>,
  ): void {
    const decoder = new SseFrameDecoder({
      onFrame: (frame) => {
        stream.deliveredIds.push(frame.id ?? '');
        stream.frames.push({ id: frame.id ?? '', event: frame.event ?? '', data: frame.data });
      },
    });
    const forward = (bytes: Buffer, done?: () => void): void => {
      decoder.push(bytes);
      res.write(bytes, done);
    };
    upRes.on('data', (chunk: Buffer) => {
      if (stream.cut) return;
      const pending = this.#pendingCut;
      // Cut inside the first event frame of the chunk: keep its data line but not the line end,
      // so the client has the whole frame except what completes it.
      const dataAt = pending === undefined ? -1 : chunk.indexOf('\ndata:');
      const lineEnd = dataAt < 0 ? -1 : chunk.indexOf('\n', dataAt + 1);
      if (pending === undefined || lineEnd < 0) {
        forward(chunk);
        return;
      }
      this.#pendingCut = undefined;
      if (pending.hold) this.#held = true;
      stream.cut = true;
      const partial = chunk.subarray(0, lineEnd);
      // Destroy only once the partial bytes are handed to the socket, else they may never leave.
      forward(partial, () => {
        upstream.destroy();
        res.socket?.destroy();
        pending.resolve({
          stream,
          lastDeliveredId: stream.deliveredIds.at(-1),
          partialBytes: partial.length,
        });
      });
    });
    upRes.on('end', () => {
      if (!stream.cut) res.end();
    });
    upRes.on('error', () => res.destroy());
  }
}
