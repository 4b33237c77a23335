import { randomBytes } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { lstat, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ATTACHMENT_MAX_BYTES,
  type AttachmentInfo,
  ContactsResponse,
  ErrorBody,
  type ForwardMailRequest,
  type HeartbeatRequest,
  HeartbeatResponse,
  type InboxQuery,
  InboxResponse,
  isTransientStatus,
  type Mail,
  MailResponse,
  MarkReadResponse,
  ParticipantsResponse,
  type PermissionRequest,
  PermissionRequestResponse,
  type RegisterRequest,
  RegisterResponse,
  type EndpointId as RouteName,
  routePath,
  type SendMailRequest,
  SendMailResponse,
  type SessionSyncRequest,
  SessionSyncResponse,
  type SuggestQuery,
  SuggestResponse,
  type ThreadQuery,
  ThreadResponse,
  UploadAttachmentResponse,
} from '@agentmail/protocol';
import { type Dispatcher, FormData, request } from 'undici';
import type { z } from 'zod';
import { AgentMailError, ERROR_CODES, hasErrorCode } from '../errors.js';

/** Time one Gateway call may take, headers and body together, in ms. @default 30_000 */
export const GATEWAY_TIMEOUT_MS = 30_000;

/** Time one attachment upload or download may take, in ms. @default 600_000 */
export const GATEWAY_TRANSFER_TIMEOUT_MS = 600_000;

/** Options of {@link GatewayClient}. */
export interface GatewayClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080` (a path prefix such as `/agentmail` is kept). */
  baseUrl: string;
  /** Agent key, sent as `Authorization: Bearer <key>` (see SPEC G-12). */
  key: string;
  /** Time one call may take, in ms. @default {@link GATEWAY_TIMEOUT_MS} */
  timeoutMs?: number;
  /** Time an upload or download may take, in ms. @default {@link GATEWAY_TRANSFER_TIMEOUT_MS} */
  transferTimeoutMs?: number;
  /**
   * Absolute directories a download may write into (the target's real directory must be one of
   * them or below). Empty means every download is refused. @default []
   */
  allowedRoots?: readonly string[];
  /** undici dispatcher (agent, proxy, mock). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call; an abort by the caller is rethrown as is, not wrapped. */
  signal?: AbortSignal;
}

/** Options of {@link GatewayClient.uploadAttachment}. */
export interface UploadOptions extends CallOptions {
  /** File name stored with the attachment. @default the file's base name */
  filename?: string;
  /** MIME type. @default 'application/octet-stream' */
  contentType?: string;
}

/** Options of {@link GatewayClient.downloadAttachment}. */
export interface DownloadOptions extends CallOptions {
  /** Replace an existing file at the target path. @default false */
  overwrite?: boolean;
}

/** Result of {@link GatewayClient.downloadAttachment}. */
export interface DownloadResult {
  /** Absolute path of the written file. */
  path: string;
  size_bytes: number;
  /** File name the Gateway gave (Content-Disposition), '' when none. */
  filename: string;
  content_type: string;
}

/**
 * An HTTP answer outside 2xx (see SPEC G-13). `status` decides retry vs give up
 * ({@link isTransient}); `body` is the parsed error body (a non-JSON body becomes
 * `{ error: 'http_<status>', detail: <text> }`). Code `AM_GATEWAY_HTTP`.
 */
export class GatewayHttpError extends AgentMailError {
  declare readonly status: number;
  readonly body: ErrorBody;
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, status: number, body: ErrorBody) {
    const words = [body.detail, body.suggestion].filter((w) => w !== undefined && w !== '').join(' ');
    super(
      ERROR_CODES.GATEWAY_HTTP,
      `${method} ${path} failed with HTTP ${status} ${body.error}${words ? `: ${words}` : ''}`,
      {
        status,
      },
    );
    this.name = 'GatewayHttpError';
    this.body = body;
    this.method = method;
    this.path = path;
  }
}

/**
 * The Gateway could not be reached or the call timed out: no status, always transient (see
 * SPEC G-13). Code `AM_GATEWAY_NETWORK`; `cause` is the undici error.
 */
export class GatewayNetworkError extends AgentMailError {
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(ERROR_CODES.GATEWAY_NETWORK, `${method} ${path} did not get an answer (${why}); retry later`, {
      cause,
    });
    this.name = 'GatewayNetworkError';
    this.method = method;
    this.path = path;
  }
}

function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' && Number.isFinite(status) ? status : undefined;
}

/**
 * True when the failed call may succeed later: a network error or timeout (no status), or a
 * 5xx, 408 or 429 status — decided from the status alone (see SPEC G-13). Checks `code` and
 * `status`, not `instanceof`, so it works across duplicate package copies.
 */
export function isTransient(err: unknown): boolean {
  if (hasErrorCode(err, ERROR_CODES.GATEWAY_NETWORK)) return true;
  const status = statusOf(err);
  return status !== undefined && isTransientStatus(status);
}

/**
 * True when the call will never succeed as sent: it has an HTTP status that is not transient
 * (every other 4xx; also a 2xx whose body broke the contract). Network errors and errors
 * without a status are not permanent (see SPEC G-13).
 */
export function isPermanent(err: unknown): boolean {
  if (hasErrorCode(err, ERROR_CODES.GATEWAY_NETWORK)) return false;
  const status = statusOf(err);
  return status !== undefined && !isTransientStatus(status);
}

/**
 * Join a Gateway base URL and an API path, keeping any path prefix of the base
 * (`http://h/agentmail` + `/api/v1/events` → `http://h/agentmail/api/v1/events`).
 * @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `baseUrl` is not an http(s) URL.
 */
