import type { z } from 'zod';
import { HeartbeatRequest, HeartbeatResponse, RegisterRequest, RegisterResponse } from './agent.js';
import {
  ContactsResponse,
  ParticipantsResponse,
  SessionSyncRequest,
  SessionSyncResponse,
  SuggestQuery,
  SuggestResponse,
} from './directory.js';
import { AGENT_EVENT_SCHEMAS, PERSON_EVENT_SCHEMAS } from './events.js';
import {
  AllowedModelsRequest,
  AllowedModelsResponse,
  CreateUserRequest,
  CreateUserResponse,
  IssueAgentKeyRequest,
  IssueAgentKeyResponse,
  PersonSendRequest,
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
} from './permission.js';
import type { RouteName } from './routes.js';

/** Who may call an endpoint (see SPEC G-12). */
export type EndpointAuth = 'agent' | 'person' | 'admin' | 'none';

/** One endpoint of the API: its route, method, auth and the schemas of its parts. */
export interface Endpoint {
  route: RouteName;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  auth: EndpointAuth;
  summary: string;
  query?: z.ZodType;
  body?: z.ZodType;
  /** `multipart` for uploads, `sse` for event streams, `bytes` for downloads. */
  transport?: 'multipart' | 'sse' | 'bytes';
  response?: z.ZodType;
  /** Event payload schemas of an SSE endpoint, by event type. */
  events?: Readonly<Record<string, z.ZodType>>;
}

