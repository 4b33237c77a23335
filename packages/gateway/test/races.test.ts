/**
 * Races of several Gateways on one PostgreSQL store (runs in the gateway-postgres project only:
 * SQLite has one Gateway per data directory). Each test runs the racing operation on separate
 * stores (separate pools, as separate instances have) at once, and fails on check-then-write code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminIfMissing, type GatewayDb, openDatabase } from '../src/index.js';
import { testDatabaseFor } from './helpers/postgres.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `n` stores over one new database, as `n` Gateways on it would hold. */
async function instances(n: number): Promise<GatewayDb[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agentmail-race-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseFor(dir);
  if (databaseUrl === undefined) throw new Error('races.test.ts runs in the gateway-postgres project only');
  const stores: GatewayDb[] = [];
  for (let i = 0; i < n; i++) stores.push(await openDatabase(dir, { databaseUrl }));
  cleanups.push(async () => {
    await Promise.all(stores.map((db) => db.destroy()));
  });
  return stores;
}

describe('several Gateways on one PostgreSQL store', () => {
  it('starting together, they create one admin (a conditional insert, not check-then-insert)', async () => {
    const stores = await instances(4);
    const results = await Promise.allSettled(stores.map((db) => createAdminIfMissing(db)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const tokens = results.flatMap((r) =>
      r.status === 'fulfilled' && r.value.adminToken ? [r.value.adminToken] : [],
    );
    expect(tokens).toHaveLength(1);
    const [db] = stores;
    expect((await db?.selectFrom('users').select('name').execute())?.map((u) => u.name)).toEqual(['admin']);
    expect(await db?.selectFrom('user_tokens').select('id').execute()).toHaveLength(1);
  });
});
