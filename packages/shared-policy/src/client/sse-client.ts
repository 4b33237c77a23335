/**
 * The SSE reader of the Gateway's event streams, browser-safe: it sends its requests through an
 * {@link HttpTransport} (`fetch` by default; the Node entry's `SseClient` defaults to undici, see
 * node-sse.ts), so the web mailbox and the bridges share one reconnect, backoff and Last-Event-ID
 * logic. No Node built-in, no undici (test/client/browser-core.test.ts bundles it).
 */
import {
  AGENT_EVENT_SCHEMAS,
  type EventSchemas,
  isTransientStatus,
  routePath,
  type StreamEvent,
} from '@agentmail/protocol';
import { AgentMailError, ERROR_CODES } from '../errors.js';
import { gatewayUrl } from './api-client.js';
import { fetchTransport, type HttpTransport } from './http-transport.js';
import { decodeSseEvent, type SseFrame, SseFrameDecoder } from './sse-decoder.js';

/** First reconnect delay, in ms; doubles per failed attempt. @default 1_000 */
export const SSE_INITIAL_BACKOFF_MS = 1_000;
/** Longest reconnect delay, in ms (also used after a permanent 4xx). @default 30_000 */
export const SSE_MAX_BACKOFF_MS = 30_000;
/** A connection that stayed open this long (or delivered an event) resets the backoff, in ms. @default 30_000 */
export const SSE_HEALTHY_AFTER_MS = 30_000;
/**
 * A stream silent for this long is treated as dead and reopened, in ms (a half-open TCP
 * connection sends no FIN; counted from the request, reset by every chunk). The Gateway's
 * keep-alive comments must come more often. @default 120_000
 */
export const SSE_IDLE_TIMEOUT_MS = 120_000;

/** Sleep that rejects (or resolves early) when `signal` aborts; injected in tests. */
export type SseSleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** Passed to `onOpen` for each successful connection. */
export interface SseOpenInfo {
  /** The events URL connected to. */
  url: string;
  /** The `Last-Event-ID` sent, or undefined when none was sent. */
  lastEventId: string | undefined;
  /** 1 for the first connection, 2 for the first reconnect, … */
  connection: number;
}

/** The agent's events (`GET /events`): the default event map of {@link SseClient}. */
export type AgentEventSchemas = typeof AGENT_EVENT_SCHEMAS;

/**
 * Options of {@link SseClient} for a stream whose event types are `M` (default: the agent's
 * events; a person's stream is `{ path: routePath('meEvents'), events: PERSON_EVENT_SCHEMAS }`).
 */
