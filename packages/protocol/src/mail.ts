import { z } from 'zod';
import { AddressString } from './address.js';
import {
  AttachmentInfo,
  Id,
  MAIL_BODY_MAX_CHARS,
  MAIL_SUBJECT_MAX_CHARS,
  MailKind,
  Participant,
  PermissionMode,
  Timestamp,
} from './common.js';
import { PermissionStatus } from './permission.js';

/**
 * `GET /mail/inbox` query (see SPEC §3): default unread, limit 5. Order: `oldest` first by
 * default for `status=unread` (catch-up, B-20), `newest` first by default for `status=all`;
 * `order` chooses. `before` pages back through newest-first pages: only mails older than that
 * mail id (the last id of the previous page).
 */
export const InboxQuery = z.strictObject({
  status: z.enum(['unread', 'all']).default('unread'),
  limit: z.coerce.number().int().min(1).max(100).default(5),
  session_id: Id.optional(),
  order: z.enum(['oldest', 'newest']).optional(),
  before: Id.optional(),
});
export type InboxQuery = z.infer<typeof InboxQuery>;

/** Default inbox page size (see SPEC §3). */
export const INBOX_DEFAULT_LIMIT = 5;

/** A mail as listed in an inbox: everything but the body (see SPEC B-17, G-30). */
export const MailSummary = z.object({
  id: Id,
  session_id: Id,
  session_alias: z.string(),
  from_name: z.string(),
  from_human: z.boolean(),
  from_address: z.string(),
  to: z.array(Participant),
  cc: z.array(Participant),
  /** true when the primary recipient is a person (G-30). */
  to_human: z.boolean(),
  subject: z.string(),
  /** First characters of the body, whitespace folded. */
  snippet: z.string(),
  created_at: Timestamp,
  status: z.enum(['unread', 'read']),
  attachments: z.array(AttachmentInfo),
  /** Id of the mail this one answers, or ''. */
  in_reply_to: z.string(),
  kind: MailKind,
  /** true for a permission or question mail (skipped by catch-up, B-20). */
  is_permission: z.boolean(),
  /** true for a relay (auto relay or failure mail); counts toward the hop limit (G-33). */
  relay: z.boolean(),
  permission_mode: PermissionMode,
  /** Where a reply from the reader should go (G-6). */
  reply_address: z.string(),
  /** The reader's own address in this session (G-6). */
  self_address: z.string(),
  /**
   * For an agent reading its own adopted session: the platform session it is bound to (G-37), so
   * a catch-up delivery resumes it like a live one (B-4, B-20); '' otherwise (and from Gateways
   * that predate the field).
   */
  platform_session_id: z.string().default(''),
  /**
   * true for a bridge's failure mail: the turn of the mail it answers failed (a relay with the key
   * `model-failure:<mail_id>`, SPEC B-9). Absent from Gateways that predate the field.
   */
  failure: z.boolean().optional(),
  /**
   * For a permission or question mail (`is_permission`): where its request stands now and the
   * decision taken (`approve_once`, `approve_always`, `deny`, `answered`; null while none is),
   * so a reader shows a decided request as decided; null for every other mail. Absent from
   * Gateways that predate the field.
   */
  request: z.object({ status: PermissionStatus, decision: z.string().nullable() }).nullable().optional(),
});
export type MailSummary = z.infer<typeof MailSummary>;

export const InboxResponse = z.object({
  mails: z.array(MailSummary),
  /** Unread mails in total (not only this page). */
  unread_count: z.number().int().nonnegative(),
  has_more: z.boolean(),
});
export type InboxResponse = z.infer<typeof InboxResponse>;

/** A whole mail: summary fields plus the body and everyone in the thread. */
export const Mail = z.object({
  ...MailSummary.shape,
  body: z.string(),
  /** Everyone in the session (see `GET /agent/sessions/{id}/participants` for more). */
  participants: z.array(Participant),
  /** Sender of the mail this one answers, or ''. */
  parent_from: z.string(),
});
export type Mail = z.infer<typeof Mail>;

/** `GET /agent/mail/{id}` answer. */
export const MailResponse = z.object({ mail: Mail });
export type MailResponse = z.infer<typeof MailResponse>;

/** `POST /mail/read` body: mark exactly these mails read (B-17). */
export const MarkReadRequest = z.strictObject({
  ids: z.array(Id).min(1).max(100),
});
export type MarkReadRequest = z.infer<typeof MarkReadRequest>;

export const MarkReadResponse = z.object({
  /** How many of the ids changed from unread to read. */
  updated: z.number().int().nonnegative(),
});
export type MarkReadResponse = z.infer<typeof MarkReadResponse>;