export function gatewayUrl(
  baseUrl: string,
  path: string,
  query?: Record<string, string | number | undefined>,
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

function firstHeader(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** File name from a Content-Disposition header, reduced to a safe base name; '' when none. */
function dispositionFilename(header: string): string {
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
  // Only a base name: a hostile header must not steer the write into another directory.
  const base = basename(name.replaceAll('\\', '/'));
  return base === '.' || base === '..' ? '' : [...base].filter((ch) => ch.charCodeAt(0) >= 32).join('');
}

function isInside(dir: string, root: string): boolean {
  return dir === root || dir.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The agent API of the Gateway over undici (see SPEC §3, G-12, G-13): one method per endpoint,
 * `Authorization: Bearer <key>`, every answer validated with the protocol schema.
 *
 * Every method throws {@link GatewayHttpError} (`AM_GATEWAY_HTTP`, with `status` and `body`) for
 * a non-2xx answer, {@link GatewayNetworkError} (`AM_GATEWAY_NETWORK`, no status) when no answer
 * came, and `AM_GATEWAY_RESPONSE_INVALID` (with the answer's `status`) when a 2xx answer does not
 * match the schema. Use {@link isTransient} / {@link isPermanent} to decide about a retry.
 *
 * @example
 * const gw = new GatewayClient({ baseUrl: 'http://127.0.0.1:8080', key: process.env.AGENTMAIL_AGENT_KEY! });
 * await gw.register({ name: 'pi', platform: 'pi' });
 * const { mails } = await gw.inbox({ status: 'unread' });
 */
export class GatewayClient {
  /** Base URL this client talks to. */
  readonly baseUrl: string;
  readonly #key: string;
  readonly #timeoutMs: number;
  readonly #transferTimeoutMs: number;
  readonly #allowedRoots: readonly string[];
  readonly #dispatcher: Dispatcher | undefined;

  /** @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `baseUrl` is not an http(s) URL. */
  constructor(options: GatewayClientOptions) {
    gatewayUrl(options.baseUrl, '/'); // validate early
    this.baseUrl = options.baseUrl;
    this.#key = options.key;
    this.#timeoutMs = options.timeoutMs ?? GATEWAY_TIMEOUT_MS;
    this.#transferTimeoutMs = options.transferTimeoutMs ?? GATEWAY_TRANSFER_TIMEOUT_MS;
    this.#allowedRoots = (options.allowedRoots ?? []).map((r) => resolve(r));
    this.#dispatcher = options.dispatcher;
  }

  /** The agent key this client sends (for a bridge re-keying its SSE stream; never show it to a model). */
  get key(): string {
    return this.#key;
  }

  /** A client for another Gateway URL/key with the same timeouts, roots and dispatcher. */
  withConfig(config: { baseUrl: string; key: string }): GatewayClient {
    return new GatewayClient({
      baseUrl: config.baseUrl,
      key: config.key,
      timeoutMs: this.#timeoutMs,
      transferTimeoutMs: this.#transferTimeoutMs,
      allowedRoots: this.#allowedRoots,
      ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
    });
  }

  /** `POST /agent/register`: announce name and platform; idempotent (see SPEC B-1). */
  register(body: RegisterRequest, options?: CallOptions): Promise<RegisterResponse> {
    return this.#json('POST', 'register', {}, body, RegisterResponse, options);
  }

  /** `POST /agent/heartbeat`: keep online, report workspaces/sessions/models (see SPEC G-25..G-27). */
  heartbeat(body: HeartbeatRequest = {}, options?: CallOptions): Promise<HeartbeatResponse> {
    return this.#json('POST', 'heartbeat', {}, body, HeartbeatResponse, options);
  }

  /** `GET /mail/inbox`: unread (default) or all mails, newest page of `limit` (default 5). */
  inbox(query: z.input<typeof InboxQuery> = {}, options?: CallOptions): Promise<InboxResponse> {
    return this.#json('GET', 'inbox', {}, undefined, InboxResponse, options, {
      status: query.status,
      limit: query.limit === undefined ? undefined : Number(query.limit),
      session_id: query.session_id,
    });
  }

  /** `POST /mail/read`: mark exactly these mails read (see SPEC B-17). */
  markRead(ids: readonly string[], options?: CallOptions): Promise<MarkReadResponse> {
    return this.#json('POST', 'markRead', {}, { ids: [...ids] }, MarkReadResponse, options);
  }

  /** `GET /agent/mail/{id}`: one mail with body, attachments, participants, reply address. */
  async mail(id: string, options?: CallOptions): Promise<Mail> {
    return (await this.#json('GET', 'mail', { id }, undefined, MailResponse, options)).mail;
  }

  /** `GET /agent/mail/{id}/thread`: the whole thread, oldest first, paged by `offset`. */
  thread(
    id: string,
    query: z.input<typeof ThreadQuery> = {},
    options?: CallOptions,
  ): Promise<ThreadResponse> {
    return this.#json('GET', 'thread', { id }, undefined, ThreadResponse, options, {
      offset: query.offset === undefined ? undefined : Number(query.offset),
      limit: query.limit === undefined ? undefined : Number(query.limit),
    });
  }

  /** `POST /mail/send` (see SPEC G-31..G-35). */
  send(body: SendMailRequest, options?: CallOptions): Promise<SendMailResponse> {
    return this.#json('POST', 'send', {}, body, SendMailResponse, options);
  }

  /** `POST /mail/{id}/forward`: quotes the original and its attachments. */
  forward(id: string, body: ForwardMailRequest, options?: CallOptions): Promise<SendMailResponse> {
    return this.#json('POST', 'forward', { id }, body, SendMailResponse, options);
  }

  /** `POST /permission/request` (see SPEC G-38, P-5, P-9). */
  permissionRequest(body: PermissionRequest, options?: CallOptions): Promise<PermissionRequestResponse> {
    return this.#json('POST', 'permissionRequest', {}, body, PermissionRequestResponse, options);
  }

  /** `GET /agent/contacts`: agents and people (read only). */
  contacts(options?: CallOptions): Promise<ContactsResponse> {
    return this.#json('GET', 'contacts', {}, undefined, ContactsResponse, options);
  }

  /** `GET /agent/contacts/suggest?name=&path=`: addresses that fit a name and/or path. */
  suggest(query: SuggestQuery, options?: CallOptions): Promise<SuggestResponse> {
    return this.#json('GET', 'suggest', {}, undefined, SuggestResponse, options, {
      name: query.name,
      path: query.path,
    });
  }

  /** `GET /agent/sessions/{id}/participants`: who is in a session and who has not spoken. */
  participants(sessionId: string, options?: CallOptions): Promise<ParticipantsResponse> {
    return this.#json('GET', 'participants', { id: sessionId }, undefined, ParticipantsResponse, options);
  }

  /** `POST /sessions/{id}/sync`: naming sync, answers the final alias (see SPEC B-11). */
  sessionSync(
    sessionId: string,
    body: SessionSyncRequest,
    options?: CallOptions,
  ): Promise<SessionSyncResponse> {
    return this.#json('POST', 'sessionSync', { id: sessionId }, body, SessionSyncResponse, options);
  }

  /**
   * `POST /attachments`: upload a file as multipart field `file`, streamed from disk (the file is
   * never read into memory whole).
   *
   * @param filePath - absolute path of the file
   * @throws AgentMailError `AM_GATEWAY_PATH_RELATIVE` for a relative path,
   *   `AM_GATEWAY_FILE_UNREADABLE` when it is not a readable regular file,
   *   `AM_GATEWAY_UPLOAD_TOO_LARGE` above {@link ATTACHMENT_MAX_BYTES}; and the call errors above.
   */
  async uploadAttachment(filePath: string, options: UploadOptions = {}): Promise<AttachmentInfo> {
    if (!isAbsolute(filePath))
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_PATH_RELATIVE,
        `upload path ${JSON.stringify(filePath)} is relative; give the absolute path of the file`,
      );
    let size: number;
    try {
      const info = await stat(filePath);
      if (!info.isFile()) throw new Error('not a regular file');
      size = info.size;
    } catch (err) {
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_FILE_UNREADABLE,
        `upload path ${JSON.stringify(filePath)} is not a readable file (${err instanceof Error ? err.message : String(err)}); check the path`,
        { cause: err },
      );
    }
    if (size > ATTACHMENT_MAX_BYTES)
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_UPLOAD_TOO_LARGE,
        `upload ${JSON.stringify(filePath)} is ${size} bytes, above the limit of ${ATTACHMENT_MAX_BYTES} bytes; compress or split it`,
      );
    // openAsBlob gives a file-backed Blob: undici streams it while sending the multipart body.
    const blob = await openAsBlob(filePath, { type: options.contentType ?? 'application/octet-stream' });
    const form = new FormData();
    form.append('file', blob, options.filename ?? basename(filePath));
    const res = await this.#json('POST', 'uploadAttachment', {}, form, UploadAttachmentResponse, options);
    return res.attachment;
  }

  /**
   * `GET /attachments/{id}`: download an attachment, streamed to a file (written under a
   * temporary name in the same directory, then renamed).
   *
   * @param target - absolute file path, or an existing directory (or a path ending in `/`) to
   *   save under the Gateway's file name; the real directory must lie inside `allowedRoots`
   *   and exist
   * @throws AgentMailError `AM_GATEWAY_PATH_RELATIVE`, `AM_GATEWAY_PATH_OUTSIDE_ROOT`,
   *   `AM_GATEWAY_DOWNLOAD_DIR_MISSING`, `AM_GATEWAY_FILE_EXISTS` (without `overwrite`); and the
   *   call errors above.
   */
  async downloadAttachment(
    id: string,
    target: string,
    options: DownloadOptions = {},
  ): Promise<DownloadResult> {
    const checked = await this.#checkTarget(target);
    const path = routePath('attachment', { id });
    const url = gatewayUrl(this.baseUrl, path);
    const signal = this.#signal(options.signal, this.#transferTimeoutMs);
    const res = await this.#send('GET', path, url, undefined, signal, options.signal);
    const contentType = firstHeader(res.headers['content-type']);
    const filename = dispositionFilename(firstHeader(res.headers['content-disposition']));
    const file = checked.isDir
      ? join(checked.dir, filename || `attachment-${id.replace(/[^\w.-]/g, '_')}`)
      : checked.file;
    if (!options.overwrite && (await exists(file))) {
      await res.body.dump();
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_FILE_EXISTS,
        `download target ${JSON.stringify(file)} already exists; choose another path or allow overwriting`,
      );
    }
    const temp = join(checked.dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.part`);
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(res.body, count, createWriteStream(temp, { flags: 'wx' }), { signal });
      await rename(temp, file);
    } catch (err) {
      await rm(temp, { force: true });
      throw this.#wrap('GET', path, err, options.signal);
    }
    return { path: file, size_bytes: size, filename, content_type: contentType };
  }

  /** Resolve and check a download target: absolute, inside an allowed root, directory exists. */
  async #checkTarget(target: string): Promise<{ dir: string; file: string; isDir: boolean }> {
    const fix = this.#allowedRoots.length
      ? `give an absolute path inside one of: ${this.#allowedRoots.join(', ')}`
      : 'no download directory is allowed: configure allowedRoots on the Gateway client';
    if (!isAbsolute(target))
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_PATH_RELATIVE,
        `download path ${JSON.stringify(target)} is relative; ${fix}`,
      );
    const full = resolve(target);
    let isDir = false;
    try {
      isDir = (await stat(full)).isDirectory();
    } catch {
      isDir = false;
    }
    isDir ||= target.endsWith('/') || target.endsWith(sep);
    const dirPath = isDir ? full : dirname(full);
    let dir: string;
    try {
      dir = await realpath(dirPath);
    } catch {
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_DOWNLOAD_DIR_MISSING,
        `download directory ${JSON.stringify(dirPath)} does not exist; create it first or choose an existing directory (${fix})`,
      );
    }
    // Compare real paths: a symlink inside a root must not lead the write outside it.
    const roots = await Promise.all(this.#allowedRoots.map((r) => realpath(r).catch(() => r)));
    if (!roots.some((root) => isInside(dir, root)))
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_PATH_OUTSIDE_ROOT,
        `download path ${JSON.stringify(target)} is outside the allowed directories; ${fix}`,
      );
    return { dir, file: isDir ? dir : join(dir, basename(full)), isDir };
  }

  #signal(caller: AbortSignal | undefined, timeoutMs: number): AbortSignal {
    const timeout = AbortSignal.timeout(timeoutMs);
    return caller ? AbortSignal.any([caller, timeout]) : timeout;
  }

  #wrap(method: string, path: string, err: unknown, caller: AbortSignal | undefined): unknown {
    if (err instanceof AgentMailError) return err;
    if (caller?.aborted) return caller.reason ?? err; // the caller's abort: not a network failure
    return new GatewayNetworkError(method, path, err);
  }

  async #send(
    method: 'GET' | 'POST',
    path: string,
    url: URL,
    body: unknown,
    signal: AbortSignal,
    caller: AbortSignal | undefined,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#key}`,
      accept: 'application/json',
    };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        headers,
        signal,
        ...(payload === undefined ? {} : { body: payload }),
        ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
      });
    } catch (err) {
      throw this.#wrap(method, path, err, caller);
    }
    if (res.statusCode >= 200 && res.statusCode < 300) return res;
    let text = '';
    try {
      text = await res.body.text();
    } catch {
      text = '';
    }
    throw new GatewayHttpError(method, path, res.statusCode, parseErrorBody(res.statusCode, text));
  }

  async #json<S extends z.ZodType>(
    method: 'GET' | 'POST',
    route: RouteName,
    params: Record<string, string>,
    body: unknown,
    schema: S,
    options: CallOptions | undefined,
    query?: Record<string, string | number | undefined>,
  ): Promise<z.output<S>> {
    const path = routePath(route, params);
    const url = gatewayUrl(this.baseUrl, path, query);
    const timeoutMs = body instanceof FormData ? this.#transferTimeoutMs : this.#timeoutMs;
    const signal = this.#signal(options?.signal, timeoutMs);
    const res = await this.#send(method, path, url, body, signal, options?.signal);
    const status = res.statusCode;
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw this.#wrap(method, path, err, options?.signal);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_RESPONSE_INVALID,
        `${method} ${path} answered ${status} with a body that is not JSON; check that the URL points at an AgentMail Gateway`,
        { status },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first ? first.path.join('.') || 'body' : 'body';
      throw new AgentMailError(
        ERROR_CODES.GATEWAY_RESPONSE_INVALID,
        `${method} ${path} answered ${status} with a body that breaks the contract at "${where}" (${first?.message ?? 'invalid'}); update the bridge or the Gateway so their versions match`,
        { status, cause: parsed.error },
      );
    }
    return parsed.data;
  }
}

/** Parse an error answer's body (G-13); a non-JSON or shapeless body becomes `http_<status>`. */
function parseErrorBody(status: number, text: string): ErrorBody {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON (a proxy's HTML page): keep the start of the text as detail
  }
  const detail = text.trim().slice(0, 300);
  return detail ? { error: `http_${status}`, detail } : { error: `http_${status}` };
}
