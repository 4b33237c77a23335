/**
 * The one typed client of the Gateway API, driven by the endpoint table (`ENDPOINTS` of
 * @agentmail/protocol): `call(endpointId, { params, query, body })` with types inferred from the
 * endpoint's schemas and the answer decoded with its response schema.
 *
 * Why a transport seam, and why here: this core is browser-safe (no Node built-in, no undici
 * import), so the web mailbox can use the very same client over the browser's `fetch`
 * (`fetchTransport` of http-transport.ts, the default). In Node every facade passes
 * `undiciTransport` (node-transfer.ts) instead: undici's `request`, as the clients used before —
 * an undici `dispatcher` (agent, proxy) works, uploads stream from disk, and no port is refused
 * (fetch refuses "bad ports" such as 6000 or 10080, which a Gateway may well listen on).
 * Everything that touches files (upload from a path, download to a path, allowed roots) lives
 * there too. A browser
 * entry for the web mailbox is one `exports` line away (`./client/api` → this module and
 * person-api.ts); `test/client/browser-core.test.ts` keeps them bundling for the browser.
 */
import {
  type BytesEndpointId,
  type EndpointAuth,
  type EndpointId,
  type EndpointOf,
  endpoint,
  type JsonEndpointId,
  routePath,
  UPLOAD_FIELD,
} from '@agentmail/protocol';
import type { z } from 'zod';
import { AgentMailError, ERROR_CODES } from '../errors.js';
import {
  type GatewayCallError,
  GatewayHttpError,
  GatewayNetworkError,
  GatewayResponseError,
  parseErrorBody,
} from './api-errors.js';
import {
  fetchTransport,
  type HttpAnswer,
  type HttpRequest,
  type HttpTransport,
  type UploadFile,
} from './http-transport.js';

/** Time one Gateway call may take, headers and body together, in ms. @default 30_000 */
export const GATEWAY_TIMEOUT_MS = 30_000;

/** Time one attachment upload or download may take, in ms. @default 600_000 */
export const GATEWAY_TRANSFER_TIMEOUT_MS = 600_000;

/** What hooks learn about a request. */
export interface ApiRequestInfo {
  id: EndpointId;
  method: string;
  /** The path with its parameters filled, without the query (`/api/v1/me/mail/m1`). */
  path: string;
  /** The full URL, query included. */
  url: string;
  /** Who the endpoint is for (SPEC G-12). */
  auth: EndpointAuth;
  /** Whether a token is sent. */
  hasToken: boolean;
}

/**
 * ky-style hooks. `beforeRequest` may throw to refuse a call before it is made (the CLI's "no
 * token" usage error); `beforeError` receives each {@link GatewayCallError} and returns what is
 * thrown instead, or `undefined` to throw it as it is (the CLI maps them to its exit codes, the
 * testkit to its own code).
 */
export interface ApiHooks {
  beforeRequest?: (request: ApiRequestInfo) => void;
  beforeError?: (error: GatewayCallError, request: ApiRequestInfo) => unknown;
}

