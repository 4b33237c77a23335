/**
 * Filing a permission or question request (SPEC G-38, P-9): routed to the session's owner (in a
 * shared default session: the person who last mailed the agent there), else the most recent
 * person in the thread; a question mail in the person's inbox and a `permission_request` event on
 * their stream, in one transaction, deduplicated by the agent's relay key (G-32).
 */
import type { PermissionRequestEvent, PermissionRequestResponse } from '@agentmail/protocol';
import { RELAY_KEY_MAX_BYTES } from '@agentmail/protocol';
import {
  formatText,
  type Locale,
  normalizeSubject,
  type TextKey,
  type TextParams,
} from '@agentmail/shared-policy';
import type { Db, GatewayContext, SessionRow } from './context.js';
import { isUniqueViolation } from './db/database.js';
import { GatewayError } from './errors.js';
import { type EventBatch, userStream } from './event-hub.js';
import { answerAfterRace, type IdempotencyClaim, storeAnswer, storedAnswer } from './idempotency.js';
import { newId } from './ids.js';
import { PERMISSION_KIND } from './mail-views.js';
import { addressIn, sessionById } from './sessions.js';

/** A decoded `POST /permission/request` body. */
export interface PermissionInput {
  question: string;
  options: string[];
  context: string;
  session_id: string;
  relay_key: string;
  kind: 'approval' | 'question';
  multi_select?: boolean | undefined;
}

/**
 * The person a request goes to (SPEC G-38): the session's owner, else the person who most
 * recently wrote to or was written to in the session; undefined when there is none.
 *
 * A default session (`pi@.`, `pi@/path.`) is shared by everyone who mails it, so its stored
 * owner (the first writer) is not the person a turn works for: there the request goes to the
 * person who most recently mailed the agent in that session — turns of a session are serial, so
 * that is the person whose mail the turn handles. `.new` and aliased sessions keep the owner rule.
 */
export async function routePermission(
  db: Db,
  session: SessionRow,
): Promise<{ id: string; name: string } | undefined> {
  if (session.default_key !== null) {
    const latest = await db
      .selectFrom('deliveries')
      .innerJoin('mails', 'mails.id', 'deliveries.mail_id')
      .innerJoin('users', 'users.name', 'mails.from_name')
      .select(['users.id', 'users.name'])
      .where('deliveries.recipient_name', '=', session.agent_name)
      .where('deliveries.recipient_human', '=', 0)
      .where('deliveries.session_id', '=', session.id)
      .where('mails.from_human', '=', 1)
      .orderBy('mails.id', 'desc')
      .executeTakeFirst();
    if (latest) return latest;
  } else if (session.owner_user_id !== null) {
    const owner = await db
      .selectFrom('users')
      .select(['id', 'name'])
      .where('id', '=', session.owner_user_id)
      .executeTakeFirst();
    if (owner) return owner;
  }
  const sent = await db
    .selectFrom('mails')
    .innerJoin('users', 'users.name', 'mails.from_name')
    .select(['users.id', 'users.name', 'mails.id as mail_id'])
    .where('mails.from_human', '=', 1)
    .where((eb) =>
      eb.or([
        eb('mails.session_id', '=', session.id),
        eb.exists(
          eb
            .selectFrom('deliveries')
            .select('deliveries.mail_id')
            .whereRef('deliveries.mail_id', '=', 'mails.id')
            .where('deliveries.session_id', '=', session.id),
        ),
      ]),
    )
    .orderBy('mails.id', 'desc')
    .executeTakeFirst();
  const received = await db
    .selectFrom('deliveries')
    .innerJoin('users', 'users.name', 'deliveries.recipient_name')
    .select(['users.id', 'users.name', 'deliveries.mail_id'])
    .where('deliveries.recipient_human', '=', 1)
    .where('deliveries.session_id', '=', session.id)
    .orderBy('deliveries.mail_id', 'desc')
    .executeTakeFirst();
  const best = [sent, received]
    .filter((x): x is { id: string; name: string; mail_id: string } => x !== undefined)
    .sort((a, b) => (a.mail_id < b.mail_id ? 1 : -1))[0];
  return best ? { id: best.id, name: best.name } : undefined;
}

