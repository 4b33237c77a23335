/**
 * Regressions of starting the Gateway: a first start on a busy port used up the admin token; every
 * failure got the same advice; two Gateways could share one data directory; `--data-dir
 * /proc/nope` spun forever in mkdir and ignored SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFailure } from '../src/cli/serve.js';
import {
  acquireDataDirLock,
  buildApp,
  DataDirError,
  LOCK_FILE_NAME,
  openDatabase,
  prepareDataDir,
} from '../src/index.js';
import { buildCli } from './helpers/cli-build.js';
import { cleanEnv, PROCESS_TEST_TIMEOUT_MS, run, startServe } from './helpers/processes.js';

let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
let tmp = '';
let env: NodeJS.ProcessEnv = {};
beforeAll(async () => {
  const built = await buildCli('serve-start');
  mainJs = built.mainJs;
  removeBuild = built.remove;
  tmp = await mkdtemp(join(tmpdir(), 'agentmail-serve-start-'));
  env = cleanEnv({ HOME: join(tmp, 'home'), AGENTMAIL_CONFIG: join(tmp, 'absent.json') });
}, 60_000);
afterAll(async () => {
  await removeBuild();
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

function errorOf(fn: () => unknown): DataDirError {
  try {
    fn();
  } catch (err) {
    return err as DataDirError;
  }
  throw new Error('expected a throw');
}

async function rejectionOf(p: Promise<unknown>): Promise<DataDirError> {
  try {
    await p;
  } catch (err) {
    return err as DataDirError;
  }
  throw new Error('expected a rejection');
}

const quiet = { logLevel: 'silent' as const, sweepTimer: false, requestsPerMinute: false as const };

describe('the first start is all or nothing (busy port)', () => {
  it(
    'a busy port creates no admin and prints no token; the next start does',
    async () => {
      const dataDir = join(tmp, 'busy');
      const blocker: Server = createServer();
      await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
      const port = (blocker.address() as { port: number }).port;
      const failed = await run(
        process.execPath,
        [mainJs, 'serve', '--data-dir', dataDir, '--port', String(port)],
        {
          env,
        },
      );
      await new Promise<void>((done) => blocker.close(() => done()));
      expect(failed.code).toBe(1);
      expect(failed.stdout).not.toMatch(/admin token/i);
      expect(failed.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(failed.stderr).toMatch(/try: .*--port/);
      expect(failed.stderr).not.toMatch(/data directory is writable/);
      // nothing used up: no user, no lock left behind
      const db = await openDatabase(dataDir);
      expect(await db.selectFrom('users').select('id').execute()).toEqual([]);
      await db.destroy();
      expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);

      const ok = await startServe(mainJs, ['--data-dir', dataDir, '--port', '0', '--log-level', 'warn'], env);
      try {
        const token = /admin token[^:]*:\s*(\S+)/i.exec(ok.startupLines.join('\n'))?.[1];
        expect(token).toMatch(/\S{10,}/);
        const r = await fetch(`${ok.url}/api/v1/admin/users`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(r.status).toBe(200);
      } finally {
        expect(await ok.stop()).toBe(0);
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('one Gateway per data directory (lock file)', () => {
  it('a second Gateway on the same directory is refused, naming the holder; after close it starts', async () => {
    const dataDir = join(tmp, 'locked');
    const first = await buildApp({ dataDir, ...quiet });
    const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(process.pid);
    const err = await rejectionOf(buildApp({ dataDir, ...quiet }));
    expect(err).toBeInstanceOf(DataDirError);
    expect(err.code).toBe('AM_GW_DATA_DIR_LOCKED');
    expect(err.message).toContain(`pid ${process.pid}`);
    expect(err.pid).toBe(process.pid);
    await first.close();
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    const again = await buildApp({ dataDir, ...quiet });
    await again.close();
  });

  it('a lock left by a process that is gone is taken over', async () => {
    const dataDir = join(tmp, 'stale');
    mkdirSync(dataDir, { recursive: true });
    const gone = spawn(process.execPath, ['-e', '']);
    const deadPid = gone.pid ?? 0;
    await new Promise((done) => gone.once('exit', done));
    writeFileSync(
      join(dataDir, LOCK_FILE_NAME),
      JSON.stringify({ pid: deadPid, hostname: hostname(), token: 'old', started_at: 'then' }),
    );
    const app = await buildApp({ dataDir, ...quiet });
    const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(process.pid);
    await app.close();
  });

  it('an unreadable lock file is refused while fresh (a Gateway writing it), taken over when old', () => {
    const dataDir = join(tmp, 'garbled');
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, LOCK_FILE_NAME);
    writeFileSync(path, '');
    expect(errorOf(() => acquireDataDirLock(dataDir)).code).toBe('AM_GW_DATA_DIR_LOCKED');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    const lock = acquireDataDirLock(dataDir);
    lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it(
    'a second `agentmail serve` exits 1 with the holder and a cause-specific suggestion',
    async () => {
      const dataDir = join(tmp, 'two-serves');
      const first = await startServe(
        mainJs,
        ['--data-dir', dataDir, '--port', '0', '--log-level', 'warn'],
        env,
      );
      try {
        const second = await run(process.execPath, [mainJs, 'serve', '--data-dir', dataDir, '--port', '0'], {
          env,
        });
        expect(second.code).toBe(1);
        expect(second.stderr).toMatch(/in use by another Gateway \(pid \d+/);
        expect(second.stderr).toMatch(/try: stop that Gateway/);
        expect(second.stdout).not.toMatch(/listening/);
      } finally {
        expect(await first.stop()).toBe(0);
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('the data directory is checked before anything is created', () => {
  // These run as child processes: a revert spins in a synchronous recursive mkdir, which no
  // in-process timeout can stop; the child is killed at the timeout and the test fails.
  it.each([
    ['/proc/nope', '"/proc/nope" is under /proc'],
    ['/proc/nope/deeper', '"/proc/nope/deeper" is under /proc'],
    ['<tmp>/to-proc/nope', 'is under /proc'],
  ])(
    '`serve --data-dir %s` fails fast with a clear message (was: spinning forever)',
    async (dir, message) => {
      const link = join(tmp, 'to-proc');
      if (!existsSync(link)) symlinkSync('/proc', link);
      const dataDir = dir.replace('<tmp>', tmp);
      const r = await run(process.execPath, [mainJs, 'serve', '--data-dir', dataDir, '--port', '0'], {
        env,
        timeoutMs: 30_000,
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toMatch(/try: choose another directory with --data-dir/);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it.each(['/sys/nope', '/proc'])('refuses %s', (dir) => {
    const err = errorOf(() => prepareDataDir(dir));
    expect(err.code).toBe('AM_GW_DATA_DIR_INVALID');
    expect(err.message).toContain(dir);
  });

  it('refuses a file, and a path through a file, naming it', () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    expect(errorOf(() => prepareDataDir(file)).message).toContain(`"${file}" exists and is not a directory`);
    const through = errorOf(() => prepareDataDir(join(file, 'sub', 'dir')));
    expect(through.code).toBe('AM_GW_DATA_DIR_INVALID');
    expect(through.message).toContain(`"${file}" exists and is not a directory`);
  });

  it('creates a missing directory, level by level', () => {
    const dir = join(tmp, 'new', 'deep', 'data');
    expect(prepareDataDir(dir)).toBe(dir);
    expect(existsSync(dir)).toBe(true);
  });
});

describe('serve failures say what to do, per cause', () => {
  const target = { port: 8787, host: '127.0.0.1', dataDir: '/srv/am' };
  const sysErr = (code: string, syscall: string, message = `${syscall} ${code}`) =>
    Object.assign(new Error(message), { code, syscall });

  it('a busy port: the port', () => {
    const f = serveFailure(sysErr('EADDRINUSE', 'listen'), target);
    expect(f.message).toContain('port 8787 on 127.0.0.1 is already in use');
    expect(f.suggestion).toContain('--port');
  });

  it('a privileged port: the port, not the data directory', () => {
    const f = serveFailure(sysErr('EACCES', 'listen'), { ...target, port: 80 });
    expect(f.suggestion).toContain('below 1024');
    expect(f.suggestion).not.toContain('data');
  });

  it.each(['EACCES', 'EROFS', 'EPERM'])('%s on the file system: the data directory', (code) => {
    const f = serveFailure(sysErr(code, 'open'), target);
    expect(f.suggestion).toContain('write access to /srv/am');
    expect(f.suggestion).not.toContain('port');
  });

  it('a native module built for another Node.js: env.sh and pnpm install', () => {
    const err = new Error(
      "The module 'better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115.",
    );
    const f = serveFailure(Object.assign(err, { code: 'ERR_DLOPEN_FAILED' }), target);
    expect(f.suggestion).toBe('run `source scripts/env.sh` (Node 22) and `pnpm install`, then start again');
  });

  it('a data-directory error keeps its own message and suggestion', () => {
    const err = new DataDirError('AM_GW_DATA_DIR_LOCKED', 'data directory "/srv/am" is in use', {
      suggestion: 'stop that Gateway',
    });
    expect(serveFailure(err, target)).toEqual({
      message: 'cannot start the Gateway: data directory "/srv/am" is in use',
      suggestion: 'stop that Gateway',
    });
  });

  it('anything else: the error itself, no made-up advice', () => {
    expect(serveFailure(new Error('something odd'), target)).toEqual({
      message: 'cannot start the Gateway: something odd',
    });
  });
});

describe('serve --database (PostgreSQL)', () => {
  it(
    'a URL that is not PostgreSQL is a usage error naming --database, before anything starts',
    async () => {
      const dataDir = join(tmp, 'db-usage');
      const r = await run(
        process.execPath,
        [mainJs, 'serve', '--data-dir', dataDir, '--port', '0', '--database', 'mysql://u:secret@db/x'],
        { env, timeoutMs: 30_000 },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('option "--database": the database URL must start with postgres://');
      expect(r.stderr).not.toContain('secret');
      expect(existsSync(dataDir), 'nothing written').toBe(false);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'an unreachable server is named without its password, with what to do',
    async () => {
      // A port nobody listens on: bound and closed again.
      const probe = createServer();
      await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
      const port = (probe.address() as { port: number }).port;
      await new Promise<void>((done) => probe.close(() => done()));
      const r = await run(
        process.execPath,
        [mainJs, 'serve', '--data-dir', join(tmp, 'db-down'), '--port', '0'],
        {
          env: { ...env, AGENTMAIL_DATABASE_URL: `postgres://am:hunter2@127.0.0.1:${port}/mail` },
          timeoutMs: 30_000,
        },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `PostgreSQL at postgres://am:***@127.0.0.1:${port}/mail can not be reached (ECONNREFUSED)`,
      );
      expect(r.stderr).toContain('start PostgreSQL there, or check --database (or AGENTMAIL_DATABASE_URL)');
      expect(r.stderr).not.toContain('hunter2');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