/** Options of {@link ApiClient}; {@link ApiClient.extend} takes the same, partially. */
export interface ApiClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8787` (a path prefix such as `/agentmail` is kept). */
  baseUrl: string;
  /**
   * Agent key or user token, sent as `Authorization: Bearer <token>` to every endpoint that is
   * not `auth: 'none'` (SPEC G-12). Without one, no credential is sent.
   */
  token?: string | undefined;
  /** Time one call may take, in ms. @default {@link GATEWAY_TIMEOUT_MS} */
  timeoutMs?: number;
  /** Time an upload or a download may take, in ms. @default {@link GATEWAY_TRANSFER_TIMEOUT_MS} */
  transferTimeoutMs?: number;
  /** Extra request headers (e.g. `user-agent`); the client's own (authorization, accept, content-type) win. */
  headers?: Readonly<Record<string, string>>;
  /** How requests are sent. @default {@link fetchTransport}() (Node facades pass `undiciTransport`) */
  transport?: HttpTransport;
  /** undici dispatcher (agent, proxy), handed to the transport as is. @default none */
  dispatcher?: unknown;
  /** @default none */
  hooks?: ApiHooks;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call; an abort by the caller is rethrown as is, not wrapped. */
  signal?: AbortSignal | undefined;
  /** Time this call may take, in ms. @default the client's `timeoutMs` (`transferTimeoutMs` for uploads and downloads) */
  timeoutMs?: number | undefined;
  /**
   * The `Idempotency-Key` of a send, forward or permission request (an endpoint marked
   * `idempotent`, SPEC G-41): pass the same one when calling again for the same request (a retry
   * of your own after an error). @default a fresh random key per call
   */
  idempotencyKey?: string | undefined;
}

/**
 * Waits before resending an idempotent call whose request got no answer (connection refused or
 * reset), in ms: the same `Idempotency-Key` each time, within the call's one timeout.
 */
export const IDEMPOTENT_RETRY_DELAYS_MS: readonly number[] = [250, 1_000, 3_000];

/** A fresh `Idempotency-Key`: 128 random bits as hex (getRandomValues works on plain-http pages too). */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    if (signal.aborted) return fail(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      done();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      fail(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

type QueryInput<S extends z.ZodType> = {
  [K in keyof z.input<S>]?: unknown extends z.input<S>[K] ? string | number : z.input<S>[K];
};
type ParamsPart<E> = E extends { params: infer P extends z.ZodType }
  ? { params: z.input<P> }
  : { params?: undefined };
type QueryPart<E> = E extends { query: infer Q extends z.ZodType }
  ? { query?: QueryInput<Q> | undefined }
  : { query?: undefined };
type BodyPart<E> = E extends { body: infer B extends z.ZodType }
  ? { body: z.input<B> }
  : E extends { transport: 'multipart' }
    ? { file: UploadFile }
    : { body?: undefined };

/** What {@link ApiClient.call} takes for endpoint `Id`: its params, query, body (or file), typed from its schemas. */
export type CallInput<Id extends EndpointId> = ParamsPart<EndpointOf<Id>> &
  QueryPart<EndpointOf<Id>> &
  BodyPart<EndpointOf<Id>> &
  CallOptions;

/** What {@link ApiClient.call} resolves with for endpoint `Id`: its answer as the response schema outputs it. */
export type CallOutput<Id extends EndpointId> =
  EndpointOf<Id> extends { response: infer R extends z.ZodType } ? z.output<R> : never;

/** The argument list of a call: optional when nothing in the input is required. */
export type CallArgs<Id extends EndpointId> =
  // biome-ignore lint/complexity/noBannedTypes: `{}` is "no required key" here
  {} extends CallInput<Id> ? [input?: CallInput<Id>] : [input: CallInput<Id>];

/** A download in progress: its headers, and its body to read once. */
export interface ApiDownload {
  status: number;
  /** `content-type` of the answer, '' when none. */
  contentType: string;
  /** File name from `content-disposition`, reduced to a safe base name; '' when none. */
  filename: string;
  /** `content-length`, when given. */
  sizeBytes: number | undefined;
  /**
   * The body, chunk by chunk. A failure while reading is a {@link GatewayNetworkError} (the
   * caller's abort is rethrown as is).
   */
  chunks(): AsyncIterable<Uint8Array>;
  /** The whole body. @throws as {@link ApiDownload.chunks} */
  bytes(): Promise<Uint8Array>;
  /** Drop the body unread (frees the connection). Never rejects. */
  cancel(): Promise<void>;
}

interface RawInput extends CallOptions {
  params?: Readonly<Record<string, string>>;
  query?: Readonly<Record<string, unknown>>;
  body?: unknown;
  file?: UploadFile;
}

/**
 * Join a Gateway base URL and an API path, keeping any path prefix of the base
 * (`http://h/agentmail` + `/api/v1/events` → `http://h/agentmail/api/v1/events`); `undefined`
 * query values are left out.
 * @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `baseUrl` is not an http(s) URL.
 */
export function gatewayUrl(
  baseUrl: string,
  path: string,
  query?: Readonly<Record<string, string | number | boolean | undefined>>,
): URL {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_URL_INVALID,
      `Gateway URL ${JSON.stringify(baseUrl)} is not a URL; give it as http://host:port`,
    );
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_URL_INVALID,
      `Gateway URL ${JSON.stringify(baseUrl)} must start with http:// or https://`,
    );
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  url.search = '';
  url.hash = '';
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

/**
 * File name from a `content-disposition` header (`filename*=UTF-8''…` first, then `filename=`),
 * reduced to a base name without control characters, so a hostile header cannot steer a write
 * into another directory; '' when none.
 */
