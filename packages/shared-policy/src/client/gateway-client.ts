/**
 * The agent API of the Gateway (SPEC §3, G-12, G-13) for bridges: a thin typed facade over
 * {@link ApiClient} on undici, one method per agent endpoint, plus streamed attachment transfers
 * from and to disk (node-transfer.ts).
 */
import { resolve } from 'node:path';
import type {
  AttachmentInfo,
  ContactsResponse,
  ForwardMailRequest,
  HeartbeatRequest,
  HeartbeatResponse,
  InboxResponse,
  Mail,
  MarkReadResponse,
  ParticipantsResponse,
  PermissionRequest,
  PermissionRequestResponse,
  RegisterRequest,
  RegisterResponse,
  SendMailRequest,
  SendMailResponse,
  SessionSyncRequest,
  SessionSyncResponse,
  SuggestQuery,
  SuggestResponse,
  ThreadResponse,
  WithdrawPermissionResponse,
  WithdrawReason,
} from '@agentmail/protocol';
import type { Dispatcher } from 'undici';
import {
  ApiClient,
  type CallInput,
  type CallOptions,
  GATEWAY_TIMEOUT_MS,
  GATEWAY_TRANSFER_TIMEOUT_MS,
} from './api-client.js';
import {
  checkDownloadTarget,
  type DownloadResult,
  type FileUploadOptions,
  fileUpload,
  saveDownload,
  undiciTransport,
} from './node-transfer.js';

export type { CallOptions } from './api-client.js';
// The names bridges and the bridge kit import from this module.
export { GATEWAY_TIMEOUT_MS, GATEWAY_TRANSFER_TIMEOUT_MS, gatewayUrl } from './api-client.js';
export { GatewayHttpError, GatewayNetworkError, isPermanent, isTransient } from './api-errors.js';
export type { DownloadResult } from './node-transfer.js';

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

/** Options of {@link GatewayClient.uploadAttachment}. */
export interface UploadOptions extends CallOptions, FileUploadOptions {}

/** Options of {@link GatewayClient.downloadAttachment}. */
export interface DownloadOptions extends CallOptions {
  /** Replace an existing file at the target path. @default false */
  overwrite?: boolean;
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
  readonly #options: GatewayClientOptions;
  readonly #allowedRoots: readonly string[];
  readonly #api: ApiClient;

  /** @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `baseUrl` is not an http(s) URL. */
  constructor(options: GatewayClientOptions) {
    this.#api = new ApiClient({
      transport: undiciTransport,
      baseUrl: options.baseUrl,
      token: options.key,
      timeoutMs: options.timeoutMs ?? GATEWAY_TIMEOUT_MS,
      transferTimeoutMs: options.transferTimeoutMs ?? GATEWAY_TRANSFER_TIMEOUT_MS,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    this.baseUrl = options.baseUrl;
    this.#options = options;
    this.#allowedRoots = (options.allowedRoots ?? []).map((r) => resolve(r));
  }

  /** The agent key this client sends (for a bridge re-keying its SSE stream; never show it to a model). */
  get key(): string {
    return this.#options.key;
  }

