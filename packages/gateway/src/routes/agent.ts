/**
 * The agent API under /api/v1 (SPEC §3): every route authenticates an agent key (SPEC G-12).
 */
import {
  ForwardMailRequest,
  HeartbeatRequest,
  InboxQuery,
  MarkReadRequest,
  PermissionRequest,
  RegisterRequest,
  ROUTES,
  SendMailRequest,
  SessionSyncRequest,
  SuggestQuery,
  ThreadQuery,
} from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AgentPrincipal, authenticateAgent, requireBoundName } from '../auth.js';
import type { Actor, GatewayContext } from '../context.js';
import {
  heartbeat,
  listContacts,
  registerAgent,
  requireRegistered,
  suggestAddresses,
  syncSession,
} from '../directory.js';
import { GatewayError } from '../errors.js';
import { agentStream, parseLastEventId } from '../event-hub.js';
import { sendMail } from '../mail-send.js';
import {
  actorSessionFor,
  mailRow,
  markRead,
  readInbox,
  readMail,
  readThread,
  sessionParticipants,
} from '../mail-views.js';
import { requestPermission } from '../permissions.js';
import { sessionById } from '../sessions.js';
import { IdParams, receiveUpload, sendAttachment, typed } from './shared.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The agent of an agent route (set by the auth hook). */
    agent?: AgentPrincipal;
  }
}

function agentOf(req: FastifyRequest): AgentPrincipal {
  if (!req.agent) throw new Error('agent auth hook did not run');
  return req.agent;
}

function actorOf(req: FastifyRequest): Actor {
  return { kind: 'agent', name: agentOf(req).name };
}

/** Register the agent routes on an instance prefixed `/api/v1`. */
export function agentRoutes(ctx: GatewayContext) {
  return async (root: FastifyInstance): Promise<void> => {
    const app = typed(root);
    app.addHook('onRequest', async (req) => {
      req.agent = await authenticateAgent(ctx.db, req);
    });

    app.post(ROUTES.register, { schema: { body: RegisterRequest } }, async (req) => {
      requireBoundName(agentOf(req), req.body.name);
      return registerAgent(ctx, req.body.name, req.body.platform, req.body.version);
    });

    app.post(ROUTES.heartbeat, { schema: { body: HeartbeatRequest } }, async (req) => {
      const body = req.body;
      return heartbeat(ctx, agentOf(req).name, body, body as Record<string, unknown>);
    });

    app.get(ROUTES.events, async (req, reply) => {
      const name = agentOf(req).name;
      await requireRegistered(ctx.db, name);
      reply.hijack();
      await ctx.hub.serve(agentStream(name), reply.raw, parseLastEventId(req.headers['last-event-id']));
    });

    app.get(ROUTES.inbox, { schema: { querystring: InboxQuery } }, async (req) => {
      return readInbox(ctx.db, actorOf(req), req.query);
    });

    app.post(ROUTES.markRead, { schema: { body: MarkReadRequest } }, async (req) => {
      return { updated: await markRead(ctx.db, actorOf(req), req.body.ids, ctx.config.clock()) };
    });

    app.get(ROUTES.mail, { schema: { params: IdParams } }, async (req) => {
      return { mail: await readMail(ctx.db, actorOf(req), req.params.id) };
    });

    app.get(ROUTES.thread, { schema: { params: IdParams, querystring: ThreadQuery } }, async (req) => {
      return readThread(ctx.db, actorOf(req), req.params.id, req.query.offset, req.query.limit);
    });

    app.post(ROUTES.send, { schema: { body: SendMailRequest } }, async (req) => {
      await requireRegistered(ctx.db, agentOf(req).name);
      return sendMail(ctx, actorOf(req), req.body);
    });

    app.post(ROUTES.forward, { schema: { params: IdParams, body: ForwardMailRequest } }, async (req) => {
      await requireRegistered(ctx.db, agentOf(req).name);
      return forwardMail(ctx, actorOf(req), req.params.id, req.body);
    });

    app.post(ROUTES.uploadAttachment, async (req) => {
      await requireRegistered(ctx.db, agentOf(req).name);
      return { attachment: await receiveUpload(ctx, req, actorOf(req)) };
    });

    app.get(ROUTES.attachment, { schema: { params: IdParams } }, async (req, reply) => {
      return sendAttachment(ctx, reply, actorOf(req), req.params.id);
    });

    app.post(ROUTES.permissionRequest, { schema: { body: PermissionRequest } }, async (req) => {
      const b = req.body;
      return requestPermission(ctx, agentOf(req).name, {
        question: b.question,
        options: b.options,
        context: b.context ?? '',
        session_id: b.session_id,
        relay_key: b.relay_key,
        kind: b.kind,
        multi_select: b.multi_select,
      });
    });

    app.get(ROUTES.contacts, async () => ({ contacts: await listContacts(ctx) }));

    app.get(ROUTES.suggest, { schema: { querystring: SuggestQuery } }, async (req) => ({
      suggestions: await suggestAddresses(ctx, req.query.name, req.query.path),
    }));

    app.get(ROUTES.participants, { schema: { params: IdParams } }, async (req) => {
      const name = agentOf(req).name;
      const session = await sessionById(ctx.db, req.params.id);
      const participants = session ? await sessionParticipants(ctx.db, actorOf(req), session) : [];
      if (!session || !participants.some((p) => !p.human && p.name === name))
        throw new GatewayError('NOT_FOUND', `session "${req.params.id}" not found among your sessions`, {
          suggestion: 'use the session_id of a mail you received or sent',
        });
      return {
        session_id: session.id,
        session_alias: session.alias ?? '',
        participants,
        silent: participants.filter((p) => !p.has_spoken).map((p) => p.name),
      };
    });

    app.post(ROUTES.sessionSync, { schema: { params: IdParams, body: SessionSyncRequest } }, async (req) => {
      return syncSession(ctx, agentOf(req).name, req.params.id, req.body.alias, req.body.title);
    });
  };
}

