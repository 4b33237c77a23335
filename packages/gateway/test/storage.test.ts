/** The store on the project's dialect (SQLite, or PostgreSQL in the gateway-postgres project). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  constraintViolation,
  initDataDir,
  isUniqueViolation,
  migrateToLatest,
  openDatabase,
  storeDialect,
} from '../src/index.js';
import { testDatabaseFor, testPostgresUrl } from './helpers/postgres.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'agentmail-store-'));
  dirs.push(d);
  return d;
}

/** The store of `dir` on this project's dialect. */
async function open(dir: string) {
  return openDatabase(dir, { databaseUrl: await testDatabaseFor(dir) });
}

describe('storage', () => {
  it("opens on the project's dialect and migrates once", async () => {
    const db = await open(tempDir());
    expect(storeDialect(db)).toBe(testPostgresUrl() === undefined ? 'sqlite' : 'postgres');
    expect(await migrateToLatest(db)).toEqual([]); // nothing pending the second time
    await db.destroy();
  });

  it('maps unique and foreign-key violations to dialect-neutral kinds', async () => {
    const db = await open(tempDir());
    await db.insertInto('users').values({ id: 'u1', name: 'alice', is_admin: 0, created_at: 1 }).execute();
    const dup = await db
      .insertInto('users')
      .values({ id: 'u2', name: 'alice', is_admin: 0, created_at: 1 })
      .execute()
      .catch((e: unknown) => e);
    expect(constraintViolation(dup)?.kind).toBe('unique');
    expect(isUniqueViolation(dup, 'name')).toBe(true);
    const fk = await db
      .insertInto('user_tokens')
      .values({ id: 't1', user_id: 'nobody', token_hash: 'h', created_at: 1, revoked_at: null })
      .execute()
      .catch((e: unknown) => e);
    expect(constraintViolation(fk)?.kind).toBe('foreign_key');
    expect(constraintViolation(new Error('other'))).toBeUndefined();
    expect(constraintViolation({ code: '23505', constraint: 'mails_sender_relay_key' })).toEqual({
      kind: 'unique',
      target: 'mails_sender_relay_key',
    });
    await db.destroy();
  });

  it('initDataDir creates the admin once and returns its token only the first time', async () => {
    const dir = tempDir();
    const databaseUrl = await testDatabaseFor(dir);
    const first = await initDataDir(dir, { databaseUrl });
    expect(first.adminToken).toMatch(/^amu_/);
    expect(await initDataDir(dir, { databaseUrl })).toEqual({});
    const db = await open(dir);
    const users = await db.selectFrom('users').selectAll().execute();
    const tokens = await db.selectFrom('user_tokens').selectAll().execute();
    expect(users.map((u) => [u.name, u.is_admin])).toEqual([['admin', 1]]);
    // stored hashed, never in clear
    expect(tokens[0]?.token_hash).not.toContain(first.adminToken);
    expect(tokens[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    await db.destroy();
  });
});