  /** A client for another Gateway URL/key with the same timeouts, roots and dispatcher. */
  withConfig(config: { baseUrl: string; key: string }): GatewayClient {
    return new GatewayClient({ ...this.#options, baseUrl: config.baseUrl, key: config.key });
  }

  /** `POST /agent/register`: announce name and platform; idempotent (see SPEC B-1). */
  register(body: RegisterRequest, options?: CallOptions): Promise<RegisterResponse> {
    return this.#api.call('register', { body, ...options });
  }

  /** `POST /agent/heartbeat`: keep online, report workspaces/sessions/models (see SPEC G-25..G-27). */
  heartbeat(body: HeartbeatRequest = {}, options?: CallOptions): Promise<HeartbeatResponse> {
    return this.#api.call('heartbeat', { body, ...options });
  }

  /** `GET /mail/inbox`: unread (default) or all mails, newest page of `limit` (default 5). */
  inbox(query: NonNullable<CallInput<'inbox'>['query']> = {}, options?: CallOptions): Promise<InboxResponse> {
    return this.#api.call('inbox', { query, ...options });
  }

  /** `POST /mail/read`: mark exactly these mails read (see SPEC B-17). */
  markRead(ids: readonly string[], options?: CallOptions): Promise<MarkReadResponse> {
    return this.#api.call('markRead', { body: { ids: [...ids] }, ...options });
  }

  /** `GET /agent/mail/{id}`: one mail with body, attachments, participants, reply address. */
  async mail(id: string, options?: CallOptions): Promise<Mail> {
    return (await this.#api.call('mail', { params: { id }, ...options })).mail;
  }

  /** `GET /agent/mail/{id}/thread`: the whole thread, oldest first, paged by `offset`. */
  thread(
    id: string,
    query: NonNullable<CallInput<'thread'>['query']> = {},
    options?: CallOptions,
  ): Promise<ThreadResponse> {
    return this.#api.call('thread', { params: { id }, query, ...options });
  }

  /** `POST /mail/send` (see SPEC G-31..G-35). */
  send(body: SendMailRequest, options?: CallOptions): Promise<SendMailResponse> {
    return this.#api.call('send', { body, ...options });
  }

  /** `POST /mail/{id}/forward`: quotes the original and its attachments. */
  forward(id: string, body: ForwardMailRequest, options?: CallOptions): Promise<SendMailResponse> {
    return this.#api.call('forward', { params: { id }, body, ...options });
  }

  /** `POST /permission/request` (see SPEC G-38, P-5, P-9). */
  permissionRequest(body: PermissionRequest, options?: CallOptions): Promise<PermissionRequestResponse> {
    return this.#api.call('permissionRequest', { body, ...options });
  }

  /**
   * `POST /permission/{id}/withdraw`: the call that asked stopped waiting (its turn timed out or
   * was stopped, or the bridge shuts down); the person is told it no longer waits.
   */
  permissionWithdraw(
    id: string,
    reason: WithdrawReason,
    options?: CallOptions,
  ): Promise<WithdrawPermissionResponse> {
    return this.#api.call('permissionWithdraw', { params: { id }, body: { reason }, ...options });
  }

  /** `GET /agent/contacts`: agents and people (read only). */
  contacts(options?: CallOptions): Promise<ContactsResponse> {
    return this.#api.call('contacts', { ...options });
  }

  /** `GET /agent/contacts/suggest?name=&path=`: addresses that fit a name and/or path. */
  suggest(query: SuggestQuery, options?: CallOptions): Promise<SuggestResponse> {
    return this.#api.call('suggest', { query, ...options });
  }

  /** `GET /agent/sessions/{id}/participants`: who is in a session and who has not spoken. */
  participants(sessionId: string, options?: CallOptions): Promise<ParticipantsResponse> {
    return this.#api.call('participants', { params: { id: sessionId }, ...options });
  }

  /** `POST /sessions/{id}/sync`: naming sync, answers the final alias (see SPEC B-11). */
  sessionSync(
    sessionId: string,
    body: SessionSyncRequest,
    options?: CallOptions,
  ): Promise<SessionSyncResponse> {
    return this.#api.call('sessionSync', { params: { id: sessionId }, body, ...options });
  }

  /**
   * `POST /attachments`: upload a file as multipart field `file`, streamed from disk (the file is
   * never read into memory whole).
   *
   * @param filePath - absolute path of the file
   * @throws AgentMailError `AM_GATEWAY_PATH_RELATIVE` for a relative path,
   *   `AM_GATEWAY_FILE_UNREADABLE` when it is not a readable regular file,
   *   `AM_GATEWAY_UPLOAD_TOO_LARGE` above 25 MB (`ATTACHMENT_MAX_BYTES`); and the call errors above.
   */
  async uploadAttachment(filePath: string, options: UploadOptions = {}): Promise<AttachmentInfo> {
    const file = await fileUpload(filePath, options);
    const res = await this.#api.call('uploadAttachment', {
      file,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
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
    const checked = await checkDownloadTarget(target, this.#allowedRoots);
    const download = await this.#api.download('attachment', {
      params: { id },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return saveDownload(download, checked, { id, overwrite: options.overwrite });
  }
}
