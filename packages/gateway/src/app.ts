/**
 * `buildApp`: the Gateway as a Fastify instance over one data directory (SQLite file + blobs).
 */
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import pkg from '../package.json' with { type: 'json' };
import { checkEvent } from './answer-check.js';
import { DirectoryBlobStore, PostgresBlobStore, type SweepReport, sweepBlobs } from './blobs.js';
import { BLOB_SWEEP_INTERVAL_MS, type GatewayOptions, type ResolvedConfig, resolveConfig } from './config.js';
import type { GatewayContext } from './context.js';
import { acquireDataDirLock, type DataDirLock, prepareDataDir } from './data-dir.js';
import { type GatewayDb, openDatabase } from './db/database.js';
import { postgresWakeups } from './db/postgres-wakeups.js';
import { GatewayError } from './errors.js';
import { EventHub } from './event-hub.js';
import {
  frameworkErrorHandler,
  installDecoding,
  installErrorHandling,
  JSON_BODY_MAX_BYTES,
  PATH_PARAM_MAX_CHARS,
} from './http.js';
import { sweepIdempotencyKeys } from './idempotency.js';
import { hashSecret } from './ids.js';
import { adminRoutes } from './routes/admin.js';
import { agentRoutes } from './routes/agent.js';
import { guardRoute, registerEndpoint } from './routes/endpoint.js';
import { humanRoutes } from './routes/human.js';
import { webRoutes } from './routes/web.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Gateway state (store, hub, blobs, config). */
    gateway: GatewayContext;
    /** Run the blob sweep now (SPEC G-36); the server also runs it hourly. */
    sweepBlobs: () => Promise<SweepReport>;
  }
}

/**
 * The Content-Security-Policy of every answer: scripts, styles, fonts and fetches from this
 * origin only (no inline script or style, no `eval`), images from this origin or `data:`/`blob:`
 * (so a remote image in a mail never loads), no plugins, no `<base>`, forms post here only, and no
 * page may frame the Gateway (`frame-ancestors 'none'`, with `X-Frame-Options: DENY` for older
 * browsers).
 */
export const CONTENT_SECURITY_POLICY: Readonly<Record<string, string[]>> = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  frameSrc: ["'none'"],
  workerSrc: ["'none'"],
};

/** Test seams of {@link buildApp}; not part of the public contract. */
export interface BuildAppHooks {
  /** Called in the send transaction right after the mail row is written (SPEC G-35 tests). */
  afterMailCreated?: (mailId: string) => void | Promise<void>;
  /** Where the pino JSON lines go instead of stderr (log-level tests). */
  logStream?: DestinationStream;
  /** Called for every route Fastify registers, after the table check (route-list tests). */
  onRoute?: (route: { method: string; url: string }) => void;
}

/**
 * Build the Gateway app over `options.dataDir`. The directory is checked (created when missing)
 * and locked for this Gateway before the store is opened and migrated: a second Gateway on the
 * same directory is refused. Call `listen()` to serve and `close()` to stop: close ends SSE
 * streams, stops the sweep timer, closes the store and releases the lock.
 *
 * @throws DataDirError `AM_GW_DATA_DIR_INVALID` (the directory can not be used),
 *   `AM_GW_DATA_DIR_LOCKED` (another Gateway holds it)
 * @example
 * const app = await buildApp({ dataDir: './.data' });
 * await app.listen({ host: '127.0.0.1', port: 8787 });
 */
export async function buildApp(options: GatewayOptions, hooks: BuildAppHooks = {}): Promise<FastifyInstance> {
  const config = resolveConfig(options);
  const lock = acquireDataDirLock(prepareDataDir(config.dataDir));
  let db: GatewayDb | undefined;
  try {
    db = await openDatabase(config.dataDir, { databaseUrl: config.databaseUrl });
    return await assemble(config, hooks, db, lock);
  } catch (err) {
    await db?.destroy();
    lock.release();
    throw err;
  }
}

