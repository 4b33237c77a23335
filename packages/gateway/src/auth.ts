/**
 * Authentication (SPEC G-12). Agent routes take an agent key (`Authorization: Bearer <key>`,
 * fallback `X-Agent-Secret`) and never look at cookies; a key is bound to one agent name. Human
 * routes (`/me/…`) take a user token, or the web mailbox's session cookie (web-session.ts), and
 * refuse agent keys; admin routes take an admin's. Secrets are stored as SHA-256 only.
 */
import type { FastifyRequest } from 'fastify';
import type { Db, GatewayContext } from './context.js';
import type { GatewayDb } from './db/database.js';
import { KEY_USE_RESOLUTION_MS } from './db/schema.js';
import { GatewayError } from './errors.js';
import { hashSecret, newId, newSecret } from './ids.js';
import { isUnsafeMethod, requireSameOrigin, sessionCookie, sessionUser } from './web-session.js';

/** The authenticated agent of a request. */
export interface AgentPrincipal {
  /** The name the key is bound to. */
  name: string;
  keyId: string;
}

/**
 * A new user token for `userId` (`amu_…`): returned once, stored as its SHA-256 only. Every way a
 * person gets a token goes through here: the first admin, `POST /admin/users`, a token reset.
 */
export async function newUserToken(db: Db, userId: string, nowMs: number): Promise<string> {
  const token = newSecret('amu');
  await db
    .insertInto('user_tokens')
    .values({
      id: newId('t', nowMs),
      user_id: userId,
      token_hash: hashSecret(token),
      created_at: nowMs,
      revoked_at: null,
    })
    .execute();
  return token;
}

/** The credential of a request: Bearer token, else `X-Agent-Secret` (agents only). */
export function credentialOf(req: FastifyRequest, allowAgentSecret: boolean): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const secret = req.headers['x-agent-secret'];
  if (allowAgentSecret && typeof secret === 'string' && secret.trim() !== '') return secret.trim();
  return undefined;
}

/**
 * Remember when a key was last used, to the minute ({@link KEY_USE_RESOLUTION_MS}): at most one
 * write per key and minute, not one per request.
 */
async function noteKeyUse(
  db: GatewayDb,
  keyId: string,
  lastUsed: number | null,
  nowMs: number,
): Promise<void> {
  if (lastUsed !== null && nowMs - Number(lastUsed) < KEY_USE_RESOLUTION_MS) return;
  await db.updateTable('agent_keys').set({ last_used_at: nowMs }).where('id', '=', keyId).execute();
}

/**
 * Resolve the agent key of a request.
 * @throws GatewayError `AM_GW_UNAUTHENTICATED` (401) when no key, an unknown or a revoked key is
 *   given; `AM_GW_FORBIDDEN` (403) for a user token (a valid credential of the wrong kind, like
 *   an agent key on a human route).
 */
export async function authenticateAgent(
  db: GatewayDb,
  req: FastifyRequest,
  nowMs: number = Date.now(),
): Promise<AgentPrincipal> {
  const secret = credentialOf(req, true);
  if (secret === undefined)
    throw new GatewayError('UNAUTHENTICATED', 'missing agent key', {
      detail: 'agent routes need "Authorization: Bearer <agent key>" (or the header X-Agent-Secret)',
      suggestion: 'ask an admin for a key: agentmail agent key <name>',
    });
  const hash = hashSecret(secret);
  const key = await db
    .selectFrom('agent_keys')
    .select(['id', 'agent_name', 'revoked_at', 'last_used_at'])
    .where('key_hash', '=', hash)
    .executeTakeFirst();
  if (key && key.revoked_at === null) {
    await noteKeyUse(db, key.id, key.last_used_at, nowMs);
    return { name: key.agent_name, keyId: key.id };
  }
  if (key)
    throw new GatewayError('UNAUTHENTICATED', `the agent key ${key.id} was revoked`, {
      suggestion: 'ask an admin for a new key',
    });
  const user = await db
    .selectFrom('user_tokens')
    .select('id')
    .where('token_hash', '=', hash)
    .executeTakeFirst();
  if (user)
    throw new GatewayError('FORBIDDEN', 'this route needs an agent key; a user token was given', {
      detail: 'agent routes take "Authorization: Bearer <agent key>" (SPEC G-12)',
      suggestion:
        'people use the /api/v1/me/… routes with their token; an agent key comes from `agentmail agent key <name>`',
      extra: { needs: 'agent_key', given: 'user_token' },
    });
  throw new GatewayError('UNAUTHENTICATED', 'unknown agent key', { suggestion: 'check AGENTMAIL_AGENT_KEY' });
}

