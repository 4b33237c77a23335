/**
 * The agent API under /api/v1 (SPEC §3): every route authenticates an agent key (SPEC G-12).
 */
import type { ForwardMailRequest } from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { heartbeat, registerAgent, requireRegistered } from '../agents.js';
import { type AgentPrincipal, requireBoundName } from '../auth.js';
import type { Actor, GatewayContext } from '../context.js';
import { listContacts, suggestAddresses, syncSession } from '../directory.js';
import { GatewayError } from '../errors.js';
import { agentStream, parseLastEventId } from '../event-hub.js';
import { IDEMPOTENCY_HEADER, type IdempotencyClaim, idempotencyClaim } from '../idempotency.js';
import { actorSessionFor, mailRow } from '../mail-access.js';
import { sendMail } from '../mail-send.js';
import { markRead, readInbox, readMail, readThread, sessionParticipants } from '../mail-views.js';
import { expirePendingRequests, withdrawPermission } from '../permission-decision.js';
import { requestPermission } from '../permission-request.js';
import { markOffline } from '../presence.js';
import { sessionById } from '../sessions.js';
import { registerEndpoint } from './endpoint.js';
import { receiveUpload, replayed, sendAttachment } from './shared.js';

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

/** Register the agent routes (every one authenticates an agent key, SPEC G-12). */
export function agentRoutes(ctx: GatewayContext) {
  return async (app: FastifyInstance): Promise<void> => {
    presenceRoutes(app, ctx);
    mailRoutes(app, ctx);
    permissionRoutes(app, ctx);
    directoryRoutes(app, ctx);
  };
}

/** Register, heartbeat, goodbye and the event stream (SPEC G-25, H-3, G-22). */
function presenceRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  registerEndpoint(app, ctx, 'register', async (req) => {
    requireBoundName(agentOf(req), req.body.name);
    const registered = await registerAgent(
      ctx,
      req.body.name,
      req.body.platform,
      req.body.version,
      req.body.keep_existing === true,
    );
    if (req.body.expire_pending !== true) return registered;
    return { ...registered, expired_requests: await expirePendingRequests(ctx, req.body.name) };
  });

  registerEndpoint(app, ctx, 'heartbeat', async (req) => {
    const body = req.body;
    return heartbeat(ctx, agentOf(req).name, body, body as Record<string, unknown>);
  });

  registerEndpoint(app, ctx, 'agentOffline', async (req) =>
    markOffline(ctx, agentOf(req).name, req.body.reason),
  );

  registerEndpoint(app, ctx, 'events', async (req, reply) => {
    const name = agentOf(req).name;
    await requireRegistered(ctx.db, name);
    reply.hijack();
    await ctx.hub.serve(agentStream(name), reply.raw, parseLastEventId(req.headers['last-event-id']));
    return reply;
  });
}

/** Reading, sending and forwarding mail, and attachments (uploads and downloads). */
function mailRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  registerEndpoint(app, ctx, 'inbox', async (req) => readInbox(ctx.db, actorOf(req), req.query));

  registerEndpoint(app, ctx, 'markRead', async (req) => ({
    updated: await markRead(ctx.db, actorOf(req), req.body.ids, ctx.config.clock()),
  }));

  registerEndpoint(app, ctx, 'mail', async (req) => ({
    mail: await readMail(ctx.db, actorOf(req), req.params.id),
  }));

  registerEndpoint(app, ctx, 'thread', async (req) =>
    readThread(ctx.db, actorOf(req), req.params.id, req.query.offset, req.query.limit, req.query.around),
  );

  registerEndpoint(app, ctx, 'send', async (req, reply) => {
    await requireRegistered(ctx.db, agentOf(req).name);
    const claim = idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], actorOf(req), 'send', req.body);
    return replayed(reply, claim, await sendMail(ctx, actorOf(req), req.body, claim));
  });

  registerEndpoint(app, ctx, 'forward', async (req, reply) => {
    await requireRegistered(ctx.db, agentOf(req).name);
    const claim = idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], actorOf(req), 'forward', {
      id: req.params.id,
      body: req.body,
    });
    return replayed(reply, claim, await forwardMail(ctx, actorOf(req), req.params.id, req.body, claim));
  });

  registerEndpoint(app, ctx, 'uploadAttachment', async (req) => {
    await requireRegistered(ctx.db, agentOf(req).name);
    return { attachment: await receiveUpload(ctx, req, actorOf(req)) };
  });

  registerEndpoint(app, ctx, 'attachment', async (req, reply) =>
    sendAttachment(ctx, reply, actorOf(req), req.params.id),
  );
}

/** Permission and question requests (SPEC G-38, P-9). */
function permissionRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  registerEndpoint(app, ctx, 'permissionRequest', async (req, reply) => {
    const b = req.body;
    const claim = idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], actorOf(req), 'permissionRequest', b);
    return replayed(
      reply,
      claim,
      await requestPermission(
        ctx,
        agentOf(req).name,
        {
          question: b.question,
          options: b.options,
          context: b.context ?? '',
          session_id: b.session_id,
          relay_key: b.relay_key,
          kind: b.kind,
          multi_select: b.multi_select,
        },
        claim,
      ),
    );
  });

  registerEndpoint(app, ctx, 'permissionWithdraw', async (req) =>
    withdrawPermission(ctx, agentOf(req).name, req.params.id, req.body.reason),
  );
}

/** Contacts, suggestions, a session's participants and naming sync (B-11). */
function directoryRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  registerEndpoint(app, ctx, 'contacts', async () => ({ contacts: await listContacts(ctx) }));

  registerEndpoint(app, ctx, 'suggest', async (req) => ({
    suggestions: await suggestAddresses(ctx, req.query.name, req.query.path),
  }));

  registerEndpoint(app, ctx, 'participants', async (req) => {
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

  registerEndpoint(app, ctx, 'sessionSync', async (req) =>
    syncSession(ctx, agentOf(req).name, req.params.id, req.body.alias, req.body.title),
  );
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
  claim?: IdempotencyClaim,
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
  return sendMail(
    ctx,
    actor,
    {
      to,
      subject: row.mail.subject.startsWith(prefix)
        ? row.mail.subject
        : formatText('gateway.forward.subject', { subject: row.mail.subject }, lc),
      body,
      trustedAttachmentIds: attachments.map((a) => a.attachment_id),
      ...(request.from_session_id === undefined ? {} : { from_session_id: request.from_session_id }),
    },
    claim,
  );
}
