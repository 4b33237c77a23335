/** The SQLite store's own settings and its upgrade from a released data directory (SQLite only). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, type Migration, Migrator, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/db/migrations.js';
import { migrateToLatest, openDatabase, SQLITE_FILE_NAME } from '../src/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'agentmail-store-'));
  dirs.push(d);
  return d;
}

describe('storage on SQLite', () => {
  it('opens one SQLite file with WAL, foreign keys and a busy timeout, and migrates once', async () => {
    const dir = tempDir();
    const db = await openDatabase(dir);
    const { sql } = await import('kysely');
    const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
    const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db);
    const busy = await sql<{ timeout: number }>`pragma busy_timeout`.execute(db);
    expect(mode.rows[0]?.journal_mode).toBe('wal');
    expect(fk.rows[0]?.foreign_keys).toBe(1);
    expect(busy.rows[0]?.timeout).toBeGreaterThan(0);
    expect(await migrateToLatest(db)).toEqual([]); // nothing pending the second time
    await db.destroy();
  });

  it('migrations apply in name order, and a data directory of an earlier release (0001, 0002) upgrades keeping its rows', async () => {
    const names = Object.keys(MIGRATIONS);
    expect(names, 'applied in sorted name order: a new one sorts last').toEqual([...names].sort());
    expect(names.slice(0, 2), 'released migrations keep their names').toEqual([
      '0001_init',
      '0002_web_sessions',
    ]);
    const dir = tempDir();
    // The store as a Gateway with only 0001 and 0002 left it, with a person, a web session and a key.
    const old = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new SqliteDatabase(join(dir, SQLITE_FILE_NAME)) }),
    });
    const released = {
      '0001_init': MIGRATIONS['0001_init'],
      '0002_web_sessions': MIGRATIONS['0002_web_sessions'],
    };
    const migrator = new Migrator({
      db: old,
      provider: { getMigrations: async () => released as Record<string, Migration> },
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const { sql } = await import('kysely');
    await sql`insert into users (id, name, is_admin, created_at) values ('u1', 'ann', 0, 1)`.execute(old);
    await sql`insert into user_tokens (id, user_id, token_hash, created_at) values ('t1', 'u1', 'h', 1)`.execute(
      old,
    );
    await sql`insert into web_sessions (id_hash, user_id, token_id, created_at, expires_at) values ('s', 'u1', 't1', 1, 2)`.execute(
      old,
    );
    await sql`insert into agents (name, platform, registered_at, last_seen) values ('pi', 'pi', 1, 5)`.execute(
      old,
    );
    await sql`insert into agent_keys (id, agent_name, key_hash, created_at) values ('k1', 'pi', 'kh', 1)`.execute(
      old,
    );
    await old.destroy();

    const db = await openDatabase(dir);
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
    expect(applied.rows.map((r) => r.name)).toEqual(names);
    const agent = await db.selectFrom('agents').select(['name', 'last_seen', 'offline_since']).execute();
    expect(agent).toEqual([{ name: 'pi', last_seen: 5, offline_since: null }]);
    const key = await db.selectFrom('agent_keys').select(['id', 'last_used_at']).execute();
    expect(key).toEqual([{ id: 'k1', last_used_at: null }]);
    expect(await db.selectFrom('web_sessions').select('id_hash').execute()).toEqual([{ id_hash: 's' }]);
    await db.destroy();
  });
});