/** Subject of the question mail to the person (text catalogue `gateway.permission.subject.*`). */
function questionSubject(agent: string, input: PermissionInput, locale: Locale): string {
  const question = input.question.split('\n')[0]?.slice(0, 120) ?? '';
  return normalizeSubject(
    formatText(`gateway.permission.subject.${input.kind}`, { agent, question }, locale),
  );
}

/** Body of the question mail: the question, the options, the context and how to answer. */
function questionBody(agent: string, requestId: string, input: PermissionInput, locale: Locale): string {
  const t = (key: TextKey, params: TextParams = {}) => formatText(key, params, locale);
  const lines = [input.question, ''];
  if (input.options.length) {
    lines.push(
      t(
        input.kind === 'approval'
          ? 'gateway.permission.body.approval_options'
          : input.multi_select
            ? 'gateway.permission.body.options_several'
            : 'gateway.permission.body.options',
      ),
    );
    for (const o of input.options) lines.push(`- ${o}`);
  } else lines.push(t('gateway.permission.body.free_text'));
  if (input.context.trim() !== '') lines.push('', t('gateway.permission.body.context'), input.context);
  lines.push(
    '',
    t(
      input.kind === 'approval'
        ? 'gateway.permission.body.how_approval'
        : 'gateway.permission.body.how_question',
      { agent, request_id: requestId },
    ),
  );
  return lines.join('\n');
}

/**
 * File a permission or question request.
 * @throws GatewayError `AM_GW_NOT_FOUND` (unknown session or not the agent's), `AM_GW_BAD_REQUEST`
 *   (relay key too long), `AM_GW_NO_PERSON_REACHABLE` (409, with `permission_mode`)
 */
export async function requestPermission(
  ctx: GatewayContext,
  agentName: string,
  input: PermissionInput,
  claim?: IdempotencyClaim,
): Promise<PermissionRequestResponse> {
  if (Buffer.byteLength(input.relay_key, 'utf8') > RELAY_KEY_MAX_BYTES)
    throw new GatewayError('BAD_REQUEST', `field "relay_key": longer than ${RELAY_KEY_MAX_BYTES} bytes`, {
      suggestion: 'clamp the key with clampRelayKey() of @agentmail/shared-policy (SPEC G-32)',
      extra: { field: 'relay_key' },
    });
  const batch: EventBatch = [];
  try {
    const result = await ctx.db.transaction().execute(async (trx) => {
      // G-41: a repeat of a stored request answers the first answer and files nothing.
      const now = ctx.config.clock();
      const stored = claim && (await storedAnswer<PermissionRequestResponse>(trx, claim, now));
      if (stored) return stored;
      const filed = await fileRequest(ctx, trx, batch, agentName, input);
      if (claim) await storeAnswer(trx, claim, filed, now);
      return filed;
    });
    ctx.hub.publish(batch);
    return result;
  } catch (err) {
    const first = await answerAfterRace<PermissionRequestResponse>(ctx.db, claim, err, ctx.config.clock());
    if (first) return first;
    // Two requests with one relay key raced past the duplicate check: the unique constraint decided.
    if (isUniqueViolation(err, 'relay_key')) {
      const prior = await priorRequest(ctx.db, agentName, input.relay_key);
      if (prior) return { status: 'duplicate_relay', request_id: prior };
    }
    throw err;
  }
}

/** The request this agent already filed with the relay key, if any (G-32). */
async function priorRequest(db: Db, agentName: string, relayKey: string): Promise<string | undefined> {
  const prior = await db
    .selectFrom('permissions')
    .select('id')
    .where('agent_name', '=', agentName)
    .where('relay_key', '=', relayKey)
    .executeTakeFirst();
  return prior?.id;
}

