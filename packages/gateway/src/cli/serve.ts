import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Locale, resolveLocale } from '@agentmail/shared-policy';
import type { Command } from 'commander';
import { checkDatabaseUrl, type DatabaseUrlError, redactDatabaseUrl } from '../db/database-url.js';
import type { buildApp } from '../index.js';
import { type CliContext, parseIntOption } from './context.js';
import { CliError } from './errors.js';
import { printJsonLine } from './output.js';

/** Port `agentmail serve` listens on without `--port` or `AGENTMAIL_PORT`. @default 8787 */
export const DEFAULT_PORT = 8787;

/** Interface `agentmail serve` binds without `--host`: loopback only. @default '127.0.0.1' */
export const DEFAULT_HOST = '127.0.0.1';

/** How long a stopping server may take to close its connections, in ms. @default 10_000 */
export const SHUTDOWN_TIMEOUT_MS = 10_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Data directory of `agentmail serve` without `--data-dir`: `$AGENTMAIL_DATA_DIR`, else
 * `$XDG_DATA_HOME/agentmail`, else `~/.local/share/agentmail`.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  if (env.AGENTMAIL_DATA_DIR) return env.AGENTMAIL_DATA_DIR;
  return join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'agentmail');
}

/**
 * Language of the mails the Gateway writes (permission and question mails, forward headers):
 * `--locale`, else `$AGENTMAIL_LOCALE`, else `en`. Tags are matched leniently (`zh`, `zh_CN`,
 * `zh-Hans` → `zh-CN`); an unknown tag means `en`.
 */
export function serveLocale(flag: string | undefined, env: NodeJS.ProcessEnv): Locale {
  return resolveLocale(flag ?? env.AGENTMAIL_LOCALE);
}

/** Where `serve` tried to run, for {@link serveFailure}'s words. */
export interface ServeTarget {
  port: number;
  host: string;
  dataDir: string;
  /** The PostgreSQL URL, when the store is there. */
  databaseUrl?: string | undefined;
}

function causes(err: unknown): Array<{ code: string; syscall: string; message: string }> {
  const out: Array<{ code: string; syscall: string; message: string }> = [];
  let e: unknown = err;
  for (let i = 0; i < 5 && typeof e === 'object' && e !== null; i++) {
    const x = e as { code?: unknown; syscall?: unknown; message?: unknown; cause?: unknown };
    out.push({
      code: typeof x.code === 'string' ? x.code : '',
      syscall: typeof x.syscall === 'string' ? x.syscall : '',
      message: typeof x.message === 'string' ? x.message : '',
    });
    e = x.cause;
  }
  return out;
}

/**
 * Why `agentmail serve` could not start, and what to do about it — per cause, not one advice for
 * all: a busy port, a port or host that can not be bound, a data directory that can not be used
 * or is held by another Gateway, a native SQLite module built for another Node.js. An unknown
 * cause is reported as itself, without advice.
 *
 * @example serveFailure(err, { port: 8787, host: '127.0.0.1', dataDir }).suggestion
 */
