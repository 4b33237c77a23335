/**
 * Sending: one transaction creates the mail, its deliveries, attachment links, session changes
 * and the events, or nothing at all (SPEC G-35). Implements free relays to people and round
 * budgets (G-31), relay idempotency (G-32), the hop limit (G-33), `.new`/alias sessions (G-2,
 * G-5, G-37) and the `new_mail` payload (G-6, G-20, G-30).
 */
import type {
  MailKind,
  NewMailEvent,
  PermissionMode,
  PersonNewMailEvent,
  SendMailResponse,
} from '@agentmail/protocol';
import {
  type Address,
  formatAddress,
  isAddressError,
  isNormalizedPath,
  normalizeAbsolutePath,
  parseAddress,
  RELAY_KEY_MAX_BYTES,
} from '@agentmail/protocol';
import { subjectForSend } from '@agentmail/shared-policy';
import type { Actor, Db, GatewayContext, SessionRow } from './context.js';
import { isUniqueViolation } from './db/database.js';
import { GatewayError } from './errors.js';
import { agentStream, type EventBatch, userStream } from './event-hub.js';
import { newId } from './ids.js';
import { actorSessionFor, canSeeAttachment, mailRow, PERMISSION_KIND } from './mail-views.js';
import { offlineAgents } from './presence.js';
import {
  addressIn,
  defaultSession,
  type NewSessionSeed,
  resolveAgentSession,
  sessionsById,
} from './sessions.js';

/** A send request, from an agent (`POST /mail/send`) or a person (`POST /me/mail/send`). */
export interface SendInput {
  to: string;
  subject: string;
  body: string;
  cc?: readonly string[] | undefined;
  reply_to?: string | undefined;
  /** The sender's own session (agents only): overrides the session of `reply_to` and the default. */
  from_session_id?: string | undefined;
  session_alias?: string | undefined;
  attachment_ids?: readonly string[] | undefined;
  max_rounds?: number | undefined;
  relay?: 'summary' | undefined;
  relay_key?: string | undefined;
  kind?: MailKind | undefined;
  permission_mode?: PermissionMode | undefined;
  /** Internal: store as a question mail (SPEC B-20 skips them). */
  internalKind?: typeof PERMISSION_KIND;
  /** Internal: attachment ids already checked (forward). */
  trustedAttachmentIds?: readonly string[];
}

/** A send's outcome. */
export type SendResult = SendMailResponse;

interface Recipient {
  name: string;
  human: boolean;
  userId: string | null;
  role: 'to' | 'cc';
  address: Address;
  field: string;
  session?: SessionRow;
  /** The session existed before this send (a reply's, a default or an alias one). */
  existingSession?: boolean;
}

function parseField(value: string, field: string): Address {
  let address: Address;
  try {
    address = parseAddress(value);
  } catch (err) {
    if (isAddressError(err, 'AM_ADDRESS_INVALID'))
      throw new GatewayError('BAD_REQUEST', `field "${field}": ${(err as Error).message}`, {
        suggestion: 'write name, name@/absolute/path. or name@/absolute/path.session',
        extra: { field },
      });
    throw err;
  }
  // One directory, one spelling: `/x/../y`, `//x` or `/x/` would make a second default session.
  if (!isNormalizedPath(address.path)) {
    const normal = formatAddress({ ...address, path: normalizeAbsolutePath(address.path) });
    throw new GatewayError(
      'BAD_REQUEST',
      `field "${field}": address ${JSON.stringify(value)}: the path ${JSON.stringify(address.path)} is not normalised`,
      {
        detail: 'a path has no ".", ".." or empty segments and no trailing "/" (SPEC G-3)',
        suggestion: `write ${normal}`,
        extra: { field, normalized_address: normal },
      },
    );
  }
  return address;
}