export function dispositionFilename(header: string): string {
  let name = '';
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (star?.[1]) {
    try {
      name = decodeURIComponent(star[1].trim());
    } catch {
      name = '';
    }
  }
  if (!name)
    name = /filename\s*=\s*"([^"]*)"/.exec(header)?.[1] ?? /filename\s*=\s*([^;\s]+)/.exec(header)?.[1] ?? '';
  const base = name.replaceAll('\\', '/').replace(/\/+$/, '').split('/').pop() ?? '';
  return base === '.' || base === '..' ? '' : [...base].filter((ch) => ch.charCodeAt(0) >= 32).join('');
}

/** A fetch failure carries the real cause (`connect ECONNREFUSED …`) under a generic `TypeError: fetch failed`. */
function networkCause(err: unknown): unknown {
  if (err instanceof TypeError && (err as { cause?: unknown }).cause !== undefined)
    return (err as { cause?: unknown }).cause;
  return err;
}

/**
 * The typed Gateway client; immutable, with {@link ApiClient.extend} for other defaults.
 *
 * Every call throws {@link GatewayHttpError} (`AM_GATEWAY_HTTP`, with `status` and the parsed
 * `body`, SPEC G-13) for a non-2xx answer, {@link GatewayNetworkError} (`AM_GATEWAY_NETWORK`, no
 * status) when no answer came in time, and {@link GatewayResponseError}
 * (`AM_GATEWAY_RESPONSE_INVALID`, with the answer's `status`) when a 2xx answer is not JSON or
 * breaks the response schema — each passed through `hooks.beforeError` first. The caller's own
 * abort is rethrown as it is.
 *
 * @throws AgentMailError `AM_GATEWAY_URL_INVALID` (constructor, extend) when `baseUrl` is not http(s).
 * @example
 * const api = new ApiClient({ baseUrl: 'http://127.0.0.1:8787', token });
 * const { mails } = await api.call('meInbox', { query: { status: 'all', limit: 10 } });
 * const admin = api.extend({ token: adminToken, timeoutMs: 5_000 });
 * await admin.call('adminCreateUser', { body: { name: 'bob' } });
 */
export class ApiClient {
  /** The options this client was made with (read only; derive others with {@link extend}). */
  readonly options: Readonly<ApiClientOptions>;
  readonly #transport: HttpTransport;

  constructor(options: ApiClientOptions) {
    gatewayUrl(options.baseUrl, '/'); // fail early on a bad URL
    this.options = Object.freeze({ ...options });
    this.#transport = options.transport ?? fetchTransport();
  }

  /** Gateway base URL. */
  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /**
   * A new client with these options over this one's (ky's `extend`): given keys replace, `hooks`
   * merge by name, `token: undefined` drops the token.
   */
  extend(options: Partial<ApiClientOptions>): ApiClient {
    const hooks = { ...this.options.hooks, ...options.hooks };
    return new ApiClient({ ...this.options, ...options, hooks });
  }