/**
 * Check that a name given in a request is the name the key is bound to.
 * @throws GatewayError `AM_GW_KEY_BOUND_TO_OTHER_AGENT` (403) naming the bound name.
 */
export function requireBoundName(agent: AgentPrincipal, name: string): void {
  if (agent.name !== name)
    throw new GatewayError(
      'KEY_BOUND_TO_OTHER_AGENT',
      `this key is bound to agent "${agent.name}", not "${name}"`,
      {
        suggestion: `use the name "${agent.name}" or a key issued for "${name}"`,
        extra: { bound_name: agent.name },
      },
    );
}

/** The person a request acts as, and whether it came through the web session cookie. */
export interface UserPrincipal {
  id: string;
  name: string;
  admin: boolean;
  /** End of the web session (ms), when the request was authenticated by the session cookie. */
  sessionExpiresAtMs?: number;
}

/**
 * Resolve the person of a request (human and admin routes): the Bearer user token, else the web
 * session cookie. A cookie-authenticated POST, PUT or DELETE must come from the Gateway's own
 * origin (CSRF). Agent keys are refused, whichever way they come.
 * @throws GatewayError `AM_GW_UNAUTHENTICATED` (401) without a valid token or session;
 *   `AM_GW_FORBIDDEN` (403) for an agent key, or a non-admin on an admin route;
 *   `AM_GW_ORIGIN_REFUSED` (403) for a cross-origin change through the cookie
 */
export async function authenticateUser(
  ctx: GatewayContext,
  req: FastifyRequest,
  adminOnly: boolean,
): Promise<UserPrincipal> {
  const secret = credentialOf(req, false);
  let user: UserPrincipal;
  if (secret !== undefined) user = await userByToken(ctx.db, secret, adminOnly);
  else {
    const cookie = sessionCookie(req);
    if (cookie === undefined)
      throw new GatewayError('UNAUTHENTICATED', 'missing user token', {
        detail: 'human routes need "Authorization: Bearer <user token>" (or the web mailbox\'s session)',
        suggestion: 'set AGENTMAIL_TOKEN to your user token',
      });
    const session = await sessionUser(ctx.db, cookie, ctx.config.clock());
    if (isUnsafeMethod(req.method)) requireSameOrigin(ctx, req);
    user = {
      id: session.id,
      name: session.name,
      admin: session.admin,
      sessionExpiresAtMs: session.expiresAtMs,
    };
  }
  if (adminOnly && !user.admin)
    throw new GatewayError('FORBIDDEN', `user "${user.name}" is not an admin`, {
      suggestion: 'use the admin token printed by the first `agentmail serve`',
    });
  return user;
}

async function userByToken(db: GatewayDb, secret: string, adminOnly: boolean): Promise<UserPrincipal> {
  const hash = hashSecret(secret);
  const row = await db
    .selectFrom('user_tokens')
    .innerJoin('users', 'users.id', 'user_tokens.user_id')
    .select(['users.id', 'users.name', 'users.is_admin', 'user_tokens.revoked_at'])
    .where('user_tokens.token_hash', '=', hash)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) {
    const agentKey = await db
      .selectFrom('agent_keys')
      .select('id')
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    if (agentKey)
      throw new GatewayError('FORBIDDEN', 'this route needs a user token; an agent key was given', {
        detail: `${adminOnly ? 'admin' : 'human'} routes take "Authorization: Bearer <user token>" and never an agent key (SPEC G-12)`,
        suggestion:
          'agents use the agent routes (/api/v1/mail/…, /api/v1/agent/…); people use their user token',
        extra: { needs: 'user_token', given: 'agent_key' },
      });
    throw new GatewayError('UNAUTHENTICATED', row ? 'the user token was revoked' : 'unknown user token', {
      suggestion: 'check AGENTMAIL_TOKEN',
    });
  }
  return { id: row.id, name: row.name, admin: row.is_admin === 1 };
}
