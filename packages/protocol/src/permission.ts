import { z } from 'zod';
import { Id, Timestamp } from './common.js';

/**
 * `POST /permission/request` body (see SPEC §3, G-38, P-9). `kind: "approval"` asks to run a
 * guarded tool (options are the approval words); `kind: "question"` carries the union of the
 * question's option labels, or no options for free text.
 */
export const PermissionRequest = z.strictObject({
  question: z.string().min(1).max(20_000),
  options: z.array(z.string().min(1).max(200)).max(50),
  /** What the agent is doing (tool name and input, recent text), shown to the person. */
  context: z.string().max(50_000).default(''),
  session_id: Id,
  /** Idempotency key of this question, ≤160 bytes (G-32). */
  relay_key: z.string().min(1),
  kind: z.enum(['approval', 'question']),
  multi_select: z.boolean().optional(),
});
export type PermissionRequest = z.input<typeof PermissionRequest>;

/** Answer of a permission request: asked, or already asked under this relay key. */
export const PermissionRequestResponse = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('pending'),
    request_id: Id,
    /** The permission mail sent to the person. */
    mail_id: Id,
    /** Name of the person asked (G-38). */
    asked: z.string(),
  }),
  z.object({ status: z.literal('duplicate_relay'), request_id: Id }),
]);
export type PermissionRequestResponse = z.infer<typeof PermissionRequestResponse>;

/**
 * Where a request stands: `pending` (someone waits for the answer), `decided` (a person
 * answered), `withdrawn` (the asking call stopped waiting — its turn timed out, was stopped or
 * its bridge shut down — and said so), `expired` (its bridge started again, so nothing of the
 * earlier process waits any more). Only `pending` requests can be decided.
 */
export const PermissionStatus = z.enum(['pending', 'decided', 'withdrawn', 'expired']);
export type PermissionStatus = z.infer<typeof PermissionStatus>;

/** A permission or question request as a person sees it. */
export const PermissionView = z.object({
  id: Id,
  agent_name: z.string(),
  session_id: Id,
  session_alias: z.string(),
  kind: z.enum(['approval', 'question']),
  question: z.string(),
  options: z.array(z.string()),
  multi_select: z.boolean(),
  context: z.string(),
  status: PermissionStatus,
  /**
   * `decided`: the decision word. `withdrawn`/`expired`: why nobody waits any more (`timeout`,
   * `aborted`, `shutdown`; `restart` for an expiry). `pending`: null.
   */
  decision: z.string().nullable(),
  answers: z.array(z.string()),
  note: z.string(),
  mail_id: Id,
  created_at: Timestamp,
  decided_at: Timestamp.nullable(),
});
export type PermissionView = z.infer<typeof PermissionView>;

/** `GET /me/permissions?status=pending|all` query. */
export const PermissionsQuery = z.strictObject({
  status: z.enum(['pending', 'all']).default('pending'),
});
export type PermissionsQuery = z.infer<typeof PermissionsQuery>;

export const PermissionsResponse = z.object({ permissions: z.array(PermissionView) });
export type PermissionsResponse = z.infer<typeof PermissionsResponse>;

/**
 * `POST /me/permissions/{id}/decide` body. Approvals: `decision` is `approve` (once), `always`
 * or `deny`. Questions: `answers` holds the chosen option labels, or the free text as one
 * element; `decision: "deny"` declines to answer.
 */
export const DecideRequest = z
  .strictObject({
    decision: z.enum(['approve', 'always', 'deny']).optional(),
    answers: z.array(z.string().min(1)).min(1).max(50).optional(),
    note: z.string().max(20_000).optional(),
  })
  .refine((v) => (v.decision === undefined) !== (v.answers === undefined), {
    message: 'give exactly one of "decision" (approve|always|deny) or "answers" (array of strings)',
    path: ['decision'],
  });
export type DecideRequest = z.infer<typeof DecideRequest>;

export const DecideResponse = z.object({
  status: z.literal('decided'),
  id: Id,
  /** The wire decision delivered to the agent: approve_once | approve_always | deny | answered. */
  decision: z.string(),
});
export type DecideResponse = z.infer<typeof DecideResponse>;

/** Why an asking call stopped waiting without a person's decision (the bridge's own denial). */
export const WithdrawReason = z.enum(['timeout', 'aborted', 'shutdown']);
export type WithdrawReason = z.infer<typeof WithdrawReason>;

/** `POST /permission/{id}/withdraw` body: the asking call no longer waits (its turn ended). */
export const WithdrawPermissionRequest = z.strictObject({
  reason: WithdrawReason,
});
export type WithdrawPermissionRequest = z.infer<typeof WithdrawPermissionRequest>;

/**
 * `POST /permission/{id}/withdraw` answer: the request's status afterwards — `withdrawn`, or
 * `decided` when the person's decision came first (idempotent: a second withdraw answers the same).
 */
export const WithdrawPermissionResponse = z.object({
  id: Id,
  status: PermissionStatus,
});
export type WithdrawPermissionResponse = z.infer<typeof WithdrawPermissionResponse>;
