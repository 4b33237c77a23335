/**
 * `buildApp`: the Gateway as a Fastify instance over one data directory (SQLite file + blobs).
 */
import { API_PREFIX } from '@agentmail/protocol';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import pino from 'pino';
import { BlobStore, type SweepReport, sweepBlobs } from './blobs.js';
import { BLOB_SWEEP_INTERVAL_MS, type GatewayOptions, resolveConfig } from './config.js';
import type { GatewayContext } from './context.js';
import { openDatabase } from './db/database.js';
import { EventHub } from './event-hub.js';
import { installDecoding, installErrorHandling } from './http.js';
import { hashSecret } from './ids.js';
import { adminRoutes } from './routes/admin.js';
import { agentRoutes } from './routes/agent.js';
import { humanRoutes } from './routes/human.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Gateway state (store, hub, blobs, config). */
    gateway: GatewayContext;
    /** Run the blob sweep now (SPEC G-36); the server also runs it hourly. */
    sweepBlobs: () => Promise<SweepReport>;
  }
}

/** Test seams of {@link buildApp}; not part of the public contract. */
export interface BuildAppHooks {
  /** Called in the send transaction right after the mail row is written (SPEC G-35 tests). */
  afterMailCreated?: (mailId: string) => void | Promise<void>;
}

/**
 * Build the Gateway app over `options.dataDir` (migrated on open). Call `listen()` to serve and
 * `close()` to stop: close ends SSE streams, stops the sweep timer and closes the store.
 *
 * @example
 * const app = await buildApp({ dataDir: './.data' });
 * await app.listen({ host: '127.0.0.1', port: 8787 });
 */
export async function buildApp(options: GatewayOptions, hooks: BuildAppHooks = {}): Promise<FastifyInstance> {
  const config = resolveConfig(options);
  const db = await openDatabase(config.dataDir);
  const hub = new EventHub({
    db,
    clock: config.clock,
    maxPerStream: config.eventLogMaxPerStream,
    keepaliveMs: config.sseKeepaliveMs,
  });
  const blobs = new BlobStore(config.dataDir);
  const ctx: GatewayContext = { db, hub, blobs, config };
  if (hooks.afterMailCreated) ctx.afterMailCreated = hooks.afterMailCreated;

  // pino, JSON lines on stderr (stdout stays free for CLI output).
  const app = Fastify({
    logger: { level: config.logLevel, base: { service: 'agentmail-gateway' }, stream: pino.destination(2) },
    // Per-request log lines only at debug/trace. Through a LogController: the top-level
    // `disableRequestLogging` option is deprecated (FSTDEP023) and goes away in Fastify 6.
    logController: new LogController({
      disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace',
    }),
    bodyLimit: 2 * 1024 * 1024,
    return503OnClosing: true,
    // SSE streams and keep-alive sockets must not hold a shutdown open.
    forceCloseConnections: true,
  });
  app.decorate('gateway', ctx);
  app.decorate('sweepBlobs', () => sweepBlobs(db, blobs, config.clock));

  installDecoding(app);
  installErrorHandling(app);

  if (config.requestsPerMinute !== false) {
    await app.register(rateLimit, {
      max: config.requestsPerMinute,
      timeWindow: 60_000,
      // One bucket per credential (hashed), else per address.
      keyGenerator: (req) => {
        const auth = req.headers.authorization ?? req.headers['x-agent-secret'];
        return typeof auth === 'string' ? hashSecret(auth) : req.ip;
      },
      errorResponseBuilder: (_req, context) => ({
        statusCode: 429,
        error: 'rate_limited',
        detail: `more than ${context.max} requests per minute`,
        suggestion: `retry in ${Math.ceil(context.ttl / 1000)} s`,
        code: 'AM_GW_RATE_LIMIT',
      }),
    });
  }
  await app.register(multipart, { limits: { fileSize: config.attachmentMaxBytes, files: 1, fields: 10 } });

  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.register(agentRoutes(ctx), { prefix: API_PREFIX });
  await app.register(humanRoutes(ctx), { prefix: API_PREFIX });
  await app.register(adminRoutes(ctx), { prefix: API_PREFIX });

  let timer: NodeJS.Timeout | undefined;
  if (config.sweepTimer) {
    timer = setInterval(() => {
      sweepBlobs(db, blobs, config.clock).then(
        (r) => app.log.info({ ...r }, 'blob sweep'),
        (err: unknown) => app.log.error({ err }, 'blob sweep failed'),
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
    await db.destroy();
  });
  return app;
}
