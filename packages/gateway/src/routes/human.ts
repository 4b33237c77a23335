/**
 * The human API under /api/v1/me (user token; agent keys are refused, SPEC G-12).
 */
import {
  DecideRequest,
  InboxQuery,
  MarkReadRequest,
  PermissionsQuery,
  PersonSendRequest,
  ROUTES,
  ThreadQuery,
} from '@agentmail/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticateUser, type UserPrincipal } from '../auth.js';
import type { Actor, GatewayContext } from '../context.js';
import { listContacts } from '../directory.js';
import { parseLastEventId, userStream } from '../event-hub.js';
import { sendMail } from '../mail-send.js';
import { markRead, readInbox, readMail, readThread } from '../mail-views.js';
import { decidePermission, listPermissions } from '../permissions.js';
import { IdParams, receiveUpload, sendAttachment, typed } from './shared.js';

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

/** Register the `/me` routes on an instance prefixed `/api/v1`. */
export function humanRoutes(ctx: GatewayContext) {
  return async (root: FastifyInstance): Promise<void> => {
    const app = typed(root);
    app.addHook('onRequest', async (req) => {
      req.user = await authenticateUser(ctx.db, req, false);
    });

    app.post(ROUTES.meSend, { schema: { body: PersonSendRequest } }, async (req) =>
      sendMail(ctx, actorOf(req), req.body),
    );

    app.get(ROUTES.meInbox, { schema: { querystring: InboxQuery } }, async (req) =>
      readInbox(ctx.db, actorOf(req), req.query),
    );

    app.get(ROUTES.meMail, { schema: { params: IdParams } }, async (req) => ({
      mail: await readMail(ctx.db, actorOf(req), req.params.id),
    }));

    app.get(ROUTES.meThread, { schema: { params: IdParams, querystring: ThreadQuery } }, async (req) =>
      readThread(ctx.db, actorOf(req), req.params.id, req.query.offset, req.query.limit),
    );

    app.post(ROUTES.meMarkRead, { schema: { body: MarkReadRequest } }, async (req) => ({
      updated: await markRead(ctx.db, actorOf(req), req.body.ids, ctx.config.clock()),
    }));

    app.get(ROUTES.meEvents, async (req, reply) => {
      const user = userOf(req);
      reply.hijack();
      await ctx.hub.serve(userStream(user.id), reply.raw, parseLastEventId(req.headers['last-event-id']));
    });

    app.post(ROUTES.meAttachments, async (req) => ({
      attachment: await receiveUpload(ctx, req, actorOf(req)),
    }));

    app.get(ROUTES.meAttachment, { schema: { params: IdParams } }, async (req, reply) =>
      sendAttachment(ctx, reply, actorOf(req), req.params.id),
    );

    app.get(ROUTES.mePermissions, { schema: { querystring: PermissionsQuery } }, async (req) => ({
      permissions: await listPermissions(ctx.db, userOf(req).id, req.query.status),
    }));

    // The same directory agents see (SPEC G-25 online status), for `agentmail status`.
    app.get(ROUTES.meContacts, async () => ({ contacts: await listContacts(ctx) }));

    app.post(ROUTES.meDecide, { schema: { params: IdParams, body: DecideRequest } }, async (req) => {
      const { decision } = await decidePermission(ctx, userOf(req), req.params.id, req.body);
      return { status: 'decided' as const, id: req.params.id, decision };
    });
  };
}
