/**
 * PostgreSQL for the Gateway's tests: the run's throwaway cluster (postgres-cluster.ts) provided
 * by the project's global setup; a test's Gateway gets a database of its own, created on first
 * use of its data directory and kept for a restart on the same directory.
 */
import { inject } from 'vitest';
import { createDatabase } from './postgres-cluster.js';

export {
  createDatabase,
  POSTGRES_URL_ENV,
  type PostgresCluster,
  postgresBinDir,
  startPostgresCluster,
  withDatabase,
} from './postgres-cluster.js';

/** The cluster's admin URL, provided by the `gateway-postgres` project's global setup. */
declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

/** The cluster this test run provides, or undefined (the SQLite projects). */
export function testPostgresUrl(): string | undefined {
  try {
    return inject('postgresUrl') || undefined;
  } catch {
    return undefined;
  }
}

const databases = new Map<string, Promise<string>>();
let counter = 0;

/**
 * A database of its own for `dataDir` (the same one again for the same directory: restart
 * tests), or undefined when the run is on SQLite.
 */
export async function testDatabaseFor(dataDir: string): Promise<string | undefined> {
  const admin = testPostgresUrl();
  if (admin === undefined) return undefined;
  let db = databases.get(dataDir);
  if (db === undefined) {
    const name = `amt_${process.pid}_${++counter}_${Date.now().toString(36)}`;
    db = createDatabase(admin, name);
    databases.set(dataDir, db);
  }
  return db;
}

/**
 * The environment that points a CLI command at `dataDir`'s store: `AGENTMAIL_DATABASE_URL` in the
 * gateway-postgres project, nothing on SQLite.
 */
export async function storeEnv(dataDir: string): Promise<Record<string, string>> {
  const url = await testDatabaseFor(dataDir);
  return url === undefined ? {} : { AGENTMAIL_DATABASE_URL: url };
}
