/**
 * The person and admin API (`/api/v1/me/…`, `/api/v1/admin/…`, `/healthz`) as a thin typed
 * facade over {@link ApiClient}: used by the `agentmail` CLI, the testkit, and (browser-safe, like
 * its core) the web mailbox to come.
 */
import type {
  AgentKeysResponse,
  AgentsResponse,
  AllowedModelsResponse,
  ContactsResponse,
  CreateUserResponse,
  DecideRequest,
  DecideResponse,
  HealthResponse,
  InboxResponse,
  IssueAgentKeyResponse,
  MailResponse,
  MarkReadResponse,
  PermissionsResponse,
  PersonSendRequest,
  ResetTokenResponse,
  RevokeAgentKeyResponse,
  SendMailResponse,
  SuggestResponse,
  ThreadResponse,
  UploadAttachmentResponse,
  UsersResponse,
  WebSessionResponse,
  WebSignOutResponse,
} from '@agentmail/protocol';
import {
  ApiClient,
  type ApiClientOptions,
  type ApiDownload,
  type CallInput,
  type CallOptions,
} from './api-client.js';

/** Query of {@link PersonApi.inbox}. */
export type PersonInboxQuery = NonNullable<CallInput<'meInbox'>['query']>;

/** Query of {@link PersonApi.thread}. */
export type PersonThreadQuery = NonNullable<CallInput<'meThread'>['query']>;

/**
 * A person's (or, with an admin's token, the admin's) client of the Gateway. Every method is one
 * endpoint of the table and throws what {@link ApiClient.call} throws (`AM_GATEWAY_HTTP` with
 * `status` and `body`, `AM_GATEWAY_NETWORK`, `AM_GATEWAY_RESPONSE_INVALID`, or whatever the
 * client's `beforeError` hook makes of them).
 *
 * @example
 * const me = new PersonApi({ baseUrl: 'http://127.0.0.1:8787', token });
 * const { mails } = await me.inbox({ status: 'unread', limit: 10 });
 * await me.send({ to: 'pi@/srv/app.new', subject: 'Fix the build', body: '…' });
 */
export class PersonApi {
  /** The client the calls go through (its token is the person's). */
  readonly client: ApiClient;

  /** @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `baseUrl` is not an http(s) URL. */
  constructor(client: ApiClient | ApiClientOptions) {
    // By shape, not instanceof: a host may load two copies of this package.
    this.client =
      typeof (client as ApiClient).call === 'function' ? (client as ApiClient) : new ApiClient(client);
  }

  /** `GET /healthz` (no token sent): `status` plus whatever the Gateway adds. */
  health(options?: CallOptions): Promise<HealthResponse> {
    return this.client.call('healthz', { ...options });
  }

  /** `GET /me/contacts`: agents (online, last seen) and people (SPEC G-25). */
  contacts(options?: CallOptions): Promise<ContactsResponse> {
    return this.client.call('meContacts', { ...options });
  }

  /** `GET /me/inbox`: unread by default, `limit` 5 by default (SPEC §3). */
  inbox(query: PersonInboxQuery = {}, options?: CallOptions): Promise<InboxResponse> {
    return this.client.call('meInbox', { query, ...options });
  }

  /** `GET /me/mail/{id}`: one mail with body, participants and attachments (does not mark it read). */
  mail(id: string, options?: CallOptions): Promise<MailResponse> {
    return this.client.call('meMail', { params: { id }, ...options });
  }

  /** `GET /me/mail/{id}/thread`: one page of the thread, oldest first (`offset` 0, `limit` 20 by default). */
  thread(id: string, query: PersonThreadQuery = {}, options?: CallOptions): Promise<ThreadResponse> {
    return this.client.call('meThread', { params: { id }, query, ...options });
  }

  /** `POST /me/mail/read`: mark exactly these mails read. */
  markRead(ids: readonly string[], options?: CallOptions): Promise<MarkReadResponse> {
    return this.client.call('meMarkRead', { body: { ids: [...ids] }, ...options });
  }

  /** `POST /me/mail/send`: a task or a reply (SPEC G-31..G-35). */
  send(body: PersonSendRequest, options?: CallOptions): Promise<SendMailResponse> {
    return this.client.call('meSend', { body, ...options });
  }

  /** `POST /me/mail/{id}/forward`: forward a mail the person can read, quoting it and its attachments. */
  forward(id: string, to: string, comment?: string, options?: CallOptions): Promise<SendMailResponse> {
    return this.client.call('meForward', {
      params: { id },
      body: comment === undefined ? { to } : { to, comment },
      ...options,
    });
  }