export interface SseClientOptions<M extends EventSchemas = AgentEventSchemas> {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080`; the events route is appended. */
  url: string;
  /**
   * Agent key (or, on a person's stream, the user token), sent as `Authorization: Bearer <key>`
   * (see SPEC G-12). Omitted (or '') sends no Authorization header: in the web mailbox the
   * browser sends its session cookie itself.
   */
  key?: string;
  /** Extra request headers (e.g. `user-agent`). Authorization and Last-Event-ID are set by the client. */
  headers?: Readonly<Record<string, string>>;
  /** Events path. @default routePath('events') → `/api/v1/events` */
  path?: string;
  /** Event types of the stream and their payload schemas. @default AGENT_EVENT_SCHEMAS */
  events?: M;
  /** Cursor to resume from on the first connection (a persisted `lastEventId`), see SPEC B-1. */
  lastEventId?: string;
  /**
   * Called for each valid event, in stream order. Not awaited: a slow or async handler never
   * stalls reading (see SPEC B-12). A throw or rejection is reported as `AM_SSE_HANDLER_FAILED`.
   */
  onEvent: (event: StreamEvent<M>) => void | Promise<void>;
  /**
   * Called with every non-fatal problem: `AM_SSE_HTTP` (non-200 or not an event stream, with
   * `status`), `AM_SSE_CONNECTION` (dropped or failed connection), `AM_SSE_EVENT_INVALID`,
   * `AM_SSE_EVENT_UNKNOWN`, `AM_SSE_HANDLER_FAILED`. The client keeps running.
   */
  onError?: (error: AgentMailError) => void;
  /** Called when a connection is open (status 200, `text/event-stream`). */
  onOpen?: (info: SseOpenInfo) => void;
  /** Aborting it is the same as {@link SseClient.close}. */
  signal?: AbortSignal;
  /** @default a `setTimeout` that ends early when its signal aborts */
  sleep?: SseSleep;
  /** Clock in ms, for the healthy-connection check. @default Date.now */
  now?: () => number;
  /** Random source in [0, 1) for jitter. @default Math.random */
  random?: () => number;
  /** @default {@link SSE_INITIAL_BACKOFF_MS} */
  initialBackoffMs?: number;
  /** @default {@link SSE_MAX_BACKOFF_MS} */
  maxBackoffMs?: number;
  /** Spread each delay over [delay/2, delay) so many bridges do not reconnect at once. @default true */
  jitter?: boolean;
  /** @default {@link SSE_HEALTHY_AFTER_MS} */
  healthyAfterMs?: number;
  /** @default {@link SSE_IDLE_TIMEOUT_MS} */
  idleTimeoutMs?: number;
  /**
   * How the stream is requested. @default {@link fetchTransport}() here; `undiciTransport` for the
   * `SseClient` of the Node entry (`@agentmail/shared-policy/client`)
   */
  transport?: HttpTransport;
  /** An undici dispatcher (agent, proxy), handed to the transport as is (fetch ignores it). @default none */
  dispatcher?: unknown;
}

interface Attempt {
  healthy: boolean;
  /** A 4xx other than 408/429: wait the longest delay before trying again. */
  permanent: boolean;
}

const defaultSleep: SseSleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

function abortPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reconnect delay after `failures` failed attempts in a row, in ms: `initial * 2^failures`
 * capped at `max`; with jitter, spread over `[d/2, d)`. A permanent status waits `max`.
 * Pure; exported for tests and for bridges that reconnect other streams (see SPEC B-2).
 */
export function sseBackoffMs(
  failures: number,
  options: { initialMs: number; maxMs: number; jitter: boolean; random: () => number; permanent?: boolean },
): number {
  const full = options.permanent ? options.maxMs : Math.min(options.maxMs, options.initialMs * 2 ** failures);
  return options.jitter ? Math.floor(full / 2 + options.random() * (full / 2)) : full;
}

/**
 * An event stream of the Gateway (see SPEC B-2, G-20..G-22) over an {@link HttpTransport}, generic
 * over its event schemas: by default the agent's `GET /events` (`AGENT_EVENT_SCHEMAS`); a person's
 * `GET /me/events` with `PERSON_EVENT_SCHEMAS`. This class defaults to `fetch` (the browser); the
 * Node entry's `SseClient` is the same class defaulting to undici.
 *
 * - Frame state lives across chunks: bytes go through one {@link SseFrameDecoder} per
 *   connection (so a frame or a multi-byte character cut between chunks survives); a partial
 *   frame left by a dropped connection is discarded.
 * - Reconnects forever with capped exponential backoff (optional jitter), reset after a
 *   healthy connection; each reconnect sends `Last-Event-ID` with the last id seen. A stream
 *   silent for `idleTimeoutMs` is dropped and reopened.
 * - {@link reconfigure} with a new URL or key drops the cursor (event ids belong to one
 *   Gateway and agent) and reconnects at once.
 * - Events are validated with the event schemas (`decodeSseEvent`); an invalid or unknown one is
 *   reported through `onError` and skipped (its id still advances the cursor, so it is not replayed).
 * - {@link close} or the `signal` stops it; no request is made after that.
 *
 * @example
 * const sse = new SseClient({ url: gatewayUrl, key, onEvent: (e) => queue.push(e), onError: log });
 * void sse.start();
 * // later
 * await sse.close();
 */
export class SseClient<M extends EventSchemas = AgentEventSchemas> {
  #url: string;
  #key: string | undefined;
  readonly #options: SseClientOptions<M>;
  readonly #transport: HttpTransport;
  readonly #events: M;
  readonly #path: string;
  readonly #closed = new AbortController();
  readonly #sleep: SseSleep;
  readonly #now: () => number;
  #cursor: string | undefined;
  /** Bumped by reconfigure: events of an older connection are dropped. */
  #generation = 0;
  /** Aborts the current connection or backoff sleep (reconfigure). */
  #current = new AbortController();
  #done: Promise<void> | undefined;
  #connections = 0;

  /** @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `url` is not an http(s) URL. */
  constructor(options: SseClientOptions<M>) {
    gatewayUrl(options.url, '/'); // fail early on a bad URL (AM_GATEWAY_URL_INVALID)
    this.#options = options;
    this.#events = options.events ?? (AGENT_EVENT_SCHEMAS as unknown as M);
    this.#url = options.url;
    this.#key = options.key;
    this.#path = options.path ?? routePath('events');
    this.#cursor = options.lastEventId || undefined;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#transport = options.transport ?? fetchTransport();
    this.#now = options.now ?? Date.now;
    if (options.signal) {
      if (options.signal.aborted) this.#closed.abort();
      else options.signal.addEventListener('abort', () => void this.close(), { once: true });
    }
  }

  /** Id of the last event seen (the cursor sent as `Last-Event-ID`), or undefined. */
  get lastEventId(): string | undefined {
    return this.#cursor;
  }

  /** True once closed (by {@link close} or the signal). */
  get closed(): boolean {
    return this.#closed.signal.aborted;
  }

  /**
   * Start reading (idempotent). The promise resolves when the client is closed; it never
   * rejects (every problem goes to `onError`).
   */
  start(): Promise<void> {
    this.#done ??= this.#run();
    return this.#done;
  }

  /** Stop reading and abort the open connection; resolves when the loop has ended. */
  async close(): Promise<void> {
    this.#closed.abort();
    await this.#done;
  }

  /**
   * Point the stream at another Gateway URL and/or key (see SPEC B-2, B-18). When either
   * differs, the cursor is dropped (no `Last-Event-ID` to the new Gateway) and the stream
   * reconnects at once; the same URL and key is a no-op.
   */
  reconfigure(config: { url: string; key?: string }): void {
    if (config.url === this.#url && config.key === this.#key) return;
    gatewayUrl(config.url, '/');
    this.#url = config.url;
    this.#key = config.key;
    this.#cursor = undefined;
    this.#generation++;
    this.#current.abort();
  }

  #report(error: AgentMailError): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // an error reporter that throws must not stop the stream
    }
  }

  async #run(): Promise<void> {
    let failures = 0;
    const o = this.#options;
    while (!this.#closed.signal.aborted) {
      this.#current = new AbortController();
      const current = this.#current;
      const generation = this.#generation;
      const signal = AbortSignal.any([this.#closed.signal, current.signal]);
      const attempt = await this.#connect(generation, signal);
      if (this.#closed.signal.aborted) break;
      if (current.signal.aborted) {
        failures = 0; // reconfigured: connect to the new Gateway now
        continue;
      }
      if (attempt.healthy) failures = 0;
      const wait = sseBackoffMs(failures, {
        initialMs: o.initialBackoffMs ?? SSE_INITIAL_BACKOFF_MS,
        maxMs: o.maxBackoffMs ?? SSE_MAX_BACKOFF_MS,
        jitter: o.jitter ?? true,
        random: o.random ?? Math.random,
        permanent: attempt.permanent,
      });
      failures++;
      // Race the sleep with the signal so close()/reconfigure() are prompt even with an
      // injected sleep that ignores its signal.
      await Promise.race([this.#sleep(wait, signal).catch(() => {}), abortPromise(signal)]);
      if (current.signal.aborted) failures = 0;
    }
  }

  async #connect(generation: number, signal: AbortSignal): Promise<Attempt> {
    const o = this.#options;
    const url = gatewayUrl(this.#url, this.#path).href;
    const cursor = this.#cursor;
    const headers: Record<string, string> = {
      ...o.headers,
      accept: 'text/event-stream',
      'cache-control': 'no-cache',
    };
    if (this.#key) headers.authorization = `Bearer ${this.#key}`;
    if (cursor !== undefined) headers['last-event-id'] = cursor;
    const openedAt = this.#now();
    let events = 0;
    const healthy = (): boolean =>
      events > 0 || this.#now() - openedAt >= (o.healthyAfterMs ?? SSE_HEALTHY_AFTER_MS);
    // The idle watch is the transport's too (fetch has no body timeout): silence for
    // idleTimeoutMs, from the request on, aborts this connection only.
    const idleMs = o.idleTimeoutMs ?? SSE_IDLE_TIMEOUT_MS;
    const silent = new AbortController();
    let idle: ReturnType<typeof setTimeout> | undefined;
    const heard = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => silent.abort(), idleMs);
    };
    heard();
    try {
      const res = await this.#transport({
        url,
        method: 'GET',
        headers,
        signal: AbortSignal.any([signal, silent.signal]),
        ...(o.dispatcher === undefined ? {} : { dispatcher: o.dispatcher }),
      });
      heard();
      const type = res.header('content-type') ?? '';
      if (res.status !== 200 || !type.startsWith('text/event-stream')) {
        this.#refused(url, res.status, type, (await res.text().catch(() => '')).slice(0, 300));
        return { healthy: false, permanent: res.status !== 200 && !isTransientStatus(res.status) };
      }
      this.#opened(url, cursor);
      // One decoder per connection: state spans chunks, never connections.
      const decoder = new SseFrameDecoder({
        onFrame: (frame) => {
          if (generation !== this.#generation) return;
          events++;
          this.#dispatch(frame);
        },
      });
      for await (const chunk of res.chunks()) {
        heard();
        if (generation !== this.#generation) break;
        decoder.push(chunk);
      }
      // A clean end: an unterminated last frame is incomplete and is not dispatched.
      if (!signal.aborted)
        this.#report(
          new AgentMailError(
            ERROR_CODES.SSE_CONNECTION,
            `event stream ${url} was closed by the server; reconnecting`,
          ),
        );
    } catch (err) {
      if (!signal.aborted)
        this.#report(
          new AgentMailError(
            ERROR_CODES.SSE_CONNECTION,
            silent.signal.aborted
              ? `event stream ${url} was silent for ${idleMs} ms (no event, no keep-alive); reconnecting`
              : `event stream ${url} failed: ${message(err)}; reconnecting`,
            { cause: err },
          ),
        );
    } finally {
      clearTimeout(idle);
    }
    return { healthy: healthy(), permanent: false };
  }

  /** A connection refused: not 200, or not an event stream. */
  #refused(url: string, status: number, type: string, text: string): void {
    this.#report(
      new AgentMailError(
        ERROR_CODES.SSE_HTTP,
        status !== 200
          ? `event stream ${url} answered HTTP ${status}${text ? `: ${text}` : ''}; check the Gateway URL and agent key`
          : `event stream ${url} answered content-type ${JSON.stringify(type)}, not text/event-stream; check the Gateway URL`,
        { status },
      ),
    );
  }

  /** A connection is open: count it and tell `onOpen`. */
  #opened(url: string, cursor: string | undefined): void {
    this.#connections++;
    try {
      this.#options.onOpen?.({ url, lastEventId: cursor, connection: this.#connections });
    } catch (err) {
      this.#report(
        new AgentMailError(ERROR_CODES.SSE_HANDLER_FAILED, `onOpen handler threw: ${message(err)}`, {
          cause: err,
        }),
      );
    }
  }

  #dispatch(frame: SseFrame): void {
    // Per the SSE rules the last event id persists until a frame sets another ('' clears it).
    if (frame.id !== undefined) this.#cursor = frame.id === '' ? undefined : frame.id;
    const decoded = decodeSseEvent(this.#events, frame, frame.id ?? this.#cursor ?? '');
    if (!decoded.ok) {
      this.#report(decoded.error);
      return;
    }
    const event = decoded.event;
    try {
      const result = this.#options.onEvent(event);
      if (result && typeof result.then === 'function')
        result.then(undefined, (err: unknown) => this.#handlerFailed(event, err));
    } catch (err) {
      this.#handlerFailed(event, err);
    }
  }

  #handlerFailed(event: StreamEvent<M>, err: unknown): void {
    this.#report(
      new AgentMailError(
        ERROR_CODES.SSE_HANDLER_FAILED,
        `onEvent handler failed on ${event.type} ${JSON.stringify(event.id)}: ${message(err)}`,
        { cause: err },
      ),
    );
  }
}
