import { z } from 'zod';
import { ModeEnforcement, Timestamp } from './common.js';

/** Agent or user name: letters, digits, `_`, `-`, `.`; no `@`. */
export const Name = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[\p{L}\p{N}_][\p{L}\p{N}_.-]*$/u,
    'letters, digits, "_", "-" and "." only, not starting with "-" or "."',
  );

/** `POST /agent/register` body: announce name and platform; idempotent (see SPEC B-1). */
export const RegisterRequest = z.strictObject({
  name: Name,
  platform: z.string().min(1).max(40),
  /** Bridge version string, for logs. */
  version: z.string().max(80).optional(),
  /**
   * The bridge process just started and is the agent's one bridge: no call of an earlier process
   * waits for a decision any more, so the agent's pending permission and question requests
   * expire (a bridge that was killed could not withdraw them). A probe or a tool that registers
   * beside a running bridge leaves it out. @default false
   */
  expire_pending: z.boolean().optional(),
  /**
   * A name that is registered already keeps its platform and version: for a tool that registers
   * only so that its agent may send (`agentmail mcp`), beside a bridge that may run under the same
   * name. A new name is registered with `platform`. @default false
   */
  keep_existing: z.boolean().optional(),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({
  name: z.string(),
  platform: z.string(),
  /** true the first time this name registered. */
  created: z.boolean(),
  heartbeat_interval_ms: z.number().int().positive(),
  /** Pending requests that expired because of `expire_pending`. */
  expired_requests: z.number().int().nonnegative().optional(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

/** A working directory the bridge serves. */
export const Workspace = z.looseObject({
  path: z.string().min(1),
  label: z.string().optional(),
});

/** One entry of the platform's session snapshot (see SPEC G-25, G-37). */
export const PlatformSession = z.looseObject({
  /** The platform's own session id. */
  platform_id: z.string().min(1),
  /** Working directory of the session (absolute). */
  path: z.string(),
  title: z.string().optional(),
  /** Platform slug, reused as alias on adoption. */
  slug: z.string().optional(),
  updated_at: Timestamp.optional(),
});
export type PlatformSession = z.infer<typeof PlatformSession>;

/** One model of the platform's catalogue; `key` is `provider/model`, split at the first `/` (G-26). */
export const CatalogueModel = z.looseObject({
  key: z
    .string()
    .min(3)
    .regex(/^[^/]+\/.+$/, '"provider/model"'),
  name: z.string().optional(),
});
export type CatalogueModel = z.infer<typeof CatalogueModel>;

/** Most sessions a heartbeat may carry (see SPEC G-25). */
export const HEARTBEAT_MAX_SESSIONS = 200;
/** Most catalogue models a heartbeat may carry (see SPEC G-25). */
export const HEARTBEAT_MAX_MODELS = 300;

/**
 * `POST /agent/heartbeat` body. Decoded leniently (see SPEC G-11): unknown fields are kept out
 * and named in the answer's `unknown_fields`. An omitted `sessions`/`models` means "could not
 * read"; an empty array means "really empty" and clears the stored list (G-25).
 */
export const HeartbeatRequest = z.looseObject({
  workspaces: z.array(Workspace).max(100).optional(),
  sessions: z.array(PlatformSession).max(HEARTBEAT_MAX_SESSIONS).optional(),
  models: z.array(CatalogueModel).max(HEARTBEAT_MAX_MODELS).optional(),
  mode_enforcement: ModeEnforcement.optional(),
  /** Why enforcement is advisory, when it is. */
  mode_enforcement_reason: z.string().max(500).optional(),
  /**
   * The workspace sandbox (SPEC P-1, P-12): `verified` after the start-time self-check held, else
   * `unverified: <why>` (bubblewrap missing, a canary failed, a host whose tools cannot be wrapped).
   */
  sandbox: z.string().max(500).optional(),
  version: z.string().max(80).optional(),
});
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;

/** The top-level field names {@link HeartbeatRequest} knows. */
export const HEARTBEAT_KNOWN_FIELDS: readonly string[] = Object.keys(HeartbeatRequest.shape);

/** Top-level fields of a decoded heartbeat body that this version does not know (G-11). */
export function heartbeatUnknownFields(body: Record<string, unknown>): string[] {
  return Object.keys(body).filter((k) => !HEARTBEAT_KNOWN_FIELDS.includes(k));
}

export const HeartbeatResponse = z.object({
  status: z.literal('ok'),
  server_time: Timestamp,
  /** Admin's ordered selection of models for mail turns (≤10), `provider/model` (G-27). */
  allowed_models: z.array(z.string()).max(10),
  /** Top-level request fields the Gateway ignored (G-11). */
  unknown_fields: z.array(z.string()),
  heartbeat_interval_ms: z.number().int().positive(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

/** `POST /agent/offline` body: a bridge that stops says so, so it is offline at once (H-3). */
export const AgentOfflineRequest = z.strictObject({
  /** Why, for the log (`shutdown`, `lock_lost`, …). */
  reason: z.string().max(200).optional(),
});
export type AgentOfflineRequest = z.infer<typeof AgentOfflineRequest>;

export const AgentOfflineResponse = z.object({
  status: z.literal('offline'),
  name: z.string(),
  offline_since: Timestamp,
});
export type AgentOfflineResponse = z.infer<typeof AgentOfflineResponse>;