async function lookupRecipient(
  db: Db,
  address: Address,
  field: string,
  role: 'to' | 'cc',
): Promise<Recipient> {
  const user = await db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('name', '=', address.name)
    .executeTakeFirst();
  if (user) return { name: user.name, human: true, userId: user.id, role, address, field };
  const agent = await db
    .selectFrom('agents')
    .select('name')
    .where('name', '=', address.name)
    .executeTakeFirst();
  if (agent) return { name: agent.name, human: false, userId: null, role, address, field };
  // A key issued for the name whose bridge never registered: say so (one indexed lookup, on the
  // refusal path only), so the sender starts the bridge instead of doubting the name (issue 20).
  const keyed = await db
    .selectFrom('agent_keys')
    .select('id')
    .where('agent_name', '=', address.name)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (keyed)
    throw new GatewayError(
      'UNKNOWN_RECIPIENT',
      `field "${field}": the agent "${address.name}" has a key but has not registered yet: its bridge has not run with that key; mail to it works once its bridge has started once`,
      {
        suggestion: `start the bridge of "${address.name}" with its key once, then send again`,
        extra: { field, key_issued: true },
      },
    );
  throw new GatewayError(
    'UNKNOWN_RECIPIENT',
    `field "${field}": no agent or person is named "${address.name}"`,
    {
      suggestion:
        'list contacts (GET /api/v1/agent/contacts) or ask for suggestions (…/contacts/suggest?name=)',
      extra: { field },
    },
  );
}

/**
 * Trailing run of relay mails in a session, newest first, stopping at the first hand-written or
 * human mail; question mails are skipped (SPEC G-33).
 */
export async function trailingRelayRun(db: Db, sessionId: string, stopAt: number): Promise<number> {
  const a = await db.selectFrom('mails').select('id').where('session_id', '=', sessionId).execute();
  const b = await db.selectFrom('deliveries').select('mail_id').where('session_id', '=', sessionId).execute();
  const ids = [...new Set([...a.map((r) => r.id), ...b.map((r) => r.mail_id)])].sort().reverse();
  let run = 0;
  for (let i = 0; i < ids.length && run < stopAt; i += 50) {
    const chunk = ids.slice(i, i + 50);
    const rows = await db
      .selectFrom('mails')
      .select(['id', 'relay', 'kind', 'from_human'])
      .where('id', 'in', chunk)
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of chunk) {
      const m = byId.get(id);
      if (!m || m.kind === PERMISSION_KIND) continue;
      if (m.relay === null || m.from_human === 1) return run;
      run++;
      if (run >= stopAt) return run;
    }
  }
  return run;
}

