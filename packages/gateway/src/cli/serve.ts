import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Locale, resolveLocale } from '@agentmail/shared-policy';
import type { Command } from 'commander';
import type { buildApp } from '../index.js';
import { type CliContext, parseIntOption } from './context.js';
import { CliError } from './errors.js';

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
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'agentmail');
}

/**
 * Language of the mails the Gateway writes (permission and question mails, forward headers):
 * `--locale`, else `$AGENTMAIL_LOCALE`, else `en`. Tags are matched leniently (`zh`, `zh_CN`,
 * `zh-Hans` → `zh-CN`); an unknown tag means `en`.
 */
export function serveLocale(flag: string | undefined, env: NodeJS.ProcessEnv): Locale {
  return resolveLocale(flag ?? env.AGENTMAIL_LOCALE);
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

/**
 * Register `serve`: open (or create) the data directory, print the admin token on the first
 * start only, listen, and close cleanly on SIGINT/SIGTERM.
 */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the Gateway (embedded SQLite under the data directory)')
    .option('--data-dir <dir>', 'data directory (env AGENTMAIL_DATA_DIR; default ~/.local/share/agentmail)')
    .option('-p, --port <port>', `port (env AGENTMAIL_PORT; default ${DEFAULT_PORT}; 0 picks a free one)`)
    .option('--host <host>', `interface to bind (default ${DEFAULT_HOST}; 0.0.0.0 for every interface)`)
    .option('--log-level <level>', `${LOG_LEVELS.join(' | ')} (default info)`)
    .option('--requests-per-minute <n>', 'per-credential request limit; 0 turns it off (default 1200)')
    .option(
      '--locale <tag>',
      'language of the mails the Gateway writes: en | zh-CN (env AGENTMAIL_LOCALE; default en)',
    )
    .action(async (opts: Record<string, string | undefined>, cmd: Command) => {
      const { io } = ctx;
      const json = ctx.globals(cmd).json === true;
      const dataDir = resolve(opts.dataDir ?? defaultDataDir(io.env));
      const port = parseIntOption(
        '--port',
        opts.port ?? io.env.AGENTMAIL_PORT ?? String(DEFAULT_PORT),
        0,
        65535,
      );
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

      // Listen for the stop signals before anything is printed: a supervisor (or a test) may send
      // SIGTERM the moment it reads the "listening" line, and must not hit the default action.
      const stopped = untilSignal();
      let app: Awaited<ReturnType<typeof buildApp>>;
      let url: string;
      try {
        // Loaded here, not at the top: the client commands never pay for Fastify and SQLite.
        const server = await import('../index.js');
        const { adminToken } = await server.initDataDir(dataDir);
        if (adminToken !== undefined) {
          if (json) io.out(JSON.stringify({ event: 'admin_token', user: 'admin', admin_token: adminToken }));
          else {
            io.out(`First start: created the admin user in ${dataDir}.`);
            io.out(`admin token (shown once, keep it): ${adminToken}`);
          }
        }
        app = await server.buildApp({
          dataDir,
          logLevel,
          locale: serveLocale(opts.locale, io.env),
          ...(rpm === undefined ? {} : { requestsPerMinute: rpm === 0 ? false : rpm }),
        });
        url = await app.listen({ port, host });
      } catch (err) {
        stopped.cancel();
        throw new CliError('SERVE_FAILED', `cannot start the Gateway: ${(err as Error).message}`, {
          suggestion: 'check that the port is free and the data directory is writable',
          cause: err,
        });
      }
      if (json) io.out(JSON.stringify({ event: 'listening', url, data_dir: dataDir }));
      else {
        io.out(`AgentMail Gateway listening on ${url} (data in ${dataDir})`);
        io.out(`log in: agentmail login --url ${url} --token <token>`);
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
    });
}
