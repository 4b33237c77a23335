import type { z } from 'zod';
import {
  AgentOfflineRequest,
  AgentOfflineResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  RegisterRequest,
  RegisterResponse,
} from './agent.js';
import { API_PREFIX, IdParams } from './common.js';
import {
  ContactsResponse,
  ParticipantsResponse,
  SessionSyncRequest,
  SessionSyncResponse,
  SuggestQuery,
  SuggestResponse,
} from './directory.js';
import { AGENT_EVENT_SCHEMAS, type EventSchemas, PERSON_EVENT_SCHEMAS } from './events.js';
import {
  AgentKeysResponse,
  AllowedModelsRequest,
  AllowedModelsResponse,
  CreateUserRequest,
  CreateUserResponse,
  HealthResponse,
  IssueAgentKeyRequest,
  IssueAgentKeyResponse,
  NameParams,
  PersonSendRequest,
  PlatformParams,
  ResetTokenResponse,
  RevokeAgentKeyResponse,
  UsersResponse,
} from './human.js';
import {
  ForwardMailRequest,
  InboxQuery,
  InboxResponse,
  MailResponse,
  MarkReadRequest,
  MarkReadResponse,
  SendMailRequest,
  SendMailResponse,
  ThreadQuery,
  ThreadResponse,
  UploadAttachmentResponse,
} from './mail.js';
import {
  DecideRequest,
  DecideResponse,
  PermissionRequest,
  PermissionRequestResponse,
  PermissionsQuery,
  PermissionsResponse,
  WithdrawPermissionRequest,
  WithdrawPermissionResponse,
} from './permission.js';
import { AgentsResponse, WebSessionResponse, WebSignInRequest, WebSignOutResponse } from './web.js';

/**
 * Who may call an endpoint (see SPEC G-12): an agent key, a user token (or the web session cookie
 * made from one), an admin's user token (or session), anyone.
 */
export type EndpointAuth = 'agent' | 'person' | 'admin' | 'none';

/** HTTP method of an endpoint. */
export type EndpointMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What every endpoint declares. */
interface EndpointBase {
  method: EndpointMethod;
  /**
   * Full path from the Gateway's origin (`/api/v1/…`, or `/healthz`); `:name` marks a path
   * parameter, whose schema is {@link EndpointBase.params}.
   */
  path: string;
  auth: EndpointAuth;
  /** One sentence for docs/PROTOCOL.md. */
  summary: string;
  /** Path parameters (strict object, one key per `:name` of the path). */
  params?: z.ZodType;
  /** Query string (strict object; values arrive as strings, numbers are coerced). */
  query?: z.ZodType;
  /** JSON body (strict, except the heartbeat's lenient one, G-11). */
  body?: z.ZodType;
  /**
   * Takes an `Idempotency-Key` header (SPEC G-41): a repeat with the same key answers the first
   * answer and creates nothing. The clients send one on every call and reuse it on a retry.
   */
  idempotent?: true;
}

/** A JSON endpoint: JSON (or a multipart upload) in, a JSON answer described by `response` out. */
export interface JsonEndpoint extends EndpointBase {
  /** `multipart`: the body is `multipart/form-data` with one file in the field `file` (≤25 MB). */
  transport: 'json' | 'multipart';
  /** Schema of every 2xx answer. */
  response: z.ZodType;
}

/** A Server-Sent Events stream (G-20..G-22): no JSON answer, typed events instead. */
export interface SseEndpoint extends EndpointBase {
  transport: 'sse';
  /** Payload schema of each event type of the stream. */
  events: EventSchemas;
}

/** A download: the answer is the bytes of a file with its content type and file name. */
export interface BytesEndpoint extends EndpointBase {
  transport: 'bytes';
}

/** One endpoint of the API: method, path, auth and the schemas of every part of it. */
export type Endpoint = JsonEndpoint | SseEndpoint | BytesEndpoint;

/**
 * Every route the Gateway serves, by a unique id (a TS key; two methods on one path have two
 * ids). This table is the one source: the Gateway registers its routes from it (request and
 * response schemas), the clients call by id with types inferred from it, and docs/PROTOCOL.md is
 * generated from it (see SPEC §3).
 */
