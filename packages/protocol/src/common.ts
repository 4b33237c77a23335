import { z } from 'zod';

/*
 * Strictness: request bodies and queries are strict objects (unknown fields are a 400, G-10).
 * Answers and events are plain objects: a client strips fields it does not know, so a newer
 * Gateway that adds a field never breaks an older bridge.
 */

/** Route prefix of every API route. */
export const API_PREFIX = '/api/v1';

/** Interval between bridge heartbeats, in ms (see SPEC G-25). */
export const HEARTBEAT_INTERVAL_MS = 30_000;

/** Largest relay key, in UTF-8 bytes (see SPEC G-32). */
export const RELAY_KEY_MAX_BYTES = 160;

/**
 * Longest mail body (and forward comment), in characters as JavaScript counts them (UTF-16 code
 * units): the one limit of a body, whoever sends it (agents `POST /mail/send`, people
 * `POST /me/mail/send`). The Gateway's request-size limit on those routes is set above any
 * request such a body can make, so this is the limit a sender meets.
 */
export const MAIL_BODY_MAX_CHARS = 1_000_000;

/**
 * Longest mail subject, in characters as JavaScript counts them (UTF-16 code units), whoever
 * sends it. A send without a subject gets one from its body (shared-policy `subjectForSend`).
 */
export const MAIL_SUBJECT_MAX_CHARS = 500;

/** Largest attachment upload, in bytes (25 MB). */
export const ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;

/** The multipart field an upload's one file travels in (`multipart` endpoints). @default 'file' */
export const UPLOAD_FIELD = 'file';

/** Permission modes of a session (see SPEC P-1). Unknown names fall back to `workspace` (P-2). */
export const PermissionMode = z.enum(['plan', 'workspace', 'full']);
export type PermissionMode = z.infer<typeof PermissionMode>;

/** How a bridge enforces permission modes (see SPEC P-8). */
export const ModeEnforcement = z.enum(['native', 'advisory']);
export type ModeEnforcement = z.infer<typeof ModeEnforcement>;

/** What a delivered item is. */
export const MailKind = z.enum(['mail', 'calendar']);
export type MailKind = z.infer<typeof MailKind>;

/** Non-empty string identifier (mail, session, attachment, request ids). */
export const Id = z.string().min(1).max(200);

/** `{id}` path parameter of the routes that name one mail, session, attachment, request or key. */
export const IdParams = z.strictObject({ id: Id });
export type IdParams = z.infer<typeof IdParams>;

/** ISO 8601 timestamp in UTC, e.g. `2026-11-29T22:52:45.123Z`. */
export const Timestamp = z.string().min(1);

/**
 * Error body of every non-2xx answer (see SPEC G-13). Extra fields are allowed
 * (`accepted_fields`, `permission_mode`, `bound_name`, …), so the schema is loose.
 */
export const ErrorBody = z.looseObject({
  /** Stable machine-readable error name, one of {@link WIRE_ERRORS} (others may be added). */
  error: z.string(),
  /** Human-readable explanation naming the field or resource at fault. */
  detail: z.string().optional(),
  /** What to do about it. */
  suggestion: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/**
 * Wire error names. Whether to retry is decided by the HTTP status alone (see SPEC G-13):
 * 5xx, 408, 429 and network errors are transient; every other 4xx will never succeed as sent.
 */
export const WIRE_ERRORS = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'rate_limited',
  'budget_exhausted',
  'hop_limit_reached',
  'no_person_reachable',
  'internal',
] as const;
export type WireError = (typeof WIRE_ERRORS)[number];

/** True for statuses a client should retry later (5xx, 408, 429); see SPEC G-13. */
export function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** A mail participant with its address in the session and whether it is a person (G-30). */
export const Participant = z.object({
  name: z.string(),
  /** `name@path.session` in this session (see SPEC G-1). */
  address: z.string(),
  human: z.boolean(),
});
export type Participant = z.infer<typeof Participant>;

/** Metadata of a stored attachment. */
export const AttachmentInfo = z.object({
  id: Id,
  filename: z.string(),
  content_type: z.string(),
  size_bytes: z.number().int().nonnegative(),
  sha256: z.string(),
  created_at: Timestamp,
});
export type AttachmentInfo = z.infer<typeof AttachmentInfo>;