export function serveFailure(err: unknown, target: ServeTarget): { message: string; suggestion?: string } {
  const chain = causes(err);
  const has = (...codes: string[]) => chain.find((c) => codes.includes(c.code));
  const first = chain[0]?.message || String(err);
  const lead = 'cannot start the Gateway';
  const dataDirError = has('AM_GW_DATA_DIR_INVALID', 'AM_GW_DATA_DIR_LOCKED');
  if (dataDirError) {
    const suggestion = (err as { suggestion?: unknown }).suggestion;
    return {
      message: `${lead}: ${dataDirError.message}`,
      ...(typeof suggestion === 'string' ? { suggestion } : {}),
    };
  }
  const urlError = has('AM_GW_DATABASE_URL_INVALID');
  if (urlError) {
    const suggestion = (err as { suggestion?: unknown }).suggestion;
    return {
      message: `${lead}: --database: ${urlError.message}`,
      ...(typeof suggestion === 'string' ? { suggestion } : {}),
    };
  }
  if (target.databaseUrl !== undefined) {
    const where = redactDatabaseUrl(target.databaseUrl);
    const pg = postgresFailure(chain, where);
    if (pg) return { message: `${lead}: ${pg.message}`, suggestion: pg.suggestion };
  }
  if (has('EADDRINUSE'))
    return {
      message: `${lead}: port ${target.port} on ${target.host} is already in use`,
      suggestion: `stop the program that uses port ${target.port}, or pick another port with --port (0 picks a free one)`,
    };
  const listenDenied = chain.find(
    (c) => (c.code === 'EACCES' || c.code === 'EPERM') && c.syscall === 'listen',
  );
  if (listenDenied)
    return {
      message: `${lead}: not allowed to listen on ${target.host}:${target.port}`,
      suggestion: 'ports below 1024 need privileges: use --port 8787 (or another port above 1023)',
    };
  if (has('EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN'))
    return {
      message: `${lead}: --host ${target.host} is not an address of this machine (${first})`,
      suggestion: 'use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of its addresses',
    };
  if (chain.some((c) => /compiled against a different Node\.js version|NODE_MODULE_VERSION/.test(c.message)))
    return {
      message: `${lead}: the native SQLite module (better-sqlite3) was built for another Node.js version than this one (${process.version})`,
      suggestion: 'run `source scripts/env.sh` (Node 22) and `pnpm install`, then start again',
    };
  if (has('ENOSPC'))
    return {
      message: `${lead}: no space left on the device of ${target.dataDir}`,
      suggestion: 'free disk space, or choose another directory with --data-dir',
    };
  if (has('EACCES', 'EPERM', 'EROFS', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_PERM'))
    return {
      message: `${lead}: the data directory ${target.dataDir} can not be written (${first})`,
      suggestion: `give this user write access to ${target.dataDir}, or choose another directory with --data-dir`,
    };
  return { message: `${lead}: ${first}` };
}

/**
 * Why PostgreSQL refused or could not be reached, from the driver's codes (SQLSTATE or errno);
 * undefined for a cause that is not the database's.
 */
function postgresFailure(
  chain: Array<{ code: string; syscall: string; message: string }>,
  where: string,
): { message: string; suggestion: string } | undefined {
  const codes = new Set(chain.map((c) => c.code));
  const fix = 'check --database (or AGENTMAIL_DATABASE_URL)';
  if (codes.has('ECONNREFUSED') || codes.has('ENOTFOUND') || codes.has('EAI_AGAIN') || codes.has('ETIMEDOUT'))
    return {
      message: `PostgreSQL at ${where} can not be reached (${[...codes].filter(Boolean).join(', ')})`,
      suggestion: `start PostgreSQL there, or ${fix}`,
    };
  if (codes.has('28P01') || codes.has('28000'))
    return {
      message: `PostgreSQL at ${where} refused the user or password`,
      suggestion: `${fix}: the user, its password, and pg_hba.conf`,
    };
  if (codes.has('3D000'))
    return {
      message: `the database of ${where} does not exist`,
      suggestion: 'create it first (createdb, or CREATE DATABASE …), then start again',
    };
  if (codes.has('42501'))
    return {
      message: `the PostgreSQL user of ${where} may not create the Gateway's tables`,
      suggestion: 'give it ownership of the database (ALTER DATABASE … OWNER TO …), then start again',
    };
  return undefined;
}

/** Resolves on the first SIGINT or SIGTERM; `cancel()` removes the listeners. */
function untilSignal(): { signal: Promise<NodeJS.Signals>; cancel: () => void } {
  let stop: (signal: NodeJS.Signals) => void = () => {};
  const cancel = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  const signal = new Promise<NodeJS.Signals>((done) => {
    stop = (sig) => {
      cancel();
      done(sig);
    };
  });
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return { signal, cancel };
}

/** The web mailbox options of `buildApp` from the flags and the environment. */
function webOptions(
  opts: ServeOptions,
  env: NodeJS.ProcessEnv,
): { webDir?: string | false; webOrigin?: string } {
  const dir = opts.webDir ?? env.AGENTMAIL_WEB_DIR;
  const origin = opts.webOrigin ?? env.AGENTMAIL_WEB_ORIGIN;
  return {
    ...(opts.web === false
      ? { webDir: false }
      : dir === undefined || dir === ''
        ? {}
        : { webDir: resolve(dir) }),
    ...(origin === undefined || origin === '' ? {} : { webOrigin: origin }),
  };
}

/** The flags of `serve` as commander parses them. */
interface ServeOptions {
  dataDir?: string;
  database?: string;
  port?: string;
  host?: string;
  logLevel?: string;
  requestsPerMinute?: string;
  locale?: string;
  checkResponses?: boolean;
  webDir?: string;
  web?: boolean;
  webOrigin?: string;
}

/**
 * Register `serve`: check, lock and open (or create) the data directory, listen, then — on the
 * first start only — create the admin and print its token; close cleanly on SIGINT/SIGTERM.
 * A failure names its cause ({@link serveFailure}).
 */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the Gateway (embedded SQLite under the data directory, or PostgreSQL)')
    .option('--data-dir <dir>', 'data directory (env AGENTMAIL_DATA_DIR; default ~/.local/share/agentmail)')
    .option(
      '--database <url>',
      'keep the store in PostgreSQL instead of SQLite, e.g. postgres://agentmail@127.0.0.1:5432/agentmail (env AGENTMAIL_DATABASE_URL); several Gateways may share it',
    )
    .option('-p, --port <port>', `port (env AGENTMAIL_PORT; default ${DEFAULT_PORT}; 0 picks a free one)`)
    .option('--host <host>', `interface to bind (default ${DEFAULT_HOST}; 0.0.0.0 for every interface)`)
    .option('--log-level <level>', `${LOG_LEVELS.join(' | ')} (default info)`)
    .option('--requests-per-minute <n>', 'per-credential request limit; 0 turns it off (default 1200)')
    .option(
      '--locale <tag>',
      'language of the mails the Gateway writes: en | zh-CN (env AGENTMAIL_LOCALE; default en)',
    )
    .option(
      '--check-responses',
      'check every answer and event against the protocol schemas, strictly (tests; a mismatch is a 500)',
    )
    .option(
      '--web-dir <dir>',
      'the built web mailbox to serve at / (env AGENTMAIL_WEB_DIR; default packages/web/dist)',
    )
    .option('--no-web', 'serve no web mailbox (the API only)')
    .option(
      '--web-origin <url>',
      'the address people open the web mailbox at, behind an HTTPS proxy (env AGENTMAIL_WEB_ORIGIN), e.g. https://mail.example.com',
    )
    .action(async (opts: ServeOptions, cmd: Command) => serve(ctx, opts, ctx.globals(cmd).json === true));
}

/** What `serve` was asked for, its options and environment checked. */
interface ServeSettings {
  dataDir: string;
  /** PostgreSQL URL; undefined: SQLite in the data directory. */
  databaseUrl: string | undefined;
  port: number;
  host: string;
  logLevel: LogLevel;
  /** Requests per minute (0: no limit); undefined: the default. */
  rpm: number | undefined;
}

/** @throws CliError `AM_CLI_USAGE` naming the option */
function serveSettings(opts: ServeOptions, env: NodeJS.ProcessEnv): ServeSettings {
  const dataDir = resolve(opts.dataDir ?? defaultDataDir(env));
  const databaseUrl = (opts.database ?? env.AGENTMAIL_DATABASE_URL) || undefined;
  if (databaseUrl !== undefined) {
    try {
      checkDatabaseUrl(databaseUrl);
    } catch (err) {
      const e = err as DatabaseUrlError;
      throw new CliError('USAGE', `option "--database": ${e.message}`, { suggestion: e.suggestion });
    }
  }
  const port = parseIntOption('--port', opts.port ?? env.AGENTMAIL_PORT ?? String(DEFAULT_PORT), 0, 65535);
  const host = opts.host ?? DEFAULT_HOST;
  const logLevel = (opts.logLevel ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new CliError(
      'USAGE',
      `option "--log-level" must be one of ${LOG_LEVELS.join(', ')}; got "${logLevel}"`,
    );
  }
  const rpm =
    opts.requestsPerMinute === undefined
      ? undefined
      : parseIntOption('--requests-per-minute', opts.requestsPerMinute, 0, 1_000_000);
  return { dataDir, databaseUrl, port, host, logLevel, rpm };
}

/** Run the Gateway until SIGINT/SIGTERM: start it, say where it listens, close it. */
async function serve(ctx: CliContext, opts: ServeOptions, json: boolean): Promise<void> {
  const { io } = ctx;
  const settings = serveSettings(opts, io.env);
  const { dataDir } = settings;
  // Listen for the stop signals before anything is printed: a supervisor (or a test) may send
  // SIGTERM the moment it reads the "listening" line, and must not hit the default action.
  const stopped = untilSignal();
  const { app, url, adminToken } = await startServing(opts, io.env, settings, stopped);
  if (adminToken !== undefined) {
    if (json) printJsonLine(io.out, { event: 'admin_token', user: 'admin', admin_token: adminToken });
    else {
      io.out(`First start: created the admin user in ${dataDir}.`);
      io.out(`admin token (shown once, keep it): ${adminToken}`);
    }
  }
  const store = settings.databaseUrl === undefined ? undefined : redactDatabaseUrl(settings.databaseUrl);
  if (json)
    printJsonLine(io.out, {
      event: 'listening',
      url,
      data_dir: dataDir,
      ...(store === undefined ? {} : { database: store }),
    });
  else {
    io.out(
      `AgentMail Gateway listening on ${url} (data in ${dataDir}${store === undefined ? '' : `, store in ${store}`})`,
    );
    io.out(`log in: agentmail login --url ${url} --token <token>`);
    if (app.gateway.config.webDir !== false) io.out(`web mailbox: ${url}/ (sign in with your token)`);
  }

  const signal = await stopped.signal;
  const timer = setTimeout(() => {
    io.err(`agentmail: the Gateway did not close within ${SHUTDOWN_TIMEOUT_MS} ms; exiting`);
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS);
  timer.unref();
  await app.close();
  clearTimeout(timer);
  if (!json) io.out(`stopped (${signal})`);
}

/**
 * Build the Gateway, listen, then (first start only) create the admin.
 * @throws CliError `AM_CLI_SERVE_FAILED` naming the cause ({@link serveFailure}); the store and
 *   the data-directory lock are released, the signal handlers removed
 */
async function startServing(
  opts: ServeOptions,
  env: NodeJS.ProcessEnv,
  settings: ServeSettings,
  stopped: { cancel: () => void },
): Promise<{ app: Awaited<ReturnType<typeof buildApp>>; url: string; adminToken: string | undefined }> {
  const { dataDir, databaseUrl, port, host, logLevel, rpm } = settings;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    // Loaded here, not at the top: the client commands never pay for Fastify and SQLite.
    const server = await import('../index.js');
    // Checks the data directory and takes its lock before anything is written in it.
    app = await server.buildApp({
      dataDir,
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      logLevel,
      checkResponses: opts.checkResponses === true,
      locale: serveLocale(opts.locale, env),
      ...webOptions(opts, env),
      ...(rpm === undefined ? {} : { requestsPerMinute: rpm === 0 ? false : rpm }),
    });
    const url = await app.listen({ port, host });
    // The first start is all or nothing for the person reading it: the admin is created, and
    // its token printed, only once the port is bound. A start that fails (a busy port) uses up
    // no token; the next start creates it.
    const { adminToken } = await server.createAdminIfMissing(app.gateway.db);
    return { app, url, adminToken };
  } catch (err) {
    stopped.cancel();
    await app?.close().catch(() => {}); // releases the store and the data-directory lock
    const failure = serveFailure(err, { port, host, dataDir, databaseUrl });
    throw new CliError('SERVE_FAILED', failure.message, {
      ...(failure.suggestion === undefined ? {} : { suggestion: failure.suggestion }),
      cause: err,
    });
  }
}