/**
 * `GET /agent/mail/{id}/thread` query, paged. `around` (a mail id of the thread, usually the
 * `{id}` itself) picks the page that holds that mail instead of `offset`: the mail in the middle
 * of the page where the thread allows (the answer's `offset` says where the page starts), so a
 * reader opening one mail of a long thread gets that mail and its neighbours in one call.
 */
export const ThreadQuery = z.strictObject({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  around: Id.optional(),
});
export type ThreadQuery = z.infer<typeof ThreadQuery>;

export const ThreadResponse = z.object({
  session_id: Id,
  session_alias: z.string(),
  /** Oldest first. */
  mails: z.array(Mail),
  total: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
  /** Offset of the next page, or null at the end. */
  next_offset: z.number().int().nonnegative().nullable(),
});
export type ThreadResponse = z.infer<typeof ThreadResponse>;

/**
 * `POST /mail/send` body (see SPEC §3, G-31..G-35). `relay: "summary"` with a `relay_key`
 * marks a bridge's relay of a model's final text: free to a person, budgeted otherwise,
 * idempotent by key.
 */
export const SendMailRequest = z.strictObject({
  /** Recipient address `name@path.session` (G-1), checked by the address grammar. */
  to: AddressString,
  /** Empty or blank: the Gateway stores the body's first non-empty line (shared-policy `subjectForSend`). */
  subject: z.string().max(MAIL_SUBJECT_MAX_CHARS),
  body: z.string().max(MAIL_BODY_MAX_CHARS),
  cc: z.array(AddressString).max(20).optional(),
  /** Id of the mail this answers. */
  reply_to: Id.optional(),
  /**
   * The sender's own session this mail is written from (the session of the turn that sends it).
   * It must be a session of the sending agent. Omitted: the session of `reply_to` if given, else
   * the sender's default session.
   */
  from_session_id: Id.optional(),
  /** Use this alias for a session created by `.new`. */
  session_alias: z.string().max(80).optional(),
  attachment_ids: z.array(Id).max(20).optional(),
  /** Round budget for a newly created session. */
  max_rounds: z.number().int().min(1).max(1000).optional(),
  relay: z.literal('summary').optional(),
  /** Idempotency key of a relay, ≤160 bytes (G-32). */
  relay_key: z.string().min(1).optional(),
  kind: MailKind.optional(),
});
export type SendMailRequest = z.infer<typeof SendMailRequest>;

/** An agent recipient that was offline when the mail was sent: the mail waits for it (G-39, H-3). */
export const OfflineRecipient = z.object({
  name: z.string(),
  /** Its last heartbeat (or goodbye), or null when it was never online. */
  last_seen: Timestamp.nullable(),
  /** Since when it counts as offline (a bridge's stop, or the end of its online window), or null when never online. */
  offline_since: Timestamp.nullable(),
});
export type OfflineRecipient = z.infer<typeof OfflineRecipient>;

/** Answer of a send or forward: a new mail, or the duplicate of an earlier relay (G-32). */
export const SendMailResponse = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('sent'),
    mail_id: Id,
    session_id: Id,
    session_alias: z.string(),
    /** The recipient's address in the session (never `.new`, G-6). */
    address: z.string(),
    /** Rounds left in the session's budget, or null when the send was free. */
    rounds_left: z.number().int().nullable(),
    /** Permission mode of the primary recipient's session after this send (P-1). */
    permission_mode: PermissionMode.optional(),
    /** Agent recipients that were offline: the mail is kept and delivered when they are back (G-39, H-3). */
    offline_recipients: z.array(OfflineRecipient).optional(),
  }),
  z.object({
    status: z.literal('duplicate_relay'),
    /** The mail the earlier relay created. */
    mail_id: Id,
  }),
]);
export type SendMailResponse = z.infer<typeof SendMailResponse>;

/** `POST /mail/{id}/forward` body: quotes the original and its attachments. */
export const ForwardMailRequest = z.strictObject({
  to: AddressString,
  comment: z.string().max(100_000).optional(),
  /** The sender's own session the forward is written from (see {@link SendMailRequest}). */
  from_session_id: Id.optional(),
});
export type ForwardMailRequest = z.infer<typeof ForwardMailRequest>;

/** `POST /attachments` answer (multipart field `file`, ≤25 MB). */
export const UploadAttachmentResponse = z.object({ attachment: AttachmentInfo });
export type UploadAttachmentResponse = z.infer<typeof UploadAttachmentResponse>;
