import { z } from 'zod';
import { Id, MailKind, ModeEnforcement, PermissionMode } from './common.js';

/**
 * `new_mail` SSE event payload for one recipient (see SPEC G-20, G-6). Addresses never contain
 * the session word `new`.
 */
export const NewMailEvent = z.object({
  mail_id: Id,
  session_id: Id,
  from_name: z.string(),
  from_human: z.boolean(),
  /** Working directory the mail is for (absolute), or '' for the agent's default. */
  to_workspace: z.string(),
  subject: z.string(),
  /** Id of the recipient's own mail this answers, or ''. */
  in_reply_to: z.string(),
  /** Sender of that parent mail, or ''. */
  parent_from: z.string(),
  permission_mode: PermissionMode,
  permission_enforcement: ModeEnforcement,
  session_alias: z.string(),
  reply_address: z.string(),
  self_address: z.string(),
  /** Platform session id of an adopted session (G-37), or ''. */
  platform_session_id: z.string(),
  kind: MailKind,
});
export type NewMailEvent = z.infer<typeof NewMailEvent>;

/** A mail that reached the asking session while the person was deciding (G-21, P-6). */
export const FreshMail = z.object({
  mail_id: Id,
  from_name: z.string(),
  from_human: z.boolean(),
  subject: z.string(),
});
export type FreshMail = z.infer<typeof FreshMail>;

/**
 * Decision words on the wire. Approvals: `approve_once`, `approve_always`, `deny`. Questions:
 * `answered` (with `answers`) or `deny`. A bridge treats any other word as a denial (P-4).
 */
export const DECISIONS = ['approve_once', 'approve_always', 'deny', 'answered'] as const;

/** `permission_decision` SSE event payload (see SPEC G-21). */
export const PermissionDecisionEvent = z.object({
  relay_key: z.string(),
  request_id: Id,
  session_id: Id,
  decision: z.string(),
  /** Question answers: chosen option labels, or the free text as one element. */
  answers: z.array(z.string()),
  note: z.string(),
  fresh_mails: z.array(FreshMail),
});
export type PermissionDecisionEvent = z.infer<typeof PermissionDecisionEvent>;

/** `permission_request` event on a person's stream (`/me/events`). */
export const PermissionRequestEvent = z.object({
  request_id: Id,
  agent_name: z.string(),
  session_id: Id,
  kind: z.enum(['approval', 'question']),
  question: z.string(),
  options: z.array(z.string()),
});
export type PermissionRequestEvent = z.infer<typeof PermissionRequestEvent>;

/**
 * `permission_withdrawn` event on a person's stream: a pending request no longer waits (its call
 * withdrew it, or its bridge started again and it expired); deciding it now changes nothing.
 */
export const PermissionWithdrawnEvent = z.object({
  request_id: Id,
  session_id: Id,
  status: z.enum(['withdrawn', 'expired']),
  /** `timeout` | `aborted` | `shutdown` for a withdrawal, `restart` for an expiry. */
  reason: z.string(),
});
export type PermissionWithdrawnEvent = z.infer<typeof PermissionWithdrawnEvent>;

/** `new_mail` event on a person's stream (`/me/events`). */
export const PersonNewMailEvent = z.object({
  mail_id: Id,
  session_id: Id,
  from_name: z.string(),
  from_human: z.boolean(),
  subject: z.string(),
  in_reply_to: z.string(),
});
export type PersonNewMailEvent = z.infer<typeof PersonNewMailEvent>;

/**
 * Every SSE event type, with its payload schema. The SSE frame carries `event: <type>`,
 * `id: <event id>` (increasing per agent, replayed after `Last-Event-ID`, G-22) and
 * `data: <JSON payload>`.
 */
export const AGENT_EVENT_SCHEMAS = {
  new_mail: NewMailEvent,
  permission_decision: PermissionDecisionEvent,
} as const;
export const PERSON_EVENT_SCHEMAS = {
  new_mail: PersonNewMailEvent,
  permission_request: PermissionRequestEvent,
  permission_decision: PermissionDecisionEvent,
  permission_withdrawn: PermissionWithdrawnEvent,
} as const;
export type AgentEventType = keyof typeof AGENT_EVENT_SCHEMAS;
export type PersonEventType = keyof typeof PERSON_EVENT_SCHEMAS;

/** An SSE stream's event types and their payload schemas, e.g. {@link AGENT_EVENT_SCHEMAS}. */
export type EventSchemas = Readonly<Record<string, z.ZodType>>;

/**
 * A decoded event of a stream with the event schemas `M`, discriminated by `type`: the frame's
 * `event:` field, its `id:` (the cursor, G-22) and the payload as the schema outputs it.
 */
export type StreamEvent<M extends EventSchemas> = {
  [K in keyof M & string]: { type: K; id: string; data: z.output<M[K]> };
}[keyof M & string];

/** A decoded agent event (`GET /events`), discriminated by `type`. */
export type AgentEvent = StreamEvent<typeof AGENT_EVENT_SCHEMAS>;

/** A decoded event of a person's stream (`GET /me/events`), discriminated by `type`. */
export type PersonEvent = StreamEvent<typeof PERSON_EVENT_SCHEMAS>;
