import { z } from 'zod';
import { Id, Timestamp } from './common.js';

/** One entry of `GET /agent/contacts` (read only discovery). */
export const Contact = z.object({
  name: z.string(),
  kind: z.enum(['agent', 'person']),
  /** Platform of an agent, '' for a person. */
  platform: z.string(),
  online: z.boolean(),
  /** Last heartbeat (or goodbye) of an agent; null for people and agents never seen. */
  last_seen: Timestamp.nullable(),
  /**
   * Since when an agent is offline: the moment its bridge said it stops, or the end of its online
   * window after the last heartbeat (H-3); null while online, for people and agents never seen.
   */
  offline_since: Timestamp.nullable().default(null),
  /** Working directories the agent announced. */
  workspaces: z.array(z.string()),
  /** Default address, `name@.` */
  address: z.string(),
  /**
   * An agent's workspace sandbox per its last heartbeat (SPEC P-12): `verified` or
   * `unverified: <why>`; null for people and before a heartbeat says. Absent from older Gateways.
   */
  sandbox: z.string().nullable().default(null),
});
export type Contact = z.infer<typeof Contact>;

export const ContactsResponse = z.object({ contacts: z.array(Contact) });
export type ContactsResponse = z.infer<typeof ContactsResponse>;

/** `GET /agent/contacts/suggest?name=&path=` query. */
export const SuggestQuery = z.strictObject({
  name: z.string().optional(),
  path: z.string().optional(),
});
export type SuggestQuery = z.infer<typeof SuggestQuery>;

export const Suggestion = z.object({
  address: z.string(),
  name: z.string(),
  path: z.string(),
  session_alias: z.string(),
  /** Why this address is suggested (e.g. "existing session", "announced workspace"). */
  reason: z.string(),
});
export type Suggestion = z.infer<typeof Suggestion>;

export const SuggestResponse = z.object({ suggestions: z.array(Suggestion) });
export type SuggestResponse = z.infer<typeof SuggestResponse>;

/** One participant of a session (`GET /agent/sessions/{id}/participants`). */
export const SessionParticipant = z.object({
  name: z.string(),
  human: z.boolean(),
  address: z.string(),
  /** false for someone addressed (to/cc) who has not sent a mail in the session. */
  has_spoken: z.boolean(),
  last_mail_at: Timestamp.nullable(),
});
export type SessionParticipant = z.infer<typeof SessionParticipant>;

export const ParticipantsResponse = z.object({
  session_id: Id,
  session_alias: z.string(),
  participants: z.array(SessionParticipant),
  /** Names of participants who have not spoken. */
  silent: z.array(z.string()),
});
export type ParticipantsResponse = z.infer<typeof ParticipantsResponse>;

/** `POST /sessions/{id}/sync` body: naming sync (see SPEC B-11). */
export const SessionSyncRequest = z.strictObject({
  alias: z.string().min(1).max(80).optional(),
  title: z.string().max(500).optional(),
});
export type SessionSyncRequest = z.infer<typeof SessionSyncRequest>;

export const SessionSyncResponse = z.object({
  session_id: Id,
  /** The final alias (suffixed on collision). */
  alias: z.string(),
  title: z.string(),
});
export type SessionSyncResponse = z.infer<typeof SessionSyncResponse>;
