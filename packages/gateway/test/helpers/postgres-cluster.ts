/**
 * A throwaway PostgreSQL cluster (initdb + pg_ctl, no init system), run as the `postgres` user
 * when started as root (PostgreSQL refuses root), listening on a Unix socket in its own
 * directory only (no TCP port to race for), `fsync=off`. For the Gateway's tests and its bench;
 * no vitest import here.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/** Environment variable naming an existing server to use instead of a throwaway cluster. */
export const POSTGRES_URL_ENV = 'AGENTMAIL_TEST_POSTGRES_URL';

/** A running throwaway cluster. */
export interface PostgresCluster {
  /** Admin URL (user `postgres`, database `postgres`) over the cluster's socket. */
  url: string;
  /** Stop the server and remove its directory. */
  stop: () => void;
}

/** The newest `…/postgresql/<major>/bin` with initdb, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin');
}

/**
 * Start a throwaway cluster.
 * @throws Error naming the Debian package when PostgreSQL is not installed, or initdb/pg_ctl's output
 */
export function startPostgresCluster(): PostgresCluster {
  const bin = postgresBinDir();
  if (bin === undefined)
    throw new Error(
      'the Gateway suite on PostgreSQL needs PostgreSQL installed (Debian: apt-get install postgresql); ' +
        `or set ${POSTGRES_URL_ENV} to a server it may create databases on`,
    );
  const asRoot = process.getuid?.() === 0;
  // Not under the run's TMPDIR: that one is private to root, and the server runs as postgres.
  const dir = mkdtempSync('/tmp/am-pg-');
  const user = asRoot ? (pgUser() ?? { uid: 0, gid: 0 }) : undefined;
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  const run = (cmd: string, args: string[]): void => {
    const full = user ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args;
    const r = spawnSync(user ? 'runuser' : join(bin, cmd), full, { encoding: 'utf8', cwd: '/' });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
  run('pg_ctl', [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-w',
    '-o',
    `-c listen_addresses='' -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400`,
    'start',
  ]);
  return {
    url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`,
    stop: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function pgUser(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** `url` with its database replaced by `name`. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Create database `name` on the server of `admin`; its URL. */
export async function createDatabase(admin: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return withDatabase(admin, name);
}
