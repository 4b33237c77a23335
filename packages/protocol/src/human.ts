import { z } from 'zod';
import { AddressString } from './address.js';
import { Name } from './agent.js';
import { Id, MAIL_BODY_MAX_CHARS, MAIL_SUBJECT_MAX_CHARS, PermissionMode, Timestamp } from './common.js';

/** `POST /me/mail/send` body: a person sends a task or a reply. */
export const PersonSendRequest = z.strictObject({
  to: AddressString,
  /** Empty or blank: the Gateway stores the body's first non-empty line (shared-policy `subjectForSend`). */
  subject: z.string().max(MAIL_SUBJECT_MAX_CHARS),
  body: z.string().max(MAIL_BODY_MAX_CHARS),
  cc: z.array(AddressString).max(20).optional(),
  reply_to: Id.optional(),
  attachment_ids: z.array(Id).max(20).optional(),
  /**
   * Mode for a new session (P-1) @default 'workspace'. For an existing session it changes the
   * mode when the sender owns the session (started it); anyone else gets a 403 saying whose it is.
   */
  permission_mode: PermissionMode.optional(),
  max_rounds: z.number().int().min(1).max(1000).optional(),
});
export type PersonSendRequest = z.infer<typeof PersonSendRequest>;

/** `POST /admin/users` body. */
export const CreateUserRequest = z.strictObject({
  /** The same rule as an agent's name ({@link Name}), so the name works in an address. */
  name: Name,
  admin: z.boolean().optional(),
});
export type CreateUserRequest = z.infer<typeof CreateUserRequest>;

export const CreateUserResponse = z.object({
  name: z.string(),
  admin: z.boolean(),
  /** Shown once; stored hashed. */
  token: z.string(),
});
export type CreateUserResponse = z.infer<typeof CreateUserResponse>;

export const UserView = z.object({ name: z.string(), admin: z.boolean(), created_at: Timestamp });
export const UsersResponse = z.object({ users: z.array(UserView) });
export type UsersResponse = z.infer<typeof UsersResponse>;

/** `POST /admin/agent-keys` body: issue a key bound to one agent name (G-12). */
export const IssueAgentKeyRequest = z.strictObject({
  /** The name the key is bound to: the {@link Name} rule of `POST /agent/register`. */
  agent_name: Name,
});
export type IssueAgentKeyRequest = z.infer<typeof IssueAgentKeyRequest>;

export const IssueAgentKeyResponse = z.object({
  key_id: Id,
  agent_name: z.string(),
  /** Shown once; stored hashed. */
  key: z.string(),
});
export type IssueAgentKeyResponse = z.infer<typeof IssueAgentKeyResponse>;

/** One agent key as `GET /admin/agent-keys` lists it (never the key itself: only its hash is stored). */
export const AgentKeyView = z.object({
  key_id: Id,
  agent_name: z.string(),
  created_at: Timestamp,
  /** Last request the key authenticated (to the minute), or null when never used. */
  last_used_at: Timestamp.nullable(),
  /** When it was revoked, or null while it works. */
  revoked_at: Timestamp.nullable(),
});
export type AgentKeyView = z.infer<typeof AgentKeyView>;

/** `GET /admin/agent-keys` answer: every key, oldest first. */
export const AgentKeysResponse = z.object({ keys: z.array(AgentKeyView) });
export type AgentKeysResponse = z.infer<typeof AgentKeysResponse>;

/** `{name}` path parameter of the routes that name one person. */
export const NameParams = z.strictObject({ name: Name });
export type NameParams = z.infer<typeof NameParams>;

/**
 * `POST /admin/users/{name}/token` answer: the person's new token (shown once); every older one
 * is revoked and the web sessions made from them end.
 */
export const ResetTokenResponse = z.object({
  name: z.string(),
  /** Shown once; stored hashed. */
  token: z.string(),
  /** How many older tokens stopped working. */
  revoked_tokens: z.number().int().nonnegative(),
});
export type ResetTokenResponse = z.infer<typeof ResetTokenResponse>;

/** `DELETE /admin/agent-keys/{id}` answer: the key can no longer authenticate. */
export const RevokeAgentKeyResponse = z.object({
  status: z.literal('revoked'),
  key_id: Id,
});
export type RevokeAgentKeyResponse = z.infer<typeof RevokeAgentKeyResponse>;

/** `{platform}` path parameter of the admin model routes (a platform name, e.g. `pi`). */
export const PlatformParams = z.strictObject({ platform: z.string().min(1).max(40) });
export type PlatformParams = z.infer<typeof PlatformParams>;

/** `PUT /admin/platforms/{platform}/models` body: ordered selection, ≤10 (G-26). */
export const AllowedModelsRequest = z.strictObject({
  models: z.array(z.string().regex(/^[^/]+\/.+$/, '"provider/model"')).max(10),
});
export type AllowedModelsRequest = z.infer<typeof AllowedModelsRequest>;

/** One model of a platform's catalogue as the agents report it (SPEC G-26). */
export const CatalogueEntry = z.object({
  key: z.string(),
  /** Display name, when an agent gave one; '' otherwise. */
  name: z.string(),
  /** Agents of the platform whose last reported catalogue has it. */
  agents: z.array(z.string()),
});
export type CatalogueEntry = z.infer<typeof CatalogueEntry>;

export const AllowedModelsResponse = z.object({
  platform: z.string(),
  models: z.array(
    z.object({
      key: z.string(),
      /**
       * true when agents of the platform reported catalogues and none has the model (G-26);
       * false while no agent reported one (nothing is known yet).
       */
      stale: z.boolean(),
    }),
  ),
  /** What the platform's agents have: the union of their last reported catalogues (G-25, G-26). */
  catalogue: z.array(CatalogueEntry).default([]),
  /** Agents of the platform that reported a catalogue; empty: none has yet. */
  reported_by: z.array(z.string()).default([]),
});
export type AllowedModelsResponse = z.infer<typeof AllowedModelsResponse>;

/**
 * `GET /healthz` answer: `status` plus whatever a Gateway adds (version, counts…), so the object
 * is loose and a client shows the extra fields as they come.
 */
export const HealthResponse = z.looseObject({ status: z.string() });
export type HealthResponse = z.infer<typeof HealthResponse>;
