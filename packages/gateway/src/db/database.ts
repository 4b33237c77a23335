/**
 * Opening the store: Kysely over better-sqlite3, one file under the data directory (the embedded
 * default), or over PostgreSQL (`pg`) when a database URL is given — the same migrations and
 * queries on both. Also the one mapper from driver constraint errors to dialect-neutral kinds.
 */
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely';
import { prepareDataDir } from '../data-dir.js';
import { checkDatabaseUrl } from './database-url.js';
import { migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

/** File name of the SQLite database inside the data directory. @default 'agentmail.sqlite' */
export const SQLITE_FILE_NAME = 'agentmail.sqlite';

/** How long a writer waits on a locked SQLite file before failing (ms). @default 5000 */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export { checkDatabaseUrl, DatabaseUrlError, redactDatabaseUrl } from './database-url.js';

/** Connections a Gateway keeps open to PostgreSQL (one pool per Gateway). @default 10 */
export const POSTGRES_POOL_SIZE = 10;

/** The typed Kysely handle of the Gateway store. */
export type GatewayDb = Kysely<Database>;

/** Which database a store runs on. */
export type StoreDialect = 'sqlite' | 'postgres';

/** Where the store lives besides the data directory. */
export interface StoreOptions {
  /**
   * A PostgreSQL connection URL (`postgres://user@host:5432/db`, also `postgresql://`); without
   * it the store is the SQLite file in the data directory.
   */
  databaseUrl?: string | undefined;
  /**
   * Refuse a PostgreSQL database without the Gateway's tables instead of creating them (recovery
   * commands: a mistyped URL must not become an empty Gateway), with an Error whose `code` is
   * `AM_GW_STORE_EMPTY`. @default false
   */
  mustExist?: boolean;
}

const dialects = new WeakMap<object, StoreDialect>();

/** The dialect of a store opened by {@link openDatabase} (`sqlite` for any other handle). */
export function storeDialect(db: Kysely<unknown> | GatewayDb): StoreDialect {
  return dialects.get(db) ?? 'sqlite';
}

async function openPostgres(url: string): Promise<GatewayDb> {
  checkDatabaseUrl(url);
  const pg = (await import('pg')).default;
  // int8 (bigint ms timestamps, count(*)) as numbers: every value we store fits in 2^53.
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === pg.types.builtins.INT8
        ? (v: string) => Number(v)
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString: url, max: POSTGRES_POOL_SIZE, types });
  // An idle client losing its server (restart, failover) must not crash the Gateway.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  dialects.set(db, 'postgres');
  return db;
}

function openSqlite(dataDir: string): GatewayDb {
  const sqlite = new SqliteDatabase(join(prepareDataDir(dataDir), SQLITE_FILE_NAME));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  dialects.set(db, 'sqlite');
  return db;
}

/**
 * Open the store and apply pending migrations: the SQLite file under `dataDir` (created if
 * needed; WAL, `foreign_keys=ON`, `busy_timeout`), or the PostgreSQL database of
 * `options.databaseUrl` (a pool of {@link POSTGRES_POOL_SIZE}; concurrent starts of several
 * Gateways migrate once, under Kysely's migration lock).
 *
 * @param dataDir - absolute or relative directory; checked and created when missing (SQLite)
 * @throws DataDirError `AM_GW_DATA_DIR_INVALID` when the directory can not be used (see
 *   `prepareDataDir`); DatabaseUrlError `AM_GW_DATABASE_URL_INVALID` for a URL that is not a
 *   PostgreSQL one; the driver's error when PostgreSQL can not be reached; Error when a
 *   migration fails (the store is left at the last good migration)
 * @example const db = await openDatabase('./.data'); … await db.destroy();
 */
export async function openDatabase(dataDir: string, options: StoreOptions = {}): Promise<GatewayDb> {
  const db = options.databaseUrl ? await openPostgres(options.databaseUrl) : openSqlite(dataDir);
  try {
    if (options.mustExist && options.databaseUrl) {
      const found = await sql<{ t: string | null }>`select to_regclass('users')::text as t`.execute(db);
      if (!found.rows[0]?.t)
        throw Object.assign(new Error('the database holds no Gateway data (no users table)'), {
          code: 'AM_GW_STORE_EMPTY',
        });
    }
    await migrateToLatest(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return db;
}

/**
 * Apply every pending migration of the static provider.
 *
 * @throws Error naming the failed migration
 */
export async function migrateToLatest<T>(db: Kysely<T>): Promise<string[]> {
  const migrator = new Migrator({ db: db as unknown as Kysely<unknown>, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, {
      cause: error,
    });
  }
  return (results ?? []).map((r) => r.migrationName);
}

/** A constraint violation in dialect-neutral terms. */
export interface ConstraintViolation {
  kind: 'unique' | 'foreign_key' | 'not_null' | 'check';
  /** `table.column` names (SQLite) or the constraint name (PostgreSQL), as the driver reports. */
  target: string;
}

/**
 * Classify a driver error as a constraint violation, or undefined for any other error.
 * SQLite: `SQLITE_CONSTRAINT_*` codes with `UNIQUE constraint failed: t.a, t.b`; PostgreSQL:
 * SQLSTATE 23505 / 23503 / 23502 / 23514 with `constraint`.
 */
export function constraintViolation(err: unknown): ConstraintViolation | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; message?: unknown; constraint?: unknown; column?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const target =
    typeof e.constraint === 'string' ? e.constraint : (message.split('constraint failed: ')[1] ?? '').trim();
  switch (code) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
    case '23505':
      return { kind: 'unique', target };
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
    case '23503':
      return { kind: 'foreign_key', target };
    case 'SQLITE_CONSTRAINT_NOTNULL':
    case '23502':
      return { kind: 'not_null', target };
    case 'SQLITE_CONSTRAINT_CHECK':
    case '23514':
      return { kind: 'check', target };
    default:
      return undefined;
  }
}

/**
 * True when `err` is a unique violation whose target mentions every one of `columns` (SQLite
 * names `table.column`; PostgreSQL names the constraint, which we name after its columns).
 */
export function isUniqueViolation(err: unknown, ...columns: string[]): boolean {
  const v = constraintViolation(err);
  return v?.kind === 'unique' && columns.every((c) => v.target.includes(c));
}

/** True when the driver reports a locked database (retry later, 503). */
export function isBusyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === '40001' || code === '55P03';
}

/**
 * True when PostgreSQL aborted a transaction that may simply run again: a deadlock between two
 * transactions locking the same rows in opposite order (40P01), or a serialization failure
 * (40001).
 */
export function isRetryableTransactionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** How often {@link runTransaction} runs a transaction that PostgreSQL aborted as retryable. @default 3 */
export const TRANSACTION_ATTEMPTS = 3;

/**
 * Run `work` in a transaction; when PostgreSQL aborts it as a deadlock or serialization failure
 * ({@link isRetryableTransactionError}), run it again (up to {@link TRANSACTION_ATTEMPTS} in all).
 * `work` must start from scratch each time (nothing it did survives a rollback).
 */
export async function runTransaction<T>(
  db: GatewayDb,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (err) {
      if (attempt >= TRANSACTION_ATTEMPTS || !isRetryableTransactionError(err)) throw err;
    }
  }
}
