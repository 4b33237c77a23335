/**
 * Kysely table types of the Gateway store. Dialect-neutral on purpose (so PostgreSQL can be
 * added without rewriting queries): text ids, integer milliseconds since the epoch for every
 * timestamp (`..._at`, bigint on PostgreSQL), booleans as 0/1 integers, JSON as text.
 */
/** A person with a mailbox. */
export interface UsersTable {
  id: string;
  name: string;
  /** 1 for an administrator. */
  is_admin: number;
  created_at: number;
}

/** A user token; only its SHA-256 is stored. */
export interface UserTokensTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: number;
  revoked_at: number | null;
}

/** An agent identity, created by `POST /agent/register`. */
export interface AgentsTable {
  name: string;
  platform: string;
  registered_at: number;
  /** Last heartbeat (ms); null before the first one. See SPEC G-25. */
  last_seen: number | null;
  mode_enforcement: string | null;
  /** Why enforcement is advisory, from the heartbeat that said the mode (SPEC P-8); null otherwise. */
  mode_enforcement_reason: string | null;
  /** The workspace sandbox per the last heartbeat (`verified` / `unverified: …`), migration 0005. */
  sandbox: string | null;
  /** JSON array of workspaces from the last heartbeat. */
  workspaces: string;
  /** JSON array: the platform session snapshot (≤200). See SPEC G-25, G-37. */
  platform_sessions: string;
  /** JSON array: the model catalogue (≤300). See SPEC G-26. */
  models: string;
  /** JSON object of extra register fields (version, …). */
  meta: string;
  /** When its bridge said it stops (ms; SPEC H-3); cleared by the next heartbeat. Null otherwise. */
  offline_since: number | null;
}

/** An agent key; only its SHA-256 is stored, bound to one agent name (SPEC G-12). */
export interface AgentKeysTable {
  id: string;
  agent_name: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
  /** Last request the key authenticated, to {@link KEY_USE_RESOLUTION_MS} (ms); null when never used. */
  last_used_at: number | null;
}

/** How precisely `agent_keys.last_used_at` is kept: it is written at most once per this period and key, in ms. @default 60_000 */
export const KEY_USE_RESOLUTION_MS = 60_000;

/** The admin's model selection per platform, ordered (SPEC G-26). */
export interface AllowedModelsTable {
  platform: string;
  position: number;
  model_key: string;
}

/** A session of one agent in one working directory (SPEC G-1, G-2, G-5, G-37). */
export interface SessionsTable {
  id: string;
  agent_name: string;
  path: string;
  alias: string | null;
  /** `agent\npath` for the default session of (agent, path), else null (unique). */
  default_key: string | null;
  /** Adopted platform session id (unique per agent). See SPEC G-37. */
  platform_id: string | null;
  title: string;
  /** The person the session works for (SPEC G-38), inherited along delegations. */
  owner_user_id: string | null;
  permission_mode: string;
  max_rounds: number;
  rounds_used: number;
  hop_limit: number;
  created_at: number;
  updated_at: number;
}

/** A mail as written once by its sender. */
export interface MailsTable {
  id: string;
  /** The session the mail was written in (sender side; for people, the thread's session). */
  session_id: string;
  from_name: string;
  from_human: number;
  /** The sender's address in `session_id` at send time (formatted). */
  from_address: string;
  subject: string;
  body: string;
  /** JSON array of the formatted `to` addresses. */
  to_addresses: string;
  /** JSON array of the formatted `cc` addresses. */
  cc_addresses: string;
  in_reply_to: string | null;
  /** `summary` etc. for a bridge relay, null for a hand-written send (SPEC G-31, G-33). */
  relay: string | null;
  relay_key: string | null;
  kind: string;
  created_at: number;
}

/** One recipient's copy of a mail: its session, its read state. */
export interface DeliveriesTable {
  mail_id: string;
  recipient_name: string;
  recipient_human: number;
  /** The recipient's session (agents) or the thread's session (people). */
  session_id: string;
  /** Path of the recipient's workspace (`to_workspace`, SPEC G-20). */
  to_workspace: string;
  role: string;
  read_at: number | null;
  created_at: number;
}

/** An uploaded file; its bytes are the blob `blob_key` on disk (SPEC G-36). */
export interface AttachmentsTable {
  id: string;
  uploader_name: string;
  uploader_human: number;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  blob_key: string;
  created_at: number;
}

/** Which attachments a mail carries, in order. */
export interface MailAttachmentsTable {
  mail_id: string;
  attachment_id: string;
  position: number;
}

/** Per-stream event counters (streams: `agent:<name>`, `user:<name>`). */
export interface StreamCursorsTable {
  stream: string;
  last_id: number;
}

/** The persisted per-stream event log (SPEC G-22). */
export interface EventsTable {
  stream: string;
  event_id: number;
  type: string;
  data: string;
  created_at: number;
}

/** A permission or question request (SPEC G-38, G-21). */
export interface PermissionsTable {
  id: string;
  agent_name: string;
  session_id: string;
  relay_key: string;
  kind: string;
  question: string;
  /** JSON array of option labels. */
  options: string;
  multi_select: number;
  context: string;
  target_user_id: string;
  /** The question mail in the person's inbox. */
  mail_id: string;
  status: string;
  decision: string | null;
  note: string | null;
  /** JSON array: chosen option labels or the free text (questions). */
  answers: string;
  created_at: number;
  decided_at: number | null;
}

/**
 * A web mailbox session (the cookie of `POST /web/session`); only the SHA-256 of the cookie value
 * is stored. It belongs to the token it was signed in with: revoking or resetting that token ends it.
 */
export interface WebSessionsTable {
  id_hash: string;
  user_id: string;
  token_id: string;
  created_at: number;
  expires_at: number;
}

/** The Gateway database. */
/**
 * The one namespace of people and agents (SPEC G-12): a name is claimed once, by a person or by
 * an agent, with a conditional insert on its primary key (0006).
 */
export interface NamesTable {
  name: string;
  kind: 'user' | 'agent';
  created_at: number;
}

/** Answers of requests sent with an `Idempotency-Key` (SPEC G-41, 0007). */
export interface IdempotencyKeysTable {
  /** Who sent it: `agent:<name>` or `user:<id>`. */
  scope: string;
  key: string;
  /** sha256 of the endpoint, its parameters and its body: a repeat must match it. */
  fingerprint: string;
  /** JSON of the first answer. */
  response: string;
  created_at: number;
}

/** Attachment bytes in PostgreSQL, in chunks (0008; unused on SQLite, whose blobs are files). */
export interface BlobChunksTable {
  blob_key: string;
  seq: number;
  data: Uint8Array;
  /** 1 on a blob's final chunk: a blob without one is an upload that broke off. */
  last: number;
  created_at: number;
}

export interface Database {
  names: NamesTable;
  blob_chunks: BlobChunksTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  user_tokens: UserTokensTable;
  agents: AgentsTable;
  agent_keys: AgentKeysTable;
  allowed_models: AllowedModelsTable;
  sessions: SessionsTable;
  mails: MailsTable;
  deliveries: DeliveriesTable;
  attachments: AttachmentsTable;
  mail_attachments: MailAttachmentsTable;
  stream_cursors: StreamCursorsTable;
  events: EventsTable;
  permissions: PermissionsTable;
  web_sessions: WebSessionsTable;
}