async function assemble(
  config: ResolvedConfig,
  hooks: BuildAppHooks,
  db: GatewayDb,
  lock: DataDirLock,
): Promise<FastifyInstance> {
  const app = createServer(config, hooks);
  // Gateways sharing a PostgreSQL database wake each other's streams (SPEC G-42).
  const wakeups =
    config.databaseUrl === undefined
      ? undefined
      : postgresWakeups({
          url: config.databaseUrl,
          db,
          onError: (err) => app.log.warn({ err }, 'event listener connection lost; reconnecting'),
        });
  const hub = new EventHub({
    db,
    clock: config.clock,
    ...(wakeups ? { wakeups } : {}),
    maxPerStream: config.eventLogMaxPerStream,
    keepaliveMs: config.sseKeepaliveMs,
    ...(config.checkResponses ? { checkEvent } : {}),
  });
  // Attachments live where the store lives: every Gateway on a PostgreSQL database serves them all.
  const blobs =
    config.databaseUrl === undefined ? new DirectoryBlobStore(config.dataDir) : new PostgresBlobStore(db);
  const ctx: GatewayContext = { db, hub, blobs, config, log: app.log };
  if (hooks.afterMailCreated) ctx.afterMailCreated = hooks.afterMailCreated;
  app.decorate('gateway', ctx);
  app.decorate('sweepBlobs', () => sweepBlobs(db, blobs, config.clock));

  installDecoding(app);
  installErrorHandling(app);
  await registerPlugins(app, config);
  await registerRoutes(app, ctx, hooks);

  let timer: NodeJS.Timeout | undefined;
  if (config.sweepTimer) {
    timer = setInterval(() => {
      sweepBlobs(db, blobs, config.clock).then(
        (r) => app.log.info({ ...r }, 'blob sweep'),
        (err: unknown) => app.log.error({ err }, 'blob sweep failed'),
      );
      sweepIdempotencyKeys(db, config.clock()).then(
        (removed) => app.log.info({ event: 'idempotency_sweep', removed }, 'idempotency keys swept'),
        (err: unknown) => app.log.error({ err }, 'idempotency key sweep failed'),
      );
    }, BLOB_SWEEP_INTERVAL_MS);
    timer.unref();
  }
  // End SSE streams before the server waits for its connections to close.
  app.addHook('preClose', async () => {
    hub.close();
  });
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    try {
      await wakeups?.close();
      await db.destroy();
    } finally {
      lock.release();
    }
  });
  return app;
}

/** The Fastify server: its logger, body and parameter limits, and how it closes. */
function createServer(config: ResolvedConfig, hooks: BuildAppHooks): FastifyInstance {
  // pino, JSON lines on stderr (stdout stays free for CLI output).
  return Fastify({
    logger: {
      level: config.logLevel,
      base: { service: 'agentmail-gateway' },
      stream: hooks.logStream ?? pino.destination(2),
    },
    // Per-request log lines only at debug/trace. Through a LogController: the top-level
    // `disableRequestLogging` option is deprecated (FSTDEP023) and goes away in Fastify 6.
    logController: new LogController({
      disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace',
    }),
    bodyLimit: JSON_BODY_MAX_BYTES,
    routerOptions: { maxParamLength: PATH_PARAM_MAX_CHARS },
    // Errors raised before routing (bad percent-encoding, a too long id) get the G-13 body too.
    frameworkErrors: frameworkErrorHandler,
    return503OnClosing: true,
    // SSE streams and keep-alive sockets must not hold a shutdown open.
    forceCloseConnections: true,
  });
}

/** The plugins every route runs behind: rate limit, security headers, cookies, uploads. */
async function registerPlugins(app: FastifyInstance, config: ResolvedConfig): Promise<void> {
  if (config.requestsPerMinute !== false) {
    await app.register(rateLimit, {
      max: config.requestsPerMinute,
      timeWindow: 60_000,
      // One bucket per credential (hashed), else per address.
      keyGenerator: (req) => {
        const auth = req.headers.authorization ?? req.headers['x-agent-secret'];
        return typeof auth === 'string' ? hashSecret(auth) : req.ip;
      },
      // Thrown by the plugin: a GatewayError, so the error handler keeps the time in the suggestion.
      errorResponseBuilder: (_req, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        return new GatewayError('RATE_LIMIT', `more than ${context.max} requests per minute`, {
          suggestion: `retry in ${seconds} s`,
          retryAfterSeconds: seconds,
        });
      },
    });
  }
  // Security headers on every answer, API and web pages alike (SPEC H-1): a strict CSP without
  // inline script or style, no framing, no sniffing, no referrer.
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // HSTS only where the Gateway is known to be reached over HTTPS.
    hsts: config.webOrigin?.startsWith('https://') ?? false,
  });
  // The web session cookie (web-session.ts); agent routes never read it.
  await app.register(cookie);
  // Two files so a second one is seen and refused (400) instead of silently dropped.
  await app.register(multipart, { limits: { fileSize: config.attachmentMaxBytes, files: 2, fields: 10 } });
}

/** Every route, from the endpoint table (protocol ENDPOINTS) with its full path. */
async function registerRoutes(
  app: FastifyInstance,
  ctx: GatewayContext,
  hooks: BuildAppHooks,
): Promise<void> {
  app.addHook('onRoute', (route) => {
    guardRoute(route);
    for (const method of [route.method].flat()) hooks.onRoute?.({ method: String(method), url: route.url });
  });
  // The version lets `agentmail doctor` say which Gateway answers (HealthResponse is open: additive).
  registerEndpoint(app, ctx, 'healthz', async () => ({ status: 'ok', version: pkg.version }));
  await app.register(agentRoutes(ctx));
  await app.register(humanRoutes(ctx));
  await app.register(adminRoutes(ctx));
  await app.register(webRoutes(ctx));
}
