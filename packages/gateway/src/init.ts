/**
 * First start of a data directory: create the admin user and hand its token out once.
 */

import { newUserToken } from './auth.js';
import { type GatewayDb, openDatabase, type StoreOptions } from './db/database.js';
import { newId } from './ids.js';

/** Name of the admin user created on first start. @default 'admin' */
export const ADMIN_USER_NAME = 'admin';

/** Result of {@link initDataDir}. */
export interface InitResult {
  /** The admin token, only when this call created the admin user (print it once). */
  adminToken?: string;
}

/**
 * Create the admin user in an open store when it has no user yet, in one transaction. Returns
 * the admin token only when it created the user; `{}` otherwise. One conditional insert ("no
 * user yet", name free): of several Gateways starting on one database, exactly one creates it.
 *
 * `agentmail serve` calls it on the app's store only once the server listens, so a start that
 * fails (a busy port) neither uses up nor prints a token: the next start creates it.
 *
 * @example const { adminToken } = await createAdminIfMissing(app.gateway.db);
 */
export async function createAdminIfMissing(db: GatewayDb, nowMs: number = Date.now()): Promise<InitResult> {
  return db.transaction().execute(async (trx) => {
    const id = newId('u', nowMs);
    const created = await trx
      .insertInto('users')
      .columns(['id', 'name', 'is_admin', 'created_at'])
      .expression(
        trx
          .selectNoFrom((eb) => [
            eb.cast<string>(eb.val(id), 'text').as('id'),
            eb.cast<string>(eb.val(ADMIN_USER_NAME), 'text').as('name'),
            eb.cast<number>(eb.val(1), 'integer').as('is_admin'),
            eb.cast<number>(eb.val(nowMs), 'bigint').as('created_at'),
          ])
          .where((eb) => eb.not(eb.exists(eb.selectFrom('users').select('id')))),
      )
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!created) return {};
    return { adminToken: await newUserToken(trx, id, nowMs) };
  });
}

/**
 * Prepare a data directory: check and create it, migrate the store, and on the very first start
 * create the admin user ({@link createAdminIfMissing}). Returns the admin token only on that
 * first start; later calls return `{}`. For embedding; `agentmail serve` creates the admin only
 * after it listens.
 *
 * @throws DataDirError `AM_GW_DATA_DIR_INVALID` when the directory can not be used
 * @example const { adminToken } = await initDataDir('./.data'); if (adminToken) console.log(adminToken);
 */
export async function initDataDir(
  dataDir: string,
  options: StoreOptions & { nowMs?: number } = {},
): Promise<InitResult> {
  const { nowMs = Date.now(), ...store } = options;
  const db = await openDatabase(dataDir, store);
  try {
    return await createAdminIfMissing(db, nowMs);
  } finally {
    await db.destroy();
  }
}