export const ENDPOINTS = {
  healthz: {
    method: 'GET',
    path: '/healthz',
    auth: 'none',
    summary: 'Is the Gateway up; no credential needed.',
    transport: 'json',
    response: HealthResponse,
  },
  register: {
    method: 'POST',
    path: `${API_PREFIX}/agent/register`,
    auth: 'agent',
    summary: 'Announce name and platform; idempotent.',
    transport: 'json',
    body: RegisterRequest,
    response: RegisterResponse,
  },
  heartbeat: {
    method: 'POST',
    path: `${API_PREFIX}/agent/heartbeat`,
    auth: 'agent',
    summary: 'Every 30 s: workspaces, session snapshot, model catalogue, mode enforcement. Lenient (G-11).',
    transport: 'json',
    body: HeartbeatRequest,
    response: HeartbeatResponse,
  },
  agentOffline: {
    method: 'POST',
    path: `${API_PREFIX}/agent/offline`,
    auth: 'agent',
    summary:
      'A stopping bridge says goodbye: the agent is offline at once (H-3); its next heartbeat brings it back.',
    transport: 'json',
    body: AgentOfflineRequest,
    response: AgentOfflineResponse,
  },
  events: {
    method: 'GET',
    path: `${API_PREFIX}/events`,
    auth: 'agent',
    summary: 'SSE stream; honours Last-Event-ID (G-22).',
    transport: 'sse',
    events: AGENT_EVENT_SCHEMAS,
  },
  inbox: {
    method: 'GET',
    path: `${API_PREFIX}/mail/inbox`,
    auth: 'agent',
    summary: 'Inbox page; default unread, limit 5.',
    transport: 'json',
    query: InboxQuery,
    response: InboxResponse,
  },
  markRead: {
    method: 'POST',
    path: `${API_PREFIX}/mail/read`,
    auth: 'agent',
    summary: 'Mark exactly the listed mails read.',
    transport: 'json',
    body: MarkReadRequest,
    response: MarkReadResponse,
  },
  mail: {
    method: 'GET',
    path: `${API_PREFIX}/agent/mail/:id`,
    auth: 'agent',
    summary: 'One mail: full body, attachments, participants, reply address.',
    transport: 'json',
    params: IdParams,
    response: MailResponse,
  },
  thread: {
    method: 'GET',
    path: `${API_PREFIX}/agent/mail/:id/thread`,
    auth: 'agent',
    summary: 'The whole thread of a mail, oldest first, paged.',
    transport: 'json',
    params: IdParams,
    query: ThreadQuery,
    response: ThreadResponse,
  },
  send: {
    method: 'POST',
    path: `${API_PREFIX}/mail/send`,
    auth: 'agent',
    summary: 'Send a mail; relays are idempotent by relay_key (G-31..G-35).',
    idempotent: true,
    transport: 'json',
    body: SendMailRequest,
    response: SendMailResponse,
  },
  forward: {
    method: 'POST',
    path: `${API_PREFIX}/mail/:id/forward`,
    auth: 'agent',
    summary: 'Forward a mail, quoting it and its attachments.',
    idempotent: true,
    transport: 'json',
    params: IdParams,
    body: ForwardMailRequest,
    response: SendMailResponse,
  },
  uploadAttachment: {
    method: 'POST',
    path: `${API_PREFIX}/attachments`,
    auth: 'agent',
    summary: 'Upload one file (multipart field "file", ≤25 MB).',
    transport: 'multipart',
    response: UploadAttachmentResponse,
  },
  attachment: {
    method: 'GET',
    path: `${API_PREFIX}/attachments/:id`,
    auth: 'agent',
    summary: 'Download an attachment the agent can see.',
    transport: 'bytes',
    params: IdParams,
  },
  permissionRequest: {
    method: 'POST',
    path: `${API_PREFIX}/permission/request`,
    auth: 'agent',
    summary: 'Ask a person to approve a tool call or answer a question (G-38, P-9).',
    idempotent: true,
    transport: 'json',
    body: PermissionRequest,
    response: PermissionRequestResponse,
  },
  permissionWithdraw: {
    method: 'POST',
    path: `${API_PREFIX}/permission/:id/withdraw`,
    auth: 'agent',
    summary:
      'The asking call stopped waiting (turn timed out, stopped, shutdown): the request is withdrawn and the person told.',
    transport: 'json',
    params: IdParams,
    body: WithdrawPermissionRequest,
    response: WithdrawPermissionResponse,
  },
  contacts: {
    method: 'GET',
    path: `${API_PREFIX}/agent/contacts`,
    auth: 'agent',
    summary: 'Agents and people (read only).',
    transport: 'json',
    response: ContactsResponse,
  },
  suggest: {
    method: 'GET',
    path: `${API_PREFIX}/agent/contacts/suggest`,
    auth: 'agent',
    summary: 'Suggest addresses for a name and/or path.',
    transport: 'json',
    query: SuggestQuery,
    response: SuggestResponse,
  },
  participants: {
    method: 'GET',
    path: `${API_PREFIX}/agent/sessions/:id/participants`,
    auth: 'agent',
    summary: 'Who is in a session, their addresses, who has not spoken.',
    transport: 'json',
    params: IdParams,
    response: ParticipantsResponse,
  },
  sessionSync: {
    method: 'POST',
    path: `${API_PREFIX}/sessions/:id/sync`,
    auth: 'agent',
    summary: 'Naming sync: alias and title; answers the final alias (B-11).',
    transport: 'json',
    params: IdParams,
    body: SessionSyncRequest,
    response: SessionSyncResponse,
  },
  meSend: {
    method: 'POST',
    path: `${API_PREFIX}/me/mail/send`,
    auth: 'person',
    summary: 'A person sends a task or reply.',
    idempotent: true,
    transport: 'json',
    body: PersonSendRequest,
    response: SendMailResponse,
  },
  meForward: {
    method: 'POST',
    path: `${API_PREFIX}/me/mail/:id/forward`,
    auth: 'person',
    summary: 'A person forwards a mail they can read, quoting it and its attachments.',
    idempotent: true,
    transport: 'json',
    params: IdParams,
    body: ForwardMailRequest,
    response: SendMailResponse,
  },
  meInbox: {
    method: 'GET',
    path: `${API_PREFIX}/me/inbox`,
    auth: 'person',
    summary: "The person's inbox.",
    transport: 'json',
    query: InboxQuery,
    response: InboxResponse,
  },
  meMail: {
    method: 'GET',
    path: `${API_PREFIX}/me/mail/:id`,
    auth: 'person',
    summary: 'One mail.',
    transport: 'json',
    params: IdParams,
    response: MailResponse,
  },
  meThread: {
    method: 'GET',
    path: `${API_PREFIX}/me/mail/:id/thread`,
    auth: 'person',
    summary: 'A thread, paged.',
    transport: 'json',
    params: IdParams,
    query: ThreadQuery,
    response: ThreadResponse,
  },
  meMarkRead: {
    method: 'POST',
    path: `${API_PREFIX}/me/mail/read`,
    auth: 'person',
    summary: 'Mark mails read.',
    transport: 'json',
    body: MarkReadRequest,
    response: MarkReadResponse,
  },
  meEvents: {
    method: 'GET',
    path: `${API_PREFIX}/me/events`,
    auth: 'person',
    summary: "SSE stream of the person's new mail and permission requests; honours Last-Event-ID.",
    transport: 'sse',
    events: PERSON_EVENT_SCHEMAS,
  },
  meUploadAttachment: {
    method: 'POST',
    path: `${API_PREFIX}/me/attachments`,
    auth: 'person',
    summary: 'Upload one file (multipart field "file", ≤25 MB).',
    transport: 'multipart',
    response: UploadAttachmentResponse,
  },
  meAttachment: {
    method: 'GET',
    path: `${API_PREFIX}/me/attachments/:id`,
    auth: 'person',
    summary: 'Download an attachment.',
    transport: 'bytes',
    params: IdParams,
  },
  mePermissions: {
    method: 'GET',
    path: `${API_PREFIX}/me/permissions`,
    auth: 'person',
    summary: 'Permission and question requests addressed to the person.',
    transport: 'json',
    query: PermissionsQuery,
    response: PermissionsResponse,
  },
  meDecide: {
    method: 'POST',
    path: `${API_PREFIX}/me/permissions/:id/decide`,
    auth: 'person',
    summary: 'Approve (once/always), deny, or answer a question.',
    transport: 'json',
    params: IdParams,
    body: DecideRequest,
    response: DecideResponse,
  },
  meContacts: {
    method: 'GET',
    path: `${API_PREFIX}/me/contacts`,
    auth: 'person',
    summary: 'Agents (online, last seen) and people, as agents see them (read only).',
    transport: 'json',
    response: ContactsResponse,
  },
  meSuggest: {
    method: 'GET',
    path: `${API_PREFIX}/me/contacts/suggest`,
    auth: 'person',
    summary: 'Suggest addresses for a name and/or path, as agents get them (address autocomplete).',
    transport: 'json',
    query: SuggestQuery,
    response: SuggestResponse,
  },
  meAgents: {
    method: 'GET',
    path: `${API_PREFIX}/me/agents`,
    auth: 'person',
    summary:
      'Agents with platform, presence, mode enforcement and the sessions the person took part in (SPEC H-4).',
    transport: 'json',
    response: AgentsResponse,
  },
  webSignIn: {
    method: 'POST',
    path: `${API_PREFIX}/web/session`,
    auth: 'none',
    summary:
      'Sign in to the web mailbox with a user token: sets the HttpOnly, SameSite=Strict session cookie. Same-origin requests only.',
    transport: 'json',
    body: WebSignInRequest,
    response: WebSessionResponse,
  },
  webSession: {
    method: 'GET',
    path: `${API_PREFIX}/web/session`,
    auth: 'person',
    summary: 'Who is signed in, and until when.',
    transport: 'json',
    response: WebSessionResponse,
  },
  webSignOut: {
    method: 'DELETE',
    path: `${API_PREFIX}/web/session`,
    auth: 'none',
    summary: 'Sign out: ends the session and clears the cookie (also when it had already expired).',
    transport: 'json',
    response: WebSignOutResponse,
  },
  adminCreateUser: {
    method: 'POST',
    path: `${API_PREFIX}/admin/users`,
    auth: 'admin',
    summary: 'Create a user; the token is shown once.',
    transport: 'json',
    body: CreateUserRequest,
    response: CreateUserResponse,
  },
  adminUsers: {
    method: 'GET',
    path: `${API_PREFIX}/admin/users`,
    auth: 'admin',
    summary: 'List users.',
    transport: 'json',
    response: UsersResponse,
  },
  adminResetToken: {
    method: 'POST',
    path: `${API_PREFIX}/admin/users/:name/token`,
    auth: 'admin',
    summary: "Reset a person's token: a new one (shown once); the old tokens and their web sessions end.",
    transport: 'json',
    params: NameParams,
    response: ResetTokenResponse,
  },
  adminAgentKeys: {
    method: 'GET',
    path: `${API_PREFIX}/admin/agent-keys`,
    auth: 'admin',
    summary: 'List agent keys, oldest first: id, agent name, created, last used, revoked (never the key).',
    transport: 'json',
    response: AgentKeysResponse,
  },
  adminIssueAgentKey: {
    method: 'POST',
    path: `${API_PREFIX}/admin/agent-keys`,
    auth: 'admin',
    summary: 'Issue an agent key bound to one name; shown once, stored hashed.',
    transport: 'json',
    body: IssueAgentKeyRequest,
    response: IssueAgentKeyResponse,
  },
  adminRevokeAgentKey: {
    method: 'DELETE',
    path: `${API_PREFIX}/admin/agent-keys/:id`,
    auth: 'admin',
    summary: 'Revoke an agent key.',
    transport: 'json',
    params: IdParams,
    response: RevokeAgentKeyResponse,
  },
  adminSetAllowedModels: {
    method: 'PUT',
    path: `${API_PREFIX}/admin/platforms/:platform/models`,
    auth: 'admin',
    summary: 'Set the ordered model selection of a platform (≤10, G-26).',
    transport: 'json',
    params: PlatformParams,
    body: AllowedModelsRequest,
    response: AllowedModelsResponse,
  },
  adminAllowedModels: {
    method: 'GET',
    path: `${API_PREFIX}/admin/platforms/:platform/models`,
    auth: 'admin',
    summary: 'Read the selection, with stale flags.',
    transport: 'json',
    params: PlatformParams,
    response: AllowedModelsResponse,
  },
} as const satisfies Readonly<Record<string, Endpoint>>;

