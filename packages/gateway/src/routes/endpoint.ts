/**
 * Routes are registered from the endpoint table (`ENDPOINTS` of @agentmail/protocol) and from
 * nowhere else: {@link registerEndpoint} takes an endpoint id and a handler and wires the
 * method, the path, the authentication, the params/query/body schemas and the response schema of
 * that endpoint. {@link guardRoute} (an `onRoute` hook of the app) refuses any route that did not
 * come through it, so the table, the docs and the clients cannot drift from what is served.
 */
import { ENDPOINTS, type EndpointId, type EndpointOf, endpoint } from '@agentmail/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { z } from 'zod';
import { checkAnswer } from '../answer-check.js';
import { authenticateAgent, authenticateUser } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { JSON_BODY_MAX_BYTES, MAIL_BODY_ENDPOINTS, MAIL_REQUEST_MAX_BYTES } from '../http.js';
import { isWebRoute } from './web.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Id of the endpoint the route was registered from (set by {@link registerEndpoint}). */
    endpoint?: EndpointId;
  }
}

type Output<E, K extends string, Fallback> = E extends { [P in K]: infer S extends z.ZodType }
  ? z.output<S>
  : Fallback;

/** The request of endpoint `Id` as its handler sees it: params, query and body decoded by its schemas. */
export type EndpointRequest<Id extends EndpointId> = FastifyRequest<{
  Params: Output<EndpointOf<Id>, 'params', Record<string, never>>;
  Querystring: Output<EndpointOf<Id>, 'query', Record<string, never>>;
  Body: Output<EndpointOf<Id>, 'body', undefined>;
}>;

/**
 * What a handler of endpoint `Id` resolves with: for a JSON endpoint, the answer in the shape its
 * response schema accepts (checked by the compiler here and, with `checkResponses`, at run time);
 * for a stream or a download, the reply it took over or sent.
 */
export type EndpointAnswer<Id extends EndpointId> =
  EndpointOf<Id> extends {
    response: infer R extends z.ZodType;
  }
    ? z.input<R>
    : FastifyReply | undefined;

/** A handler of endpoint `Id`. */
export type EndpointHandler<Id extends EndpointId> = (
  req: EndpointRequest<Id>,
  reply: FastifyReply,
) => Promise<EndpointAnswer<Id>>;

/**
 * The authentication of each kind of endpoint (SPEC G-12), run as the route's `onRequest` hook:
 * it sets `req.agent` or `req.user`, or throws the 401/403 of `auth.ts`.
 */
function authHook(ctx: GatewayContext, id: EndpointId): ((req: FastifyRequest) => Promise<void>) | undefined {
  switch (endpoint(id).auth) {
    case 'agent':
      return async (req) => {
        req.agent = await authenticateAgent(ctx.db, req, ctx.config.clock());
      };
    case 'person':
      return async (req) => {
        req.user = await authenticateUser(ctx, req, false);
      };
    case 'admin':
      return async (req) => {
        req.user = await authenticateUser(ctx, req, true);
      };
    case 'none':
      return undefined;
  }
}

/**
 * Register endpoint `id` of the table on `app` with `handler`: method, path, authentication,
 * request schemas (decoded by the Gateway's validator compiler, G-10) and the response schema
 * of its 2xx answers — checked strictly before sending when `ctx.config.checkResponses` is on.
 *
 * @example registerEndpoint(app, ctx, 'register', async (req) => registerAgent(ctx, req.body.name, …))
 */
export function registerEndpoint<Id extends EndpointId>(
  app: FastifyInstance,
  ctx: GatewayContext,
  id: Id,
  handler: EndpointHandler<Id>,
): void {
  const e = endpoint(id);
  const schema: NonNullable<RouteOptions['schema']> = {};
  if (e.params) schema.params = e.params;
  if (e.query) schema.querystring = e.query;
  if (e.body) schema.body = e.body;
  if (e.transport === 'json' || e.transport === 'multipart') schema.response = { '2xx': e.response };
  const onRequest = authHook(ctx, id);
  app.route({
    method: e.method,
    url: e.path,
    schema,
    config: { endpoint: id },
    // Set on every route, so a 413 names the limit that applied (the mail routes take more, see
    // MAIL_REQUEST_MAX_BYTES); uploads keep their own multipart limit.
    bodyLimit: MAIL_BODY_ENDPOINTS.has(id) ? MAIL_REQUEST_MAX_BYTES : JSON_BODY_MAX_BYTES,
    ...(onRequest === undefined ? {} : { onRequest }),
    // The answer is built from protocol types; serialising is JSON.stringify, plus the strict check
    // in tests (a mismatch becomes a 500 through the error handler, naming endpoint and field).
    serializerCompiler: ({ schema: response }) =>
      ctx.config.checkResponses
        ? (data: unknown) => {
            const text = JSON.stringify(data);
            checkAnswer(id, response as z.ZodType, text);
            return text;
          }
        : (data: unknown) => JSON.stringify(data),
    handler: handler as unknown as RouteOptions['handler'],
  });
}

/**
 * `onRoute` hook: refuse a route that was not registered from the table, or whose method or path
 * differs from its endpoint's. Fastify's automatic `HEAD` twin of a `GET` endpoint passes, and so
 * do the web mailbox's declared file routes (`WEB_ROUTES` of web.ts: not API endpoints).
 * @throws Error naming the route and the fix (at startup, before anything is served).
 */
export function guardRoute(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): void {
  const id = (route.config as { endpoint?: EndpointId } | undefined)?.endpoint;
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
  const e = id === undefined || !Object.hasOwn(ENDPOINTS, id) ? undefined : endpoint(id);
  const matches =
    e !== undefined &&
    route.url === e.path &&
    methods.every((m) => m === e.method || (m === 'HEAD' && e.method === 'GET'));
  if (!matches && !isWebRoute({ url: route.url, methods, config: route.config }))
    throw new Error(
      `route ${methods.join(',')} ${route.url} is not registered from the endpoint table${id === undefined ? '' : ` (it claims "${id}")`}: add it to ENDPOINTS in packages/protocol/src/endpoints.ts and register it with registerEndpoint()`,
    );
}
