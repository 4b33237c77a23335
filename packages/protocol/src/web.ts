import { z } from 'zod';
import { Id, ModeEnforcement, PermissionMode, Timestamp } from './common.js';

/*
 * The web mailbox's own wire shapes: the browser session (a cookie instead of a token in every
 * request) and the agents overview a person may see. The admin lists (agent keys, token reset)
 * are in human.ts, shared with the CLI.
 */

/** Name of the web session cookie (HttpOnly, SameSite=Strict, Secure behind HTTPS). @default 'am_session' */
export const WEB_SESSION_COOKIE = 'am_session';

/** How long a web session lasts after sign-in, in ms (absolute, no sliding). @default 7 days */
export const WEB_SESSION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** `POST /web/session` body: sign in with a user token (never an agent key, SPEC G-12). */
export const WebSignInRequest = z.strictObject({
  /** The person's user token (`amu_…`), as `agentmail serve` or an admin printed it. */
  token: z.string().min(1).max(200),
});
export type WebSignInRequest = z.infer<typeof WebSignInRequest>;

/** Who is signed in: `POST /web/session` and `GET /web/session` answers. */
export const WebSessionResponse = z.object({
  name: z.string(),
  admin: z.boolean(),
  /** When the session ends (sign in again then); null when the request used a token, not a session. */
  expires_at: Timestamp.nullable(),
});
export type WebSessionResponse = z.infer<typeof WebSessionResponse>;

/** `DELETE /web/session` answer: the session is gone and the cookie cleared (also when none was open). */
export const WebSignOutResponse = z.object({ status: z.literal('signed_out') });
export type WebSignOutResponse = z.infer<typeof WebSignOutResponse>;

/** One session of an agent as a person sees it (only sessions the person took part in, SPEC H-4). */
export const AgentSessionView = z.object({
  id: Id,
  /** '' for a default session. */
  alias: z.string(),
  path: z.string(),
  /** Where to write to continue it (`name@path.alias`, or the default session's `name@path.`). */
  address: z.string(),
  title: z.string(),
  permission_mode: PermissionMode,
  updated_at: Timestamp,
});
export type AgentSessionView = z.infer<typeof AgentSessionView>;

/** One agent of `GET /me/agents`. */
export const AgentView = z.object({
  name: z.string(),
  platform: z.string(),
  online: z.boolean(),
  last_seen: Timestamp.nullable(),
  /** How its bridge enforces permission modes (SPEC P-8); null before its first heartbeat says. */
  mode_enforcement: ModeEnforcement.nullable(),
  /**
   * Why enforcement is advisory, as the heartbeat that said the mode gave it (SPEC P-8); null
   * when it gave none (native) and before the first heartbeat says. Absent from older Gateways.
   */
  mode_enforcement_reason: z.string().nullable().default(null),
  /**
   * The workspace sandbox as its last heartbeat said it (SPEC P-12): `verified` or
   * `unverified: <why>`; null before a heartbeat says. Absent from older Gateways.
   */
  sandbox: z.string().nullable().default(null),
  /** Working directories it announced. */
  workspaces: z.array(z.string()),
  /** Its default address, `name@.` */
  address: z.string(),
  sessions: z.array(AgentSessionView),
});
export type AgentView = z.infer<typeof AgentView>;

export const AgentsResponse = z.object({ agents: z.array(AgentView) });
export type AgentsResponse = z.infer<typeof AgentsResponse>;
