/**
 * The sessions of a send (SPEC G-2, G-5, G-6, G-37, P-1): the agent sender's own session, each
 * agent recipient's session (the reply's, or what the address says), a `permission_mode` applied
 * to existing sessions by their owner, and the session the mail is written in.
 */
import type { PermissionMode } from '@agentmail/protocol';
import type { Actor, Db, GatewayContext, SessionRow } from './context.js';
import { GatewayError } from './errors.js';
import type { Recipient, ReplyParent, SendInput, SendSessions } from './mail-send-types.js';
import { defaultSession, type NewSessionSeed, resolveAgentSession, sessionsById } from './sessions.js';

/** What a session created by this send starts with, given its owner and inherited mode. */
type SeedFor = (ownerUserId: string | null, mode: PermissionMode | undefined) => NewSessionSeed;

/** The mode a session stands in, as a mail announces it (anything unknown reads as workspace). */
export function wireMode(mode: string): PermissionMode {
  return mode === 'plan' || mode === 'full' ? mode : 'workspace';
}

/**
 * Resolve every session of a send, in order: the agent sender's (creating its default session
 * if needed), each agent recipient's (new ones owned by the person who writes, or inheriting the
 * sender's owner and mode), the `permission_mode` change, then the thread's session; people
 * recipients get the thread's session.
 * @throws GatewayError `AM_GW_NOT_FOUND` / `AM_GW_FORBIDDEN` (`from_session_id`),
 *   `AM_GW_UNKNOWN_ALIAS` (an alias in a person's address or an agent's), `AM_GW_FORBIDDEN` (a
 *   mode change by someone other than the owner), `AM_GW_BAD_REQUEST` (person to person)
 */
export async function resolveSessions(
  ctx: GatewayContext,
  trx: Db,
  actor: Actor,
  input: SendInput,
  recipients: readonly Recipient[],
  parent: ReplyParent | undefined,
): Promise<SendSessions> {
  const parentSessions = parent
    ? await sessionsById(trx, [parent.mail.session_id, ...parent.deliveries.map((d) => d.session_id)])
    : new Map<string, SessionRow>();
  const seed: SeedFor = (ownerUserId, mode) => ({
    subject: input.subject,
    requestedAlias: input.session_alias,
    ownerUserId,
    permissionMode: mode ?? 'workspace',
    maxRounds: input.max_rounds ?? ctx.config.defaultMaxRounds,
  });
  let sender: SessionRow | undefined;
  let owner: string | null = actor.kind === 'user' ? actor.id : null;
  let mode = input.permission_mode;
  if (actor.kind !== 'user') {
    sender = await senderSession(ctx, trx, actor.name, input, recipients, parent, parentSessions, seed);
    owner = sender.owner_user_id;
    mode ??= wireMode(sender.permission_mode);
  }
  await recipientSessions(ctx, trx, recipients, parent, parentSessions, () => seed(owner, mode));
  if (input.permission_mode !== undefined)
    await applyMode(ctx, trx, actor, recipients, input.permission_mode);
  const thread = threadSession(sender, recipients, parent, parentSessions);
  for (const r of recipients) if (r.human) r.session = thread;
  return { sender, thread };
}

/**
 * An agent's session for this send: the one it names (`from_session_id`), else the one it has for
 * the parent, else the one a person's address names (`alice@.pi-fix-x`, G-6), else its default.
 */
async function senderSession(
  ctx: GatewayContext,
  trx: Db,
  agentName: string,
  input: SendInput,
  recipients: readonly Recipient[],
  parent: ReplyParent | undefined,
  parentSessions: ReadonlyMap<string, SessionRow>,
  seed: SeedFor,
): Promise<SessionRow> {
  let session: SessionRow | undefined;
  if (input.from_session_id !== undefined) session = await ownSession(trx, agentName, input.from_session_id);
  else if (parent !== undefined) session = parentSessions.get(parent.actorSessionId);
  // `alice@.pi-fix-x`: a person's address names the session of the sender it belongs to (G-6).
  const personInSession = recipients.find((r) => r.human && r.address.session !== '');
  if (!session && personInSession) {
    const alias = personInSession.address.session;
    session = await trx
      .selectFrom('sessions')
      .selectAll()
      .where('agent_name', '=', agentName)
      .where('alias', '=', alias)
      .executeTakeFirst();
    if (!session)
      throw new GatewayError(
        'UNKNOWN_ALIAS',
        `field "${personInSession.field}": you have no session with the alias "${alias}"`,
        {
          detail: "in a person's address the session part names a session of the sender (SPEC G-2, G-6)",
          suggestion: `use the reply_address of the mail you answer, or write ${personInSession.name}@. for your default session`,
          extra: { field: personInSession.field, alias },
        },
      );
  }
  return (
    session ?? (await defaultSession(ctx, trx, agentName, '', seed(null, input.permission_mode))).session
  );
}

/**
 * The session an agent names with `from_session_id`: it must exist and be one of its own.
 * @throws GatewayError `AM_GW_NOT_FOUND` (404, no such session), `AM_GW_FORBIDDEN` (403, the
 *   session belongs to another agent — the answer says which)
 */