/** Attachment ids the actor may attach: its own uploads or attachments of mails it can see. */
async function checkAttachments(db: Db, actor: Actor, ids: readonly string[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    const visible = await canSeeAttachment(db, actor, id);
    if (!visible)
      throw new GatewayError(
        'UNKNOWN_ATTACHMENT',
        `field "attachment_ids[${i}]": no attachment "${id}" you can use`,
        {
          detail: 'every attachment id is checked before the mail is created (SPEC G-35)',
          suggestion: 'upload the file first (POST /api/v1/attachments) and pass the returned id',
          extra: { field: `attachment_ids[${i}]` },
        },
      );
  }
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
 * Send a mail. Everything happens in one transaction; events are published after the commit.
 * An agent writes from `from_session_id` when given (its from address, round budget, hop-limit
 * run and the thread all use that session), else from its session of `reply_to`, else from its
 * default session.
 *
 * @returns `{status: 'sent', …}` or `{status: 'duplicate_relay', mail_id}` (SPEC G-32)
 * @throws GatewayError `AM_GW_BAD_REQUEST` (bad address, relay key too long, person to person),
 *   `AM_GW_UNKNOWN_RECIPIENT` / `AM_GW_UNKNOWN_ALIAS` / `AM_GW_UNKNOWN_ATTACHMENT` /
 *   `AM_GW_NOT_FOUND` (404, also an unknown `from_session_id`), `AM_GW_FORBIDDEN` (403,
 *   `from_session_id` of another agent), `AM_GW_BUDGET_EXHAUSTED` / `AM_GW_HOP_LIMIT` (409),
 *   `AM_GW_SESSION_RATE_LIMIT` (429)
 */
export async function sendMail(ctx: GatewayContext, actor: Actor, input: SendInput): Promise<SendResult> {
  // Every subject stored, from a person, an agent, a relay or a forward, holds no control
  // character; a send without one gets the one rule's subject (from the body's first line), so the
  // CLI, the web, the agents and every "Re:" show the same.
  input = { ...input, subject: subjectForSend(input.subject, input.body, ctx.config.locale) };
  if (input.relay_key !== undefined && Buffer.byteLength(input.relay_key, 'utf8') > RELAY_KEY_MAX_BYTES)
    throw new GatewayError('BAD_REQUEST', `field "relay_key": longer than ${RELAY_KEY_MAX_BYTES} bytes`, {
      suggestion: 'clamp the key with clampRelayKey() of @agentmail/shared-policy (SPEC G-32)',
      extra: { field: 'relay_key' },
    });
  const batch: EventBatch = [];
  let result: SendResult;
  try {
    result = await ctx.db.transaction().execute((trx) => sendInTransaction(ctx, trx, actor, input, batch));
  } catch (err) {
    // Two sends with one relay key raced past the duplicate check: the unique constraint decided.
    if (input.relay_key !== undefined && isUniqueViolation(err, 'relay_key')) {
      const prior = await ctx.db
        .selectFrom('mails')
        .select('id')
        .where('from_name', '=', actor.name)
        .where('relay_key', '=', input.relay_key)
        .executeTakeFirst();
      if (prior) return { status: 'duplicate_relay', mail_id: prior.id };
    }
    throw err;
  }
  ctx.hub.publish(batch);
  return result;
}

async function sendInTransaction(
  ctx: GatewayContext,
  trx: Db,
  actor: Actor,
  input: SendInput,
  batch: EventBatch,
): Promise<SendResult> {
  const now = ctx.config.clock();
  const isPerson = actor.kind === 'user';
  // G-32: a relay key already used by this sender → the earlier mail, nothing new.
  if (input.relay_key !== undefined) {
    const prior = await trx
      .selectFrom('mails')
      .select('id')
      .where('from_name', '=', actor.name)
      .where('relay_key', '=', input.relay_key)
      .executeTakeFirst();
    if (prior) return { status: 'duplicate_relay', mail_id: prior.id };
  }
  // G-35: check every attachment before anything is created.
  const requestedAttachments = input.trustedAttachmentIds ?? input.attachment_ids ?? [];
  if (input.trustedAttachmentIds === undefined) await checkAttachments(trx, actor, requestedAttachments);
  // The same id twice attaches the file once, in the place it was first named.
  const attachmentIds = [...new Set(requestedAttachments)];

  const parent = input.reply_to !== undefined ? await mailRow(trx, input.reply_to) : undefined;
  const parentSessionForActor = parent ? actorSessionFor(actor, parent.mail, parent.deliveries) : undefined;
  if (input.reply_to !== undefined && (parent === undefined || parentSessionForActor === undefined))
    throw new GatewayError('NOT_FOUND', `field "reply_to": mail "${input.reply_to}" not found`, {
      suggestion: 'reply to a mail from your inbox or thread',
      extra: { field: 'reply_to' },
    });

  // Recipients, deduplicated by name (to before cc).
  const recipients: Recipient[] = [];
  const seen = new Set<string>();
  const add = async (value: string, field: string, role: 'to' | 'cc') => {
    const address = parseField(value, field);
    const r = await lookupRecipient(trx, address, field, role);
    const k = `${r.human ? 'u' : 'a'}:${r.name}`;
    if (seen.has(k)) return;
    seen.add(k);
    recipients.push(r);
  };
  await add(input.to, 'to', 'to');
  for (const [i, cc] of (input.cc ?? []).entries()) await add(cc, `cc[${i}]`, 'cc');

  // The sender's session (agents): the one it names, else the session it has for the parent,
  // else its default one.
  const parentSessions = parent
    ? await sessionsById(trx, [parent.mail.session_id, ...parent.deliveries.map((d) => d.session_id)])
    : new Map<string, SessionRow>();
  let senderSession: SessionRow | undefined;
  let ownerUserId: string | null = isPerson ? actor.id : null;
  let inheritedMode: PermissionMode | undefined = input.permission_mode;
  const baseSeed = (): NewSessionSeed => ({
    subject: input.subject,
    requestedAlias: input.session_alias,
    ownerUserId,
    permissionMode: inheritedMode ?? 'workspace',
    maxRounds: input.max_rounds ?? ctx.config.defaultMaxRounds,
  });
  if (!isPerson) {
    if (input.from_session_id !== undefined)
      senderSession = await ownSession(trx, actor.name, input.from_session_id);
    else if (parentSessionForActor !== undefined) senderSession = parentSessions.get(parentSessionForActor);
    // `alice@.pi-fix-x`: a person's address names the session of the sender it belongs to (G-6).
    const personInSession = recipients.find((r) => r.human && r.address.session !== '');
    if (!senderSession && personInSession) {
      const alias = personInSession.address.session;
      senderSession = await trx
        .selectFrom('sessions')
        .selectAll()
        .where('agent_name', '=', actor.name)
        .where('alias', '=', alias)
        .executeTakeFirst();
      if (!senderSession)
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
    if (!senderSession) senderSession = (await defaultSession(ctx, trx, actor.name, '', baseSeed())).session;
    ownerUserId = senderSession.owner_user_id;
    const m = senderSession.permission_mode;
    inheritedMode ??= m === 'plan' || m === 'full' ? m : 'workspace';
  }

  // Each agent recipient's session: the one it had for the parent when the address names no
  // session, else what the address says (default / new / alias, G-2).
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
    const resolved = await resolveAgentSession(ctx, trx, r.name, a.path, a.session, baseSeed());
    r.session = resolved.session;
    r.existingSession = !resolved.created;
  }
  if (input.permission_mode !== undefined)
    await applyMode(ctx, trx, actor, recipients, input.permission_mode);

  // The session the mail is written in: the sender's; for a person, the first agent's session
  // or, in a reply, the person's session of the parent.
  let threadSession: SessionRow | undefined = senderSession;
  if (!threadSession) threadSession = recipients.find((r) => r.session)?.session;
  if (!threadSession && parentSessionForActor !== undefined)
    threadSession = parentSessions.get(parentSessionForActor);
  if (!threadSession)
    throw new GatewayError(
      'BAD_REQUEST',
      'field "to": people write to agents; a mail between people needs an agent session',
      {
        suggestion: 'address an agent, or reply to a mail of an agent session',
        extra: { field: 'to' },
      },
    );
  for (const r of recipients) if (r.human) r.session = threadSession;

  const agentRecipients = recipients.filter((r) => !r.human);
  const allHuman = agentRecipients.length === 0;

  if (!isPerson && senderSession) {
    // G-33: a relay into agents is refused at the session's hop limit.
    if (input.relay !== undefined && !allHuman) {
      const run = await trailingRelayRun(trx, senderSession.id, senderSession.hop_limit);
      if (run >= senderSession.hop_limit)
        throw new GatewayError(
          'HOP_LIMIT',
          `hop limit reached: ${run} relays in a row in session "${senderSession.alias ?? senderSession.id}"`,
          {
            detail: `the session allows ${senderSession.hop_limit} consecutive relays between agents (SPEC G-33)`,
            suggestion: 'send a hand-written mail or ask a person; relays to people are still allowed',
            extra: { hop_limit: senderSession.hop_limit },
          },
        );
    }
    // G-31: relaying a summary to people is free; everything else spends a round.
    const free = input.relay === 'summary' && allHuman;
    if (!free) {
      const fresh = await trx
        .selectFrom('sessions')
        .select(['rounds_used', 'max_rounds'])
        .where('id', '=', senderSession.id)
        .executeTakeFirstOrThrow();
      if (fresh.rounds_used >= fresh.max_rounds)
        throw new GatewayError(
          'BUDGET_EXHAUSTED',
          `the round budget of session "${senderSession.alias ?? senderSession.id}" is spent (${fresh.rounds_used}/${fresh.max_rounds})`,
          {
            detail:
              'every send but a relay to a person spends one round (SPEC G-31); the relay key was not kept',
            suggestion: 'finish and report to the person; a mail from a person refills the budget',
            extra: { rounds_used: fresh.rounds_used, max_rounds: fresh.max_rounds },
          },
        );
      await trx
        .updateTable('sessions')
        .set((eb) => ({ rounds_used: eb('rounds_used', '+', 1), updated_at: now }))
        .where('id', '=', senderSession.id)
        .execute();
      senderSession.rounds_used = fresh.rounds_used + 1;
      senderSession.max_rounds = fresh.max_rounds;
    }
  }
  if (isPerson) {
    // A person's mail refills the budget of the sessions it reaches.
    const ids = agentRecipients.map((r) => r.session?.id).filter((x): x is string => x !== undefined);
    if (ids.length)
      await trx
        .updateTable('sessions')
        .set({ rounds_used: 0, updated_at: now })
        .where('id', 'in', ids)
        .execute();
  }

  const mailId = newId('m', now);
  const fromAddress = addressIn(actor.name, isPerson, threadSession);
  await trx
    .insertInto('mails')
    .values({
      id: mailId,
      session_id: threadSession.id,
      from_name: actor.name,
      from_human: isPerson ? 1 : 0,
      from_address: fromAddress,
      subject: input.subject,
      body: input.body,
      to_addresses: JSON.stringify(
        recipients
          .filter((r) => r.role === 'to')
          .map((r) => addressIn(r.name, r.human, r.session ?? threadSession)),
      ),
      cc_addresses: JSON.stringify(
        recipients
          .filter((r) => r.role === 'cc')
          .map((r) => addressIn(r.name, r.human, r.session ?? threadSession)),
      ),
      in_reply_to: parent?.mail.id ?? null,
      relay: input.relay ?? null,
      relay_key: input.relay_key ?? null,
      kind: input.internalKind ?? input.kind ?? 'mail',
      created_at: now,
    })
    .execute();
  for (const r of recipients) {
    const s = r.session ?? threadSession;
    await trx
      .insertInto('deliveries')
      .values({
        mail_id: mailId,
        recipient_name: r.name,
        recipient_human: r.human ? 1 : 0,
        session_id: s.id,
        to_workspace: r.human ? '' : s.path,
        role: r.role,
        read_at: null,
        created_at: now,
      })
      .execute();
  }
  // B-10, G-32: an agent's relay answers the mail it replies to, so that mail is read for the agent
  // in the same transaction: a bridge that crashes after the relay was taken and before its own
  // mark-read finds nothing to run again at catch-up. One conditional statement that nothing
  // reads back (0 rows: already read, by the bridge or a concurrent relay), so it holds with
  // several instances on PostgreSQL.
  if (input.relay === 'summary' && parent !== undefined && !isPerson)
    await trx
      .updateTable('deliveries')
      .set({ read_at: now })
      .where('mail_id', '=', parent.mail.id)
      .where('recipient_name', '=', actor.name)
      .where('recipient_human', '=', 0)
      .where('read_at', 'is', null)
      .execute();
  for (const [position, attachmentId] of attachmentIds.entries()) {
    await trx
      .insertInto('mail_attachments')
      .values({ mail_id: mailId, attachment_id: attachmentId, position })
      .execute();
  }
  await ctx.afterMailCreated?.(mailId);

  // Events, one per recipient (G-6, G-20).
  const enforcement = new Map<string, string | null>();
  for (const r of agentRecipients) {
    if (!enforcement.has(r.name)) {
      const a = await trx
        .selectFrom('agents')
        .select('mode_enforcement')
        .where('name', '=', r.name)
        .executeTakeFirst();
      enforcement.set(r.name, a?.mode_enforcement ?? null);
    }
  }
  for (const r of recipients) {
    const s = r.session ?? threadSession;
    if (r.human) {
      if (!r.userId) continue;
      const payload: PersonNewMailEvent = {
        mail_id: mailId,
        session_id: s.id,
        from_name: actor.name,
        from_human: isPerson,
        subject: input.subject,
        in_reply_to: parent?.mail.id ?? '',
      };
      await ctx.hub.append(trx, batch, userStream(r.userId), 'new_mail', payload);
      continue;
    }
    const mode = s.permission_mode;
    const payload: NewMailEvent = {
      mail_id: mailId,
      session_id: s.id,
      from_name: actor.name,
      from_human: isPerson,
      to_workspace: s.path,
      subject: input.subject,
      in_reply_to: parent?.mail.id ?? '',
      parent_from: parent?.mail.from_name ?? '',
      permission_mode: mode === 'plan' || mode === 'full' ? mode : 'workspace',
      permission_enforcement: enforcement.get(r.name) === 'native' ? 'native' : 'advisory',
      session_alias: s.alias ?? '',
      reply_address: fromAddress,
      self_address: addressIn(r.name, false, s),
      platform_session_id: s.platform_id ?? '',
      kind: input.kind ?? 'mail',
    };
    await ctx.hub.append(trx, batch, agentStream(r.name), 'new_mail', payload);
  }

  const primary = recipients[0];
  const primarySession = primary?.session ?? threadSession;
  const free = isPerson || (input.relay === 'summary' && allHuman);
  // H-3: the sender is told which agents are offline; the mail waits for them (G-39).
  const offline = await offlineAgents(
    trx,
    agentRecipients.map((r) => r.name),
    now,
  );
  const primaryMode = primarySession.permission_mode;
  return {
    status: 'sent',
    mail_id: mailId,
    session_id: primarySession.id,
    session_alias: primarySession.alias ?? '',
    address: primary ? addressIn(primary.name, primary.human, primarySession) : '',
    rounds_left:
      free || !senderSession ? null : Math.max(0, senderSession.max_rounds - senderSession.rounds_used),
    permission_mode: primaryMode === 'plan' || primaryMode === 'full' ? primaryMode : 'workspace',
    ...(offline.length === 0 ? {} : { offline_recipients: offline }),
  };
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