/** Every endpoint of the API (see SPEC §3). docs/PROTOCOL.md is generated from this list. */
export const ENDPOINTS: readonly Endpoint[] = [
  {
    route: 'register',
    method: 'POST',
    auth: 'agent',
    summary: 'Announce name and platform; idempotent.',
    body: RegisterRequest,
    response: RegisterResponse,
  },
  {
    route: 'heartbeat',
    method: 'POST',
    auth: 'agent',
    summary: 'Every 30 s: workspaces, session snapshot, model catalogue, mode enforcement. Lenient (G-11).',
    body: HeartbeatRequest,
    response: HeartbeatResponse,
  },
  {
    route: 'events',
    method: 'GET',
    auth: 'agent',
    summary: 'SSE stream; honours Last-Event-ID (G-22).',
    transport: 'sse',
    events: AGENT_EVENT_SCHEMAS,
  },
  {
    route: 'inbox',
    method: 'GET',
    auth: 'agent',
    summary: 'Inbox page; default unread, limit 5.',
    query: InboxQuery,
    response: InboxResponse,
  },
  {
    route: 'markRead',
    method: 'POST',
    auth: 'agent',
    summary: 'Mark exactly the listed mails read.',
    body: MarkReadRequest,
    response: MarkReadResponse,
  },
  {
    route: 'mail',
    method: 'GET',
    auth: 'agent',
    summary: 'One mail: full body, attachments, participants, reply address.',
    response: MailResponse,
  },
  {
    route: 'thread',
    method: 'GET',
    auth: 'agent',
    summary: 'The whole thread of a mail, oldest first, paged.',
    query: ThreadQuery,
    response: ThreadResponse,
  },
  {
    route: 'send',
    method: 'POST',
    auth: 'agent',
    summary: 'Send a mail; relays are idempotent by relay_key (G-31..G-35).',
    body: SendMailRequest,
    response: SendMailResponse,
  },
  {
    route: 'forward',
    method: 'POST',
    auth: 'agent',
    summary: 'Forward a mail, quoting it and its attachments.',
    body: ForwardMailRequest,
    response: SendMailResponse,
  },
  {
    route: 'uploadAttachment',
    method: 'POST',
    auth: 'agent',
    summary: 'Upload one file (multipart field "file", ≤25 MB).',
    transport: 'multipart',
    response: UploadAttachmentResponse,
  },
  {
    route: 'attachment',
    method: 'GET',
    auth: 'agent',
    summary: 'Download an attachment the agent can see.',
    transport: 'bytes',
  },
  {
    route: 'permissionRequest',
    method: 'POST',
    auth: 'agent',
    summary: 'Ask a person to approve a tool call or answer a question (G-38, P-9).',
    body: PermissionRequest,
    response: PermissionRequestResponse,
  },
  {
    route: 'contacts',
    method: 'GET',
    auth: 'agent',
    summary: 'Agents and people (read only).',
    response: ContactsResponse,
  },
  {
    route: 'suggest',
    method: 'GET',
    auth: 'agent',
    summary: 'Suggest addresses for a name and/or path.',
    query: SuggestQuery,
    response: SuggestResponse,
  },
  {
    route: 'participants',
    method: 'GET',
    auth: 'agent',
    summary: 'Who is in a session, their addresses, who has not spoken.',
    response: ParticipantsResponse,
  },
  {
    route: 'sessionSync',
    method: 'POST',
    auth: 'agent',
    summary: 'Naming sync: alias and title; answers the final alias (B-11).',
    body: SessionSyncRequest,
    response: SessionSyncResponse,
  },
  {
    route: 'meSend',
    method: 'POST',
    auth: 'person',
    summary: 'A person sends a task or reply.',
    body: PersonSendRequest,
    response: SendMailResponse,
  },
  {
    route: 'meInbox',
    method: 'GET',
    auth: 'person',
    summary: "The person's inbox.",
    query: InboxQuery,
    response: InboxResponse,
  },
  { route: 'meMail', method: 'GET', auth: 'person', summary: 'One mail.', response: MailResponse },
  {
    route: 'meThread',
    method: 'GET',
    auth: 'person',
    summary: 'A thread, paged.',
    query: ThreadQuery,
    response: ThreadResponse,
  },
  {
    route: 'meMarkRead',
    method: 'POST',
    auth: 'person',
    summary: 'Mark mails read.',
    body: MarkReadRequest,
    response: MarkReadResponse,
  },
  {
    route: 'meEvents',
    method: 'GET',
    auth: 'person',
    summary: "SSE stream of the person's new mail and permission requests.",
    transport: 'sse',
    events: PERSON_EVENT_SCHEMAS,
  },
  {
    route: 'meAttachments',
    method: 'POST',
    auth: 'person',
    summary: 'Upload one file (multipart field "file", ≤25 MB).',
    transport: 'multipart',
    response: UploadAttachmentResponse,
  },
  {
    route: 'meAttachment',
    method: 'GET',
    auth: 'person',
    summary: 'Download an attachment.',
    transport: 'bytes',
  },
  {
    route: 'mePermissions',
    method: 'GET',
    auth: 'person',
    summary: 'Permission and question requests addressed to the person.',
    query: PermissionsQuery,
    response: PermissionsResponse,
  },
  {
    route: 'meDecide',
    method: 'POST',
    auth: 'person',
    summary: 'Approve (once/always), deny, or answer a question.',
    body: DecideRequest,
    response: DecideResponse,
  },
  {
    route: 'meContacts',
    method: 'GET',
    auth: 'person',
    summary: 'Agents (online, last seen) and people, as agents see them (read only).',
    response: ContactsResponse,
  },
  {
    route: 'adminUsers',
    method: 'POST',
    auth: 'admin',
    summary: 'Create a user; the token is shown once.',
    body: CreateUserRequest,
    response: CreateUserResponse,
  },
  { route: 'adminUsers', method: 'GET', auth: 'admin', summary: 'List users.', response: UsersResponse },
  {
    route: 'adminAgentKeys',
    method: 'POST',
    auth: 'admin',
    summary: 'Issue an agent key bound to one name; shown once, stored hashed.',
    body: IssueAgentKeyRequest,
    response: IssueAgentKeyResponse,
  },
  { route: 'adminAgentKey', method: 'DELETE', auth: 'admin', summary: 'Revoke an agent key.' },
  {
    route: 'adminAllowedModels',
    method: 'PUT',
    auth: 'admin',
    summary: 'Set the ordered model selection of a platform (≤10, G-26).',
    body: AllowedModelsRequest,
    response: AllowedModelsResponse,
  },
  {
    route: 'adminAllowedModels',
    method: 'GET',
    auth: 'admin',
    summary: 'Read the selection, with stale flags.',
    response: AllowedModelsResponse,
  },
];