async function ownSession(db: Db, agentName: string, id: string): Promise<SessionRow> {
  const session = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!session)
    throw new GatewayError('NOT_FOUND', `field "from_session_id": no session "${id}"`, {
      suggestion: 'pass the session_id of the new_mail event your turn works on, or leave the field out',
      extra: { field: 'from_session_id' },
    });
  if (session.agent_name !== agentName)
    throw new GatewayError(
      'FORBIDDEN',
      `field "from_session_id": session "${id}" belongs to agent "${session.agent_name}", not to "${agentName}"`,
      {
        detail: 'an agent writes only from its own sessions',
        suggestion: 'pass the session_id of a mail delivered to you, or leave the field out',
        extra: { field: 'from_session_id', session_agent: session.agent_name },
      },
    );
  return session;
}

/**
 * Each agent recipient's session: the one it had for the parent when the address names no
 * session, else what the address says (default / new / alias, G-2).
 */
async function recipientSessions(
  ctx: GatewayContext,
  trx: Db,
  recipients: readonly Recipient[],
  parent: ReplyParent | undefined,
  parentSessions: ReadonlyMap<string, SessionRow>,
  seed: () => NewSessionSeed,
): Promise<void> {
  for (const r of recipients) {
    if (r.human) continue;
    const a = r.address;
    if (parent && a.session === '' && a.path === '') {
      const counterpart =
        parent.mail.from_name === r.name && parent.mail.from_human === 0
          ? parent.mail.session_id
          : parent.deliveries.find((d) => d.recipient_name === r.name && d.recipient_human === 0)?.session_id;
      const s = counterpart !== undefined ? parentSessions.get(counterpart) : undefined;
      if (s && s.agent_name === r.name) {
        r.session = s;
        r.existingSession = true;
        continue;
      }
    }
    const resolved = await resolveAgentSession(ctx, trx, r.name, a.path, a.session, seed());
    r.session = resolved.session;
    r.existingSession = !resolved.created;
  }
}

/**
 * The session the mail is written in: the sender's; for a person, the first agent's session or,
 * in a reply, the person's session of the parent.
 * @throws GatewayError `AM_GW_BAD_REQUEST` (a mail between people with no agent session)
 */
function threadSession(
  sender: SessionRow | undefined,
  recipients: readonly Recipient[],
  parent: ReplyParent | undefined,
  parentSessions: ReadonlyMap<string, SessionRow>,
): SessionRow {
  let thread: SessionRow | undefined = sender;
  if (!thread) thread = recipients.find((r) => r.session)?.session;
  if (!thread && parent !== undefined) thread = parentSessions.get(parent.actorSessionId);
  if (!thread)
    throw new GatewayError(
      'BAD_REQUEST',
      'field "to": people write to agents; a mail between people needs an agent session',
      {
        suggestion: 'address an agent, or reply to a mail of an agent session',
        extra: { field: 'to' },
      },
    );
  return thread;
}

/**
 * `permission_mode` on a send into sessions that already exist (P-1): the mode changes when the
 * sender is the person who owns the session (started it, or inherited it along delegations);
 * anyone else is refused with the reason, never ignored silently. New sessions got the mode as
 * their seed already.
 * @throws GatewayError `AM_GW_FORBIDDEN` (403) naming the owner, or saying an agent started it.
 */
async function applyMode(
  ctx: GatewayContext,
  trx: Db,
  actor: Actor,
  recipients: readonly Recipient[],
  mode: PermissionMode,
): Promise<void> {
  for (const r of recipients) {
    const s = r.session;
    if (r.human || !s || !r.existingSession || s.permission_mode === mode) continue;
    const owns = actor.kind === 'user' && s.owner_user_id === actor.id;
    if (!owns) {
      const owner =
        s.owner_user_id === null
          ? undefined
          : await trx.selectFrom('users').select('name').where('id', '=', s.owner_user_id).executeTakeFirst();
      const alias = s.alias ?? s.id;
      throw new GatewayError(
        'FORBIDDEN',
        `field "permission_mode": the session "${alias}" of agent "${s.agent_name}" is in mode ${s.permission_mode}; only ${owner ? `its owner "${owner.name}"` : 'the person who started it'} may change it`,
        {
          detail: owner
            ? `"${owner.name}" started the session; the mail was not sent`
            : 'the session was started by an agent or without an owner; its mode stays as it is and the mail was not sent',
          suggestion: `send without permission_mode to keep mode ${s.permission_mode}, or start a new session (${s.agent_name}@${s.path}.new) in mode ${mode}`,
          extra: {
            field: 'permission_mode',
            permission_mode: s.permission_mode,
            ...(owner ? { owner: owner.name } : {}),
          },
        },
      );
    }
    await trx
      .updateTable('sessions')
      .set({ permission_mode: mode, updated_at: ctx.config.clock() })
      .where('id', '=', s.id)
      .execute();
    ctx.log.info(
      { event: 'session_mode_changed', session_id: s.id, from: s.permission_mode, to: mode, by: actor.name },
      'session mode changed by its owner',
    );
    s.permission_mode = mode;
  }
}
