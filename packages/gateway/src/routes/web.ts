/**
 * The web mailbox's files, served by the Gateway itself on the API's origin (no second server).
 *
 * They are no API endpoint: no schema, no client calls them, docs/PROTOCOL.md does not list them.
 * So they are not in the endpoint table; instead this module declares them ({@link WEB_ROUTES})
 * and registers them with `config.web`, and the table guard (`guardRoute`) lets exactly these
 * through, GET/HEAD only — every other route still has to come from ENDPOINTS, and a web route
 * can never shadow the API (`/api/…`, `/healthz`), which a test checks.
 *
 * Caching: `index.html` is revalidated on every load (`no-cache` with an ETag), so a new build is
 * picked up at once; files under `assets/` carry a content hash in their name and are cached for a
 * year as immutable.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { GatewayContext } from '../context.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the web mailbox's file routes ({@link WEB_ROUTES}); the table guard lets them through. */
    web?: true;
  }
}

/** The only non-API routes: the page and its hashed assets (GET, and Fastify's HEAD twin). */
export const WEB_ROUTES = ['/', '/assets/*'] as const;

/** Cache lifetime of hashed assets, in seconds. @default one year */
export const WEB_ASSET_MAX_AGE_S = 365 * 24 * 60 * 60;

/** True when `route` is one of {@link WEB_ROUTES}, registered here, GET/HEAD only. */
export function isWebRoute(route: { url: string; methods: readonly string[]; config: unknown }): boolean {
  return (
    (route.config as { web?: unknown } | undefined)?.web === true &&
    (WEB_ROUTES as readonly string[]).includes(route.url) &&
    route.methods.every((m) => m === 'GET' || m === 'HEAD')
  );
}

/**
 * The web mailbox's build in this checkout: `packages/web/dist` beside the Gateway's package,
 * found by walking up from this module to the Gateway's package.json (this works from `src/`,
 * from `dist/` and from a bundle under the Gateway's `node_modules/.cache`). Why not a package
 * dependency: the web package's tests start the Gateway (through the testkit), so a dependency
 * back would make a cycle. Elsewhere, `--web-dir` names the directory.
 */
export function installedWebDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    try {
      if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === '@agentmail/gateway')
        return join(dir, '..', 'web', 'dist');
    } catch {
      // no package.json here
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const NOT_BUILT =
  'The web mailbox is not built on this Gateway.\n\nBuild it with `pnpm build` (or `pnpm --filter @agentmail/web build`) in the AgentMail checkout and reload this page; the command line (`agentmail inbox`) works meanwhile.\n';

/** Register the web mailbox's routes (nothing when `config.webDir` is false). */
export function webRoutes(ctx: GatewayContext) {
  return async (app: FastifyInstance): Promise<void> => {
    if (ctx.config.webDir === false) return;
    const root = ctx.config.webDir ?? installedWebDir();
    // Only reply.sendFile: the routes are ours (declared above), not the plugin's wildcard.
    await app.register(fastifyStatic, { root: root ?? process.cwd(), serve: false });
    app.route({
      method: 'GET',
      url: '/',
      config: { web: true },
      handler: async (_req, reply) => {
        if (root === undefined || !existsSync(join(root, 'index.html')))
          return reply
            .code(503)
            .type('text/plain; charset=utf-8')
            .header('cache-control', 'no-store')
            .send(NOT_BUILT);
        void reply.header('cache-control', 'no-cache');
        return reply.sendFile('index.html', root, { cacheControl: false });
      },
    });
    app.route({
      method: 'GET',
      url: '/assets/*',
      config: { web: true },
      handler: async (req, reply) => {
        const file = (req.params as { '*': string })['*'];
        if (root === undefined) return reply.callNotFound();
        return reply.sendFile(file, join(root, 'assets'), {
          maxAge: WEB_ASSET_MAX_AGE_S * 1000,
          immutable: true,
        });
      },
    });
  };
}
