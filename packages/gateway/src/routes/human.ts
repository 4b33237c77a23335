/**
 * The human API under /api/v1/me (user token; agent keys are refused, SPEC G-12).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserPrincipal } from '../auth.js';
import type { Actor, GatewayContext } from '../context.js';
import { iso } from '../context.js';
import { agentsFor, listContacts, suggestAddresses } from '../directory.js';
import { parseLastEventId, userStream } from '../event-hub.js';
import { IDEMPOTENCY_HEADER, idempotencyClaim } from '../idempotency.js';
import { sendMail } from '../mail-send.js';
import { markRead, readInbox, readMail, readThread } from '../mail-views.js';
import { decidePermission } from '../permission-decision.js';
import { listPermissions } from '../permissions.js';
import { requireSameOrigin, signIn, signOut } from '../web-session.js';
import { forwardMail } from './agent.js';
import { registerEndpoint } from './endpoint.js';
import { receiveUpload, replayed, sendAttachment } from './shared.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The person of a human or admin route (set by the auth hook). */
    user?: UserPrincipal;
  }
}

/** The person of a request. */
export function userOf(req: FastifyRequest): UserPrincipal {
  if (!req.user) throw new Error('user auth hook did not run');
  return req.user;
}

function actorOf(req: FastifyRequest): Actor {
  const u = userOf(req);
  return { kind: 'user', id: u.id, name: u.name };
}

/** Register the `/me` routes (a user token; agent keys are refused, SPEC G-12). */
export function humanRoutes(ctx: GatewayContext) {
  return async (app: FastifyInstance): Promise<void> => {
    registerEndpoint(app, ctx, 'meSend', async (req, reply) => {
      const claim = idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], actorOf(req), 'meSend', req.body);
      return replayed(reply, claim, await sendMail(ctx, actorOf(req), req.body, claim));
    });

    registerEndpoint(app, ctx, 'meInbox', async (req) => readInbox(ctx.db, actorOf(req), req.query));

    registerEndpoint(app, ctx, 'meMail', async (req) => ({
      mail: await readMail(ctx.db, actorOf(req), req.params.id),
    }));

    registerEndpoint(app, ctx, 'meThread', async (req) =>
      readThread(ctx.db, actorOf(req), req.params.id, req.query.offset, req.query.limit, req.query.around),
    );

    registerEndpoint(app, ctx, 'meMarkRead', async (req) => ({
      updated: await markRead(ctx.db, actorOf(req), req.body.ids, ctx.config.clock()),
    }));

    registerEndpoint(app, ctx, 'meEvents', async (req, reply) => {
      const user = userOf(req);
      reply.hijack();
      await ctx.hub.serve(userStream(user.id), reply.raw, parseLastEventId(req.headers['last-event-id']));
      return reply;
    });

    registerEndpoint(app, ctx, 'meUploadAttachment', async (req) => ({
      attachment: await receiveUpload(ctx, req, actorOf(req)),
    }));

    registerEndpoint(app, ctx, 'meAttachment', async (req, reply) =>
      sendAttachment(ctx, reply, actorOf(req), req.params.id),
    );

    registerEndpoint(app, ctx, 'mePermissions', async (req) => ({
      permissions: await listPermissions(ctx.db, userOf(req).id, req.query.status),
    }));

    // The same directory agents see (SPEC G-25 online status), for `agentmail status`.
    registerEndpoint(app, ctx, 'meContacts', async () => ({ contacts: await listContacts(ctx) }));

    // The same suggestions agents get from suggest_address (names, working directories, sessions).
    registerEndpoint(app, ctx, 'meSuggest', async (req) => ({
      suggestions: await suggestAddresses(ctx, req.query.name, req.query.path),
    }));

    registerEndpoint(app, ctx, 'meAgents', async (req) => ({ agents: await agentsFor(ctx, userOf(req)) }));

    registerEndpoint(app, ctx, 'meForward', async (req, reply) => {
      const claim = idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], actorOf(req), 'meForward', {
        id: req.params.id,
        body: req.body,
      });
      return replayed(reply, claim, await forwardMail(ctx, actorOf(req), req.params.id, req.body, claim));
    });

    // Sign-in is a change made without a session yet: it must come from the web mailbox's own
    // origin too (no login CSRF into someone else's account).
    registerEndpoint(app, ctx, 'webSignIn', async (req, reply) => {
      requireSameOrigin(ctx, req);
      const session = await signIn(ctx, req, reply, req.body.token);
      return { name: session.name, admin: session.admin, expires_at: iso(session.expiresAtMs) };
    });

    registerEndpoint(app, ctx, 'webSession', async (req) => {
      const user = userOf(req);
      return {
        name: user.name,
        admin: user.admin,
        expires_at: user.sessionExpiresAtMs === undefined ? null : iso(user.sessionExpiresAtMs),
      };
    });

    registerEndpoint(app, ctx, 'webSignOut', async (req, reply) => {
      requireSameOrigin(ctx, req);
      await signOut(ctx, req, reply);
      return { status: 'signed_out' as const };
    });

    registerEndpoint(app, ctx, 'meDecide', async (req) => {
      const { decision } = await decidePermission(ctx, userOf(req), req.params.id, req.body);
      return { status: 'decided' as const, id: req.params.id, decision };
    });
  };
}