/**
 * Forward a mail the actor can read: the original quoted under the comment, its attachments
 * carried over; written from `request.from_session_id` when given (see {@link sendMail}).
 * @throws GatewayError `AM_GW_NOT_FOUND` and everything {@link sendMail} throws
 */
export async function forwardMail(
  ctx: GatewayContext,
  actor: Actor,
  id: string,
  request: ForwardMailRequest,
) {
  const { to, comment } = request;
  const row = await mailRow(ctx.db, id);
  if (!row || actorSessionFor(actor, row.mail, row.deliveries) === undefined)
    throw new GatewayError('NOT_FOUND', `mail "${id}" not found`, {
      suggestion: 'forward a mail from your inbox or thread',
    });
  const attachments = await ctx.db
    .selectFrom('mail_attachments')
    .select('attachment_id')
    .where('mail_id', '=', id)
    .orderBy('position')
    .execute();
  const quoted = row.mail.body
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
  const lc = ctx.config.locale;
  const header = formatText(
    'gateway.forward.header',
    { from_name: row.mail.from_name, subject: row.mail.subject },
    lc,
  );
  const body = `${comment ?? ''}${comment ? '\n\n' : ''}${header}\n\n${quoted}`;
  // An already forwarded subject keeps its one prefix.
  const prefix = formatText('gateway.forward.subject', { subject: '' }, lc);
  return sendMail(ctx, actor, {
    to,
    subject: row.mail.subject.startsWith(prefix)
      ? row.mail.subject
      : formatText('gateway.forward.subject', { subject: row.mail.subject }, lc),
    body,
    trustedAttachmentIds: attachments.map((a) => a.attachment_id),
    ...(request.from_session_id === undefined ? {} : { from_session_id: request.from_session_id }),
  });
}
