/**
 * The admin side of identities: people and their user tokens, agent keys (issued once, stored
 * hashed, listed without the key, revoked; SPEC G-12).
 */
import type { AgentKeysResponse, ResetTokenResponse } from '@agentmail/protocol';
import { newUserToken } from './auth.js';
import type { Db, GatewayContext } from './context.js';
import { iso } from './context.js';
import { type GatewayDb, isUniqueViolation } from './db/database.js';
import { GatewayError } from './errors.js';
import { hashSecret, newId, newSecret } from './ids.js';

/**
 * Claim `name` for a person or an agent in the shared namespace (SPEC G-12): one conditional
 * insert, so of several Gateways claiming it at once exactly one kind wins. Claiming a name of
 * the same kind again is fine (`created: false`).
 * @throws GatewayError `AM_GW_CONFLICT` when the other kind holds the name
 */
export async function claimName(
  trx: Db,
  name: string,
  kind: 'user' | 'agent',
  now: number,
): Promise<{ created: boolean }> {
  const claimed = await trx
    .insertInto('names')
    .values({ name, kind, created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('name')
    .executeTakeFirst();
  if (claimed) return { created: true };
  const holder = await trx
    .selectFrom('names')
    .select('kind')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  if (holder.kind !== kind)
    throw new GatewayError(
      'CONFLICT',
      `the name "${name}" belongs to ${holder.kind === 'agent' ? 'an agent' : 'a person'}`,
      { suggestion: 'people and agents share one namespace: choose another name' },
    );
  return { created: false };
}

/**
 * Create a user with a fresh token (shown once, stored hashed).
 * @throws GatewayError `AM_GW_CONFLICT` when the name is taken by a person or an agent
 */
export async function createUser(
  ctx: GatewayContext,
  name: string,
  admin: boolean,
): Promise<{ token: string; id: string }> {
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const now = ctx.config.clock();
      const { created } = await claimName(trx, name, 'user', now);
      if (!created) throw new GatewayError('CONFLICT', `a user named "${name}" exists`);
      const id = newId('u', now);
      await trx
        .insertInto('users')
        .values({ id, name, is_admin: admin ? 1 : 0, created_at: now })
        .execute();
      return { token: await newUserToken(trx, id, now), id };
    });
  } catch (err) {
    if (isUniqueViolation(err, 'name')) throw new GatewayError('CONFLICT', `a user named "${name}" exists`);
    throw err;
  }
}

/**
 * Issue an agent key bound to `agentName` (shown once, stored hashed; SPEC G-12); the first key
 * claims the name for an agent.
 * @throws GatewayError `AM_GW_CONFLICT` when a person has the name
 */
export async function issueAgentKey(
  ctx: GatewayContext,
  agentName: string,
): Promise<{ keyId: string; key: string }> {
  const now = ctx.config.clock();
  const key = newSecret('amk');
  const keyId = newId('k', now);
  await ctx.db.transaction().execute(async (trx) => {
    await claimName(trx, agentName, 'agent', now);
    await trx
      .insertInto('agent_keys')
      .values({
        id: keyId,
        agent_name: agentName,
        key_hash: hashSecret(key),
        created_at: now,
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
  });
  return { keyId, key };
}

/** Every agent key, oldest first: id, bound name, created, last used, revoked (never the key). */
export async function listAgentKeys(ctx: GatewayContext): Promise<AgentKeysResponse> {
  const rows = await ctx.db
    .selectFrom('agent_keys')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const at = (ms: number | null): string | null => (ms === null ? null : iso(Number(ms)));
  return {
    keys: rows.map((k) => ({
      key_id: k.id,
      agent_name: k.agent_name,
      created_at: iso(Number(k.created_at)),
      last_used_at: at(k.last_used_at),
      revoked_at: at(k.revoked_at),
    })),
  };
}

/**
 * Give user `name` a new token (shown once, stored hashed) and revoke every older one, ending the
 * web sessions made from them, in one transaction: for a person who lost theirs, or whose token leaked. Takes the store itself, so
 * `agentmail admin reset-token` can run it on a data directory without a Gateway.
 * @throws GatewayError `AM_GW_NOT_FOUND` when no user has the name.
 */
export async function resetUserToken(db: GatewayDb, name: string, now: number): Promise<ResetTokenResponse> {
  return db.transaction().execute(async (trx) => {
    const user = await trx.selectFrom('users').select('id').where('name', '=', name).executeTakeFirst();
    if (!user)
      throw new GatewayError('NOT_FOUND', `no user is named "${name}"`, {
        suggestion: 'list the users (GET /api/v1/admin/users)',
        extra: { name },
      });
    const revoked = await trx
      .updateTable('user_tokens')
      .set({ revoked_at: now })
      .where('user_id', '=', user.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    // A session made from a revoked token must end with it (a leaked token's sessions too).
    await trx.deleteFrom('web_sessions').where('user_id', '=', user.id).execute();
    const token = await newUserToken(trx, user.id, now);
    return { name, token, revoked_tokens: Number(revoked.numUpdatedRows) };
  });
}

/** Revoke an agent key. @throws GatewayError `AM_GW_NOT_FOUND` */
export async function revokeAgentKey(ctx: GatewayContext, keyId: string): Promise<void> {
  const r = await ctx.db
    .updateTable('agent_keys')
    .set({ revoked_at: ctx.config.clock() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0)
    throw new GatewayError('NOT_FOUND', `agent key "${keyId}" not found or already revoked`);
}