  /**
   * Call JSON (or multipart upload) endpoint `id` and decode its answer with the endpoint's
   * response schema. Throws the errors listed on the class.
   * @example await api.call('mail', { params: { id: 'm1' } }) // { mail: { … } }
   */
  async call<Id extends JsonEndpointId>(id: Id, ...args: CallArgs<Id>): Promise<CallOutput<Id>> {
    const input = ((args as unknown[])[0] ?? {}) as RawInput;
    const e = endpoint(id);
    if (e.transport !== 'json' && e.transport !== 'multipart')
      throw new TypeError(`ApiClient.call(${id}): a ${e.transport} endpoint; use download() or SseClient`);
    const transfer = e.transport === 'multipart';
    const { res, info, caller } = await this.#send(id, input, transfer);
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw this.#wrap(err, info, caller);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw this.#fail(
        new GatewayResponseError(info.method, info.path, res.status, { reason: 'not_json' }, err),
        info,
      );
    }
    const parsed = e.response.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw this.#fail(
        new GatewayResponseError(
          info.method,
          info.path,
          res.status,
          { reason: 'schema', field: first ? first.path.join('.') : '', issue: first?.message ?? 'invalid' },
          parsed.error,
        ),
        info,
      );
    }
    return parsed.data as CallOutput<Id>;
  }

  /**
   * Start a download from bytes endpoint `id` (`attachment`, `meAttachment`): resolves once the
   * headers of a 2xx answer arrived; read the body with {@link ApiDownload.chunks} or
   * {@link ApiDownload.bytes} within the transfer timeout.
   */
  async download<Id extends BytesEndpointId>(id: Id, ...args: CallArgs<Id>): Promise<ApiDownload> {
    const input = ((args as unknown[])[0] ?? {}) as RawInput;
    const { res, info, caller } = await this.#send(id, input, true);
    const length = Number(res.header('content-length') ?? Number.NaN);
    const wrap = (err: unknown): unknown => this.#wrap(err, info, caller);
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        yield* res.chunks();
      } catch (err) {
        throw wrap(err);
      }
    }
    return {
      status: res.status,
      contentType: res.header('content-type') ?? '',
      filename: dispositionFilename(res.header('content-disposition') ?? ''),
      sizeBytes: Number.isFinite(length) ? length : undefined,
      chunks,
      bytes: async () => {
        const parts: Uint8Array[] = [];
        for await (const c of chunks()) parts.push(c);
        const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const p of parts) {
          out.set(p, at);
          at += p.length;
        }
        return out;
      },
      cancel: () => res.cancel(),
    };
  }

  /** The full URL of endpoint `id` with `params` and `query` (for links and streams). */
  url(
    id: EndpointId,
    params: Readonly<Record<string, string>> = {},
    query?: Readonly<Record<string, string | number | undefined>>,
  ): URL {
    return gatewayUrl(this.options.baseUrl, routePath(id, params), query);
  }

  async #send(
    id: EndpointId,
    input: RawInput,
    transfer: boolean,
  ): Promise<{ res: HttpAnswer; info: ApiRequestInfo; caller: AbortSignal | undefined }> {
    const o = this.options;
    const e = endpoint(id);
    const path = routePath(id, input.params ?? {});
    const query: Record<string, string | number | boolean | undefined> = {};
    for (const [k, v] of Object.entries(input.query ?? {}))
      if (v !== undefined)
        query[k] = typeof v === 'object' ? JSON.stringify(v) : (v as string | number | boolean);
    const url = gatewayUrl(o.baseUrl, path, query).href;
    const token = o.token === undefined || o.token === '' ? undefined : o.token;
    const sendToken = e.auth !== 'none' && token !== undefined;
    const info: ApiRequestInfo = { id, method: e.method, path, url, auth: e.auth, hasToken: sendToken };
    o.hooks?.beforeRequest?.(info);
    const headers: Record<string, string> = {
      ...o.headers,
      accept: e.transport === 'bytes' ? '*/*' : 'application/json',
    };
    if (sendToken) headers.authorization = `Bearer ${token}`;
    // G-41: every send carries a key, and a resend after "no answer" the same one.
    const idempotencyKey = e.idempotent ? (input.idempotencyKey ?? newIdempotencyKey()) : undefined;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    let body: HttpRequest['body'];
    if (input.file !== undefined) body = { field: UPLOAD_FIELD, file: input.file };
    else if (input.body !== undefined) {
      body = JSON.stringify(input.body);
      headers['content-type'] = 'application/json';
    }
    const caller = input.signal;
    const timeoutMs =
      input.timeoutMs ??
      (transfer ? (o.transferTimeoutMs ?? GATEWAY_TRANSFER_TIMEOUT_MS) : (o.timeoutMs ?? GATEWAY_TIMEOUT_MS));
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    let res: HttpAnswer | undefined;
    for (let attempt = 0; res === undefined; attempt++) {
      try {
        res = await this.#transport({
          url,
          method: e.method,
          headers,
          signal,
          ...(body === undefined ? {} : { body }),
          ...(o.dispatcher === undefined ? {} : { dispatcher: o.dispatcher }),
        });
      } catch (err) {
        const delay = IDEMPOTENT_RETRY_DELAYS_MS[attempt];
        // Only an idempotent call is sent again, and only while its time lasts.
        if (idempotencyKey === undefined || delay === undefined || signal.aborted)
          throw this.#wrap(err, info, caller);
        try {
          await pause(delay, signal);
        } catch {
          throw this.#wrap(err, info, caller);
        }
      }
    }
    if (res.status >= 200 && res.status < 300) return { res, info, caller };
    let text = '';
    try {
      text = await res.text();
    } catch {
      text = '';
    }
    throw this.#fail(
      new GatewayHttpError(info.method, path, res.status, parseErrorBody(res.status, text)),
      info,
    );
  }

  #fail(error: GatewayCallError, info: ApiRequestInfo): unknown {
    return this.options.hooks?.beforeError?.(error, info) ?? error;
  }

  #wrap(err: unknown, info: ApiRequestInfo, caller: AbortSignal | undefined): unknown {
    if (caller?.aborted) return caller.reason ?? err; // the caller's abort: not a network failure
    if (err instanceof AgentMailError) return err;
    return this.#fail(new GatewayNetworkError(info.method, info.path, networkCause(err)), info);
  }
}