/** The request's steps in its transaction: dedupe, session, person, question mail, row, events. */
async function fileRequest(
  ctx: GatewayContext,
  trx: Db,
  batch: EventBatch,
  agentName: string,
  input: PermissionInput,
): Promise<PermissionRequestResponse> {
  const prior = await priorRequest(trx, agentName, input.relay_key);
  if (prior) return { status: 'duplicate_relay', request_id: prior };
  const session = await askingSession(trx, agentName, input.session_id);
  const person = await personToAsk(trx, session);
  const now = ctx.config.clock();
  const mailId = newId('m', now);
  // The request id is known before the mail so the mail can say how to answer it.
  const id = newId('p', now);
  const subject = questionSubject(agentName, input, ctx.config.locale);
  const body = questionBody(agentName, id, input, ctx.config.locale);
  await insertQuestionMail(trx, { mailId, now, agentName, session, person, subject, body });
  await trx
    .insertInto('permissions')
    .values({
      id,
      agent_name: agentName,
      session_id: session.id,
      relay_key: input.relay_key,
      kind: input.kind,
      question: input.question,
      options: JSON.stringify(input.options),
      multi_select: input.multi_select ? 1 : 0,
      context: input.context,
      target_user_id: person.id,
      mail_id: mailId,
      status: 'pending',
      decision: null,
      note: null,
      answers: '[]',
      created_at: now,
      decided_at: null,
    })
    .execute();
  await ctx.hub.append(trx, batch, userStream(person.id), 'new_mail', {
    mail_id: mailId,
    session_id: session.id,
    from_name: agentName,
    from_human: false,
    subject,
    in_reply_to: '',
  });
  const event: PermissionRequestEvent = {
    request_id: id,
    agent_name: agentName,
    session_id: session.id,
    kind: input.kind,
    question: input.question,
    options: input.options,
  };
  await ctx.hub.append(trx, batch, userStream(person.id), 'permission_request', event);
  return { status: 'pending', request_id: id, mail_id: mailId, asked: person.name };
}

/**
 * The session the request is asked in: one of the agent's own.
 * @throws GatewayError `AM_GW_NOT_FOUND` naming the field
 */
async function askingSession(trx: Db, agentName: string, sessionId: string): Promise<SessionRow> {
  const session = await sessionById(trx, sessionId);
  if (!session || session.agent_name !== agentName)
    throw new GatewayError(
      'NOT_FOUND',
      `field "session_id": agent "${agentName}" has no session "${sessionId}"`,
      {
        suggestion: 'pass the session_id of the new_mail event being worked on',
        extra: { field: 'session_id' },
      },
    );
  return session;
}

/**
 * The person who answers (G-38).
 * @throws GatewayError `AM_GW_NO_PERSON_REACHABLE` (409) with what to do in the session's mode
 */
async function personToAsk(trx: Db, session: SessionRow): Promise<{ id: string; name: string }> {
  const person = await routePermission(trx, session);
  if (!person)
    throw new GatewayError(
      'NO_PERSON_REACHABLE',
      `no person can answer for session "${session.alias ?? session.id}"`,
      {
        detail: 'the session has no owner and no person wrote in its thread (SPEC G-38)',
        suggestion:
          session.permission_mode === 'full'
            ? 'the session is in full mode: proceed without asking'
            : 'deny the tool call and explain in the reply what needed approval',
        extra: { permission_mode: session.permission_mode },
      },
    );
  return person;
}

/** The question mail in the person's inbox: from the agent's session address, to the person. */
async function insertQuestionMail(
  trx: Db,
  q: {
    mailId: string;
    now: number;
    agentName: string;
    session: SessionRow;
    person: { name: string };
    subject: string;
    body: string;
  },
): Promise<void> {
  await trx
    .insertInto('mails')
    .values({
      id: q.mailId,
      session_id: q.session.id,
      from_name: q.agentName,
      from_human: 0,
      from_address: addressIn(q.agentName, false, q.session),
      subject: q.subject,
      body: q.body,
      to_addresses: JSON.stringify([addressIn(q.person.name, true, q.session)]),
      cc_addresses: '[]',
      in_reply_to: null,
      relay: null,
      relay_key: null,
      kind: PERMISSION_KIND,
      created_at: q.now,
    })
    .execute();
  await trx
    .insertInto('deliveries')
    .values({
      mail_id: q.mailId,
      recipient_name: q.person.name,
      recipient_human: 1,
      session_id: q.session.id,
      to_workspace: '',
      role: 'to',
      read_at: null,
      created_at: q.now,
    })
    .execute();
}