/** Id of an endpoint of {@link ENDPOINTS}, e.g. `'register'`. */
export type EndpointId = keyof typeof ENDPOINTS;

/** The endpoint with id `Id`. */
export type EndpointOf<Id extends EndpointId> = (typeof ENDPOINTS)[Id];

/** Ids of the endpoints that answer JSON (including multipart uploads). */
export type JsonEndpointId = {
  [K in EndpointId]: EndpointOf<K>['transport'] extends 'json' | 'multipart' ? K : never;
}[EndpointId];

/** Ids of the multipart upload endpoints. */
export type UploadEndpointId = {
  [K in EndpointId]: EndpointOf<K>['transport'] extends 'multipart' ? K : never;
}[EndpointId];

/** Ids of the download endpoints (the answer is file bytes). */
export type BytesEndpointId = {
  [K in EndpointId]: EndpointOf<K>['transport'] extends 'bytes' ? K : never;
}[EndpointId];

/** Ids of the SSE stream endpoints. */
export type SseEndpointId = {
  [K in EndpointId]: EndpointOf<K>['transport'] extends 'sse' ? K : never;
}[EndpointId];

/** Every endpoint id, in table order. */
export const ENDPOINT_IDS = Object.keys(ENDPOINTS) as EndpointId[];

/** The endpoint with `id`, typed as the general {@link Endpoint} (for code that walks the table). */
export function endpoint(id: EndpointId): Endpoint {
  return ENDPOINTS[id];
}
