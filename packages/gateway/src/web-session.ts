/**
 * Web mailbox sessions (SPEC G-12, H-4): a person signs in once with their user token and the
 * browser then carries an HttpOnly, SameSite=Strict cookie instead of the token. The cookie value
 * is random and only its SHA-256 is stored; a session belongs to the token it was made from, so
 * revoking or resetting that token ends it. Agent keys never make a session.
 *
 * CSRF: the cookie is sent by the browser on its own, so every unsafe request (POST, PUT, DELETE)
 * authenticated by it must come from the Gateway's own origin (`Origin` header). SameSite=Strict
 * alone is not enough: another port of the same host is the same *site*, and gets the cookie.
 */
import { WEB_SESSION_COOKIE } from '@agentmail/protocol';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserPrincipal } from './auth.js';
import type { Db, GatewayContext } from './context.js';
import { GatewayError } from './errors.js';
import { hashSecret, newSecret } from './ids.js';

/** A signed-in person with the end of their session (ms since the epoch). */
export interface WebSessionPrincipal extends UserPrincipal {
  expiresAtMs: number;
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** True for methods that change something (the ones a CSRF attack would use). */
export function isUnsafeMethod(method: string): boolean {
  return UNSAFE_METHODS.has(method.toUpperCase());
}

/** The origin this request was addressed to: the configured public origin, else scheme and Host. */
export function ownOrigin(ctx: GatewayContext, req: FastifyRequest): string | undefined {
  if (ctx.config.webOrigin !== undefined) return ctx.config.webOrigin;
  try {
    return new URL(`${req.protocol}://${req.host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * Refuse a request whose `Origin` is missing or another origin than the Gateway's own (fail
 * closed: every browser sends `Origin` on a POST, PUT or DELETE).
 * @throws GatewayError `AM_GW_ORIGIN_REFUSED` (403)
 */
export function requireSameOrigin(ctx: GatewayContext, req: FastifyRequest): void {
  const origin = req.headers.origin;
  const own = ownOrigin(ctx, req);
  if (typeof origin === 'string' && own !== undefined && origin === own) return;
  throw new GatewayError(
    'ORIGIN_REFUSED',
    typeof origin === 'string'
      ? `a request from ${JSON.stringify(origin.slice(0, 120))} may not use the web session of ${own ?? 'this Gateway'}`
      : 'a request without an Origin header may not use the web session',
    {
      detail: 'changes made with the web session cookie must come from the web mailbox itself',
      suggestion:
        'open the web mailbox at the Gateway address, or use a user token in the Authorization header',
      extra: { needs_origin: own ?? '' },
    },
  );
}

function cookieOptions(ctx: GatewayContext, req: FastifyRequest, maxAgeMs: number): CookieSerializeOptions {
  const secure = req.protocol === 'https' || (ctx.config.webOrigin?.startsWith('https://') ?? false);
  return {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    maxAge: Math.max(0, Math.floor(maxAgeMs / 1000)),
  };
}

/**
 * Sign in with a user token: a new session row and its cookie on `reply`.
 * @throws GatewayError `AM_GW_UNAUTHENTICATED` (401, unknown or revoked token), `AM_GW_FORBIDDEN`
 *   (403, an agent key: agents never get a web session)
 */
export async function signIn(
  ctx: GatewayContext,
  req: FastifyRequest,
  reply: FastifyReply,
  token: string,
): Promise<WebSessionPrincipal> {
  const hash = hashSecret(token.trim());
  const row = await ctx.db
    .selectFrom('user_tokens')
    .innerJoin('users', 'users.id', 'user_tokens.user_id')
    .select([
      'users.id',
      'users.name',
      'users.is_admin',
      'user_tokens.id as token_id',
      'user_tokens.revoked_at',
    ])
    .where('user_tokens.token_hash', '=', hash)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) {
    const agentKey = await ctx.db
      .selectFrom('agent_keys')
      .select('id')
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    if (agentKey)
      throw new GatewayError(
        'FORBIDDEN',
        'field "token": this is an agent key; the web mailbox takes a user token',
        {
          detail: 'agent keys never open a web session (SPEC G-12)',
          suggestion: 'sign in with your own user token',
          extra: { field: 'token', needs: 'user_token', given: 'agent_key' },
        },
      );
    throw new GatewayError(
      'UNAUTHENTICATED',
      `field "token": ${row ? 'the token was revoked' : 'unknown token'}`,
      {
        suggestion: 'ask an admin for your token (or a new one)',
        extra: { field: 'token' },
      },
    );
  }
  const now = ctx.config.clock();
  const value = newSecret('ams');
  const expiresAtMs = now + ctx.config.webSessionMaxAgeMs;
  await ctx.db
    .insertInto('web_sessions')
    .values({
      id_hash: hashSecret(value),
      user_id: row.id,
      token_id: row.token_id,
      created_at: now,
      expires_at: expiresAtMs,
    })
    .execute();
  // Expired rows of anyone go at each sign-in: the table stays small without a timer.
  await ctx.db.deleteFrom('web_sessions').where('expires_at', '<=', now).execute();
  void reply.setCookie(WEB_SESSION_COOKIE, value, cookieOptions(ctx, req, ctx.config.webSessionMaxAgeMs));
  return { id: row.id, name: row.name, admin: row.is_admin === 1, expiresAtMs };
}

/** The session cookie of a request, when it carries one. */
export function sessionCookie(req: FastifyRequest): string | undefined {
  const value = req.cookies?.[WEB_SESSION_COOKIE];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The person of a session cookie.
 * @throws GatewayError `AM_GW_UNAUTHENTICATED` (401) for an unknown, expired or revoked session.
 */
export async function sessionUser(db: Db, value: string, nowMs: number): Promise<WebSessionPrincipal> {
  const row = await db
    .selectFrom('web_sessions')
    .innerJoin('users', 'users.id', 'web_sessions.user_id')
    .innerJoin('user_tokens', 'user_tokens.id', 'web_sessions.token_id')
    .select(['users.id', 'users.name', 'users.is_admin', 'web_sessions.expires_at', 'user_tokens.revoked_at'])
    .where('web_sessions.id_hash', '=', hashSecret(value))
    .executeTakeFirst();
  const expired = row !== undefined && Number(row.expires_at) <= nowMs;
  if (!row || expired || row.revoked_at !== null)
    throw new GatewayError(
      'UNAUTHENTICATED',
      !row
        ? 'the web session is unknown'
        : expired
          ? 'the web session expired'
          : 'the token of this web session was revoked',
      { suggestion: 'sign in again', extra: { session: !row ? 'unknown' : expired ? 'expired' : 'revoked' } },
    );
  return { id: row.id, name: row.name, admin: row.is_admin === 1, expiresAtMs: Number(row.expires_at) };
}

/** Sign out: delete the session (when there is one) and clear the cookie. Never throws for a missing session. */
export async function signOut(ctx: GatewayContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const value = sessionCookie(req);
  if (value !== undefined)
    await ctx.db.deleteFrom('web_sessions').where('id_hash', '=', hashSecret(value)).execute();
  void reply.clearCookie(WEB_SESSION_COOKIE, { ...cookieOptions(ctx, req, 0), maxAge: 0 });
}