  /** `GET /me/contacts/suggest`: addresses for a (partial) name and/or path, as agents get them. */
  suggest(query: { name?: string; path?: string }, options?: CallOptions): Promise<SuggestResponse> {
    return this.client.call('meSuggest', { query, ...options });
  }

  /** `GET /me/agents`: agents with presence, mode enforcement and the person's sessions with them (SPEC H-4). */
  agents(options?: CallOptions): Promise<AgentsResponse> {
    return this.client.call('meAgents', { ...options });
  }

  /**
   * `POST /web/session`: sign in with a user token; the Gateway sets the session cookie (a
   * browser keeps it; the token is not sent again).
   */
  signIn(token: string, options?: CallOptions): Promise<WebSessionResponse> {
    return this.client.call('webSignIn', { body: { token }, ...options });
  }

  /** `GET /web/session`: who is signed in, and until when. */
  session(options?: CallOptions): Promise<WebSessionResponse> {
    return this.client.call('webSession', { ...options });
  }

  /** `DELETE /web/session`: end the web session and clear its cookie. */
  signOut(options?: CallOptions): Promise<WebSignOutResponse> {
    return this.client.call('webSignOut', { ...options });
  }

  /** `POST /me/attachments`: upload one file (multipart field `file`, ≤25 MB; a file-backed Blob streams). */
  upload(blob: Blob, filename: string, options?: CallOptions): Promise<UploadAttachmentResponse> {
    return this.client.call('meUploadAttachment', { file: { blob, filename }, ...options });
  }

  /** `GET /me/attachments/{id}`: start a download; read its body once. */
  download(id: string, options?: CallOptions): Promise<ApiDownload> {
    return this.client.download('meAttachment', { params: { id }, ...options });
  }

  /** `GET /me/permissions?status=pending|all` (default pending). */
  permissions(status: 'pending' | 'all' = 'pending', options?: CallOptions): Promise<PermissionsResponse> {
    return this.client.call('mePermissions', { query: { status }, ...options });
  }

  /** `POST /me/permissions/{id}/decide`: approve (once/always), deny, or answer (SPEC G-38, G-21). */
  decide(id: string, body: DecideRequest, options?: CallOptions): Promise<DecideResponse> {
    return this.client.call('meDecide', { params: { id }, body, ...options });
  }

  /** `POST /admin/users` (admin): the token in the answer is shown once. */
  createUser(name: string, admin = false, options?: CallOptions): Promise<CreateUserResponse> {
    return this.client.call('adminCreateUser', { body: { name, admin }, ...options });
  }

  /** `GET /admin/users` (admin). */
  users(options?: CallOptions): Promise<UsersResponse> {
    return this.client.call('adminUsers', { ...options });
  }

  /** `POST /admin/users/{name}/token` (admin): a new token, shown once; the old ones and their web sessions end. */
  resetToken(name: string, options?: CallOptions): Promise<ResetTokenResponse> {
    return this.client.call('adminResetToken', { params: { name }, ...options });
  }

  /** `GET /admin/agent-keys` (admin): ids, names, created, last used and revoked times, oldest first (never the keys). */
  agentKeys(options?: CallOptions): Promise<AgentKeysResponse> {
    return this.client.call('adminAgentKeys', { ...options });
  }

  /** `POST /admin/agent-keys` (admin): a key bound to one agent name, shown once (SPEC G-12). */
  issueAgentKey(agentName: string, options?: CallOptions): Promise<IssueAgentKeyResponse> {
    return this.client.call('adminIssueAgentKey', { body: { agent_name: agentName }, ...options });
  }

  /** `DELETE /admin/agent-keys/{id}` (admin). */
  revokeAgentKey(keyId: string, options?: CallOptions): Promise<RevokeAgentKeyResponse> {
    return this.client.call('adminRevokeAgentKey', { params: { id: keyId }, ...options });
  }

  /** `GET /admin/platforms/{platform}/models` (admin): the ordered selection with stale flags (SPEC G-26). */
  allowedModels(platform: string, options?: CallOptions): Promise<AllowedModelsResponse> {
    return this.client.call('adminAllowedModels', { params: { platform }, ...options });
  }

  /** `PUT /admin/platforms/{platform}/models` (admin): replace the selection (≤10, SPEC G-26). */
  setAllowedModels(
    platform: string,
    models: readonly string[],
    options?: CallOptions,
  ): Promise<AllowedModelsResponse> {
    return this.client.call('adminSetAllowedModels', {
      params: { platform },
      body: { models: [...models] },
      ...options,
    });
  }
}
