/**
 * Idempotent sends (SPEC G-41): a send, forward or permission request carrying an
 * `Idempotency-Key` header stores its answer in the same transaction as its effect, under the
 * sender and the key. A repeat with the same key and the same request answers that first answer
 * and creates nothing (also after a restart, and on another Gateway of the store: a concurrent
 * repeat waits on the key's row until the first commits); the same key with another request is a
 * 409. A send that failed stored nothing, so its repeat runs again.
 */
import { createHash } from 'node:crypto';
import type { Actor, Db } from './context.js';
import { isUniqueViolation } from './db/database.js';
import { GatewayError } from './errors.js';

/** Header name of the key (lower case, as Node gives it). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Longest key accepted, in characters. @default 255 */
export const IDEMPOTENCY_KEY_MAX_CHARS = 255;

/** How long an answer is kept for repeats, in ms (then the key may be used afresh). @default 24 h */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** A request's key, the sender it is scoped to, and its fingerprint. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  fingerprint: string;
  /** Set when the answer was the stored one (the route says so in `Idempotent-Replayed`). */
  replayed?: boolean;
}

/**
 * The claim of a request: undefined without the header.
 * @throws GatewayError `AM_GW_BAD_REQUEST` naming the header when the key is empty, too long or
 *   not printable ASCII
 */
export function idempotencyClaim(
  header: string | string[] | undefined,
  actor: Actor,
  endpointId: string,
  request: unknown,
): IdempotencyClaim | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header.join(',') : header;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_CHARS || !/^[\x21-\x7e]+$/.test(key))
    throw new GatewayError(
      'BAD_REQUEST',
      `header "Idempotency-Key": 1 to ${IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters without spaces`,
      {
        suggestion: 'send a fresh UUID per send and the same one when retrying it',
        extra: { field: 'Idempotency-Key' },
      },
    );
  const scope = actor.kind === 'agent' ? `agent:${actor.name}` : `user:${actor.id}`;
  const fingerprint = createHash('sha256')
    .update(endpointId)
    .update('\n')
    .update(JSON.stringify(request))
    .digest('hex');
  return { scope, key, fingerprint };
}

/**
 * In a transaction: the stored answer of `claim`, or undefined when this is its first use.
 * @throws GatewayError `AM_GW_IDEMPOTENCY_KEY_REUSED` (409) when the key was used for another request
 */
export async function storedAnswer<T>(trx: Db, claim: IdempotencyClaim, now: number): Promise<T | undefined> {
  const row = await trx
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'response', 'created_at'])
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .executeTakeFirst();
  if (!row || Number(row.created_at) < now - IDEMPOTENCY_KEY_TTL_MS) return undefined;
  if (row.fingerprint !== claim.fingerprint)
    throw new GatewayError(
      'IDEMPOTENCY_KEY_REUSED',
      `header "Idempotency-Key": "${claim.key}" was used for another request`,
      {
        detail: 'a key names one request: its repeat must be the same request',
        suggestion: 'send a new key for a new request; reuse a key only to retry the same one',
      },
    );
  claim.replayed = true;
  return JSON.parse(row.response) as T;
}

/**
 * In the same transaction as the effect: store its answer under `claim`. A concurrent first use
 * of the key (another Gateway) makes this insert wait and then fail on the key; the caller's
 * transaction rolls back and {@link settleRace} answers the stored answer.
 */
export async function storeAnswer(
  trx: Db,
  claim: IdempotencyClaim,
  answer: unknown,
  now: number,
): Promise<void> {
  await trx
    .deleteFrom('idempotency_keys')
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .where('created_at', '<', now - IDEMPOTENCY_KEY_TTL_MS)
    .execute();
  await trx
    .insertInto('idempotency_keys')
    .values({
      scope: claim.scope,
      key: claim.key,
      fingerprint: claim.fingerprint,
      response: JSON.stringify(answer),
      created_at: now,
    })
    .execute();
}

/** Remove answers older than {@link IDEMPOTENCY_KEY_TTL_MS}; how many. */
export async function sweepIdempotencyKeys(db: Db, now: number): Promise<number> {
  const r = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', now - IDEMPOTENCY_KEY_TTL_MS)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * After a transaction with `claim` failed: when it lost the race for the key to a concurrent
 * first use (the key's unique row), the answer that one stored; else undefined (rethrow).
 */
export async function answerAfterRace<T>(
  db: Db,
  claim: IdempotencyClaim | undefined,
  err: unknown,
  now: number,
): Promise<T | undefined> {
  if (!claim || !isUniqueViolation(err, 'idempotency_keys')) return undefined;
  return storedAnswer<T>(db, claim, now);
}
