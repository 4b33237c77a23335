/**
 * Permission and question requests (SPEC G-38, G-21, P-9): routed to the session's owner (in a
 * shared default session: the person who last mailed the agent there), else the most recent
 * person in the thread; a question mail in the person's inbox and a
 * `permission_request` event on their stream; the decision goes to every stream of the asking
 * agent as `permission_decision` with the note and the mails that arrived meanwhile.
 */
import type {
  DecideRequest,
  FreshMail,
  PermissionDecisionEvent,
  PermissionRequestEvent,
  PermissionRequestResponse,
  PermissionStatus,
  PermissionView,
  PermissionWithdrawnEvent,
  WithdrawReason,
} from '@agentmail/protocol';
import { RELAY_KEY_MAX_BYTES } from '@agentmail/protocol';
import {
  formatText,
  type Locale,
  normalizeSubject,
  type TextKey,
  type TextParams,
} from '@agentmail/shared-policy';
import type { Selectable } from 'kysely';
import type { Actor, Db, GatewayContext, SessionRow } from './context.js';
import { iso } from './context.js';
import { isUniqueViolation } from './db/database.js';
import type { PermissionsTable } from './db/schema.js';
import { GatewayError } from './errors.js';
import { agentStream, type EventBatch, userStream } from './event-hub.js';
import { newId } from './ids.js';
import { canSeeMail, PERMISSION_KIND, permissionStatusOf } from './mail-views.js';
import { addressIn, sessionById } from './sessions.js';

type PermissionRow = Selectable<PermissionsTable>;

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
): Promise<PermissionRequestResponse> {
  if (Buffer.byteLength(input.relay_key, 'utf8') > RELAY_KEY_MAX_BYTES)
    throw new GatewayError('BAD_REQUEST', `field "relay_key": longer than ${RELAY_KEY_MAX_BYTES} bytes`, {
      suggestion: 'clamp the key with clampRelayKey() of @agentmail/shared-policy (SPEC G-32)',
      extra: { field: 'relay_key' },
    });
  const batch: EventBatch = [];
  try {
    const result = await ctx.db.transaction().execute(async (trx) => {
      const prior = await trx
        .selectFrom('permissions')
        .select('id')
        .where('agent_name', '=', agentName)
        .where('relay_key', '=', input.relay_key)
        .executeTakeFirst();
      if (prior) return { status: 'duplicate_relay' as const, request_id: prior.id };
      const session = await sessionById(trx, input.session_id);
      if (!session || session.agent_name !== agentName)
        throw new GatewayError(
          'NOT_FOUND',
          `field "session_id": agent "${agentName}" has no session "${input.session_id}"`,
          {
            suggestion: 'pass the session_id of the new_mail event being worked on',
            extra: { field: 'session_id' },
          },
        );
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
      const now = ctx.config.clock();
      const mailId = newId('m', now);
      // The request id is known before the mail so the mail can say how to answer it.
      const id = newId('p', now);
      const subject = questionSubject(agentName, input, ctx.config.locale);
      await trx
        .insertInto('mails')
        .values({
          id: mailId,
          session_id: session.id,
          from_name: agentName,
          from_human: 0,
          from_address: addressIn(agentName, false, session),
          subject,
          body: questionBody(agentName, id, input, ctx.config.locale),
          to_addresses: JSON.stringify([addressIn(person.name, true, session)]),
          cc_addresses: '[]',
          in_reply_to: null,
          relay: null,
          relay_key: null,
          kind: PERMISSION_KIND,
          created_at: now,
        })
        .execute();
      await trx
        .insertInto('deliveries')
        .values({
          mail_id: mailId,
          recipient_name: person.name,
          recipient_human: 1,
          session_id: session.id,
          to_workspace: '',
          role: 'to',
          read_at: null,
          created_at: now,
        })
        .execute();
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
      return { status: 'pending' as const, request_id: id, mail_id: mailId, asked: person.name };
    });
    ctx.hub.publish(batch);
    return result;
  } catch (err) {
    if (isUniqueViolation(err, 'relay_key')) {
      const prior = await ctx.db
        .selectFrom('permissions')
        .select('id')
        .where('agent_name', '=', agentName)
        .where('relay_key', '=', input.relay_key)
        .executeTakeFirst();
      if (prior) return { status: 'duplicate_relay', request_id: prior.id };
    }
    throw err;
  }
}

function parseOptions(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** A request as the person sees it. */
export function permissionView(row: PermissionRow, sessionAlias: string): PermissionView {
  return {
    id: row.id,
    agent_name: row.agent_name,
    session_id: row.session_id,
    session_alias: sessionAlias,
    kind: row.kind === 'question' ? 'question' : 'approval',
    question: row.question,
    options: parseOptions(row.options),
    multi_select: row.multi_select === 1,
    context: row.context,
    status: permissionStatusOf(row.status),
    decision: row.decision,
    answers: parseOptions(row.answers),
    note: row.note ?? '',
    mail_id: row.mail_id,
    created_at: iso(Number(row.created_at)),
    decided_at: row.decided_at === null ? null : iso(Number(row.decided_at)),
  };
}

/** The requests addressed to a person, newest first. */
export async function listPermissions(
  db: Db,
  userId: string,
  status: 'pending' | 'all',
): Promise<PermissionView[]> {
  let q = db
    .selectFrom('permissions')
    .innerJoin('sessions', 'sessions.id', 'permissions.session_id')
    .selectAll('permissions')
    .select('sessions.alias as session_alias')
    .where('permissions.target_user_id', '=', userId);
  if (status === 'pending') q = q.where('permissions.status', '=', 'pending');
  const rows = await q.orderBy('permissions.id', 'desc').execute();
  return rows.map((r) => permissionView(r, r.session_alias ?? ''));
}

/**
 * Mails that reached the asking session after the request was filed (SPEC G-21, P-6): every
 * delivery to the agent in that session since then, question mails excluded, and only mails the
 * asking agent can see ({@link canSeeMail}) — and, for the decider's copy, the decider too.
 */
async function freshMails(db: Db, row: PermissionRow, viewers: readonly Actor[]): Promise<FreshMail[]> {
  const rows = await db
    .selectFrom('deliveries')
    .innerJoin('mails', 'mails.id', 'deliveries.mail_id')
    .selectAll('mails')
    .distinct()
    .where('deliveries.recipient_name', '=', row.agent_name)
    .where('deliveries.recipient_human', '=', 0)
    .where('deliveries.session_id', '=', row.session_id)
    .where('mails.id', '>', row.mail_id)
    .where('mails.kind', '!=', PERMISSION_KIND)
    .orderBy('mails.id')
    .execute();
  const ids = rows.map((r) => r.id);
  const deliveries = ids.length
    ? await db.selectFrom('deliveries').selectAll().where('mail_id', 'in', ids).execute()
    : [];
  return rows
    .filter((m) => {
      const ds = deliveries.filter((d) => d.mail_id === m.id);
      return viewers.every((v) => canSeeMail(v, m, ds));
    })
    .map((r) => ({
      mail_id: r.id,
      from_name: r.from_name,
      from_human: r.from_human === 1,
      subject: r.subject,
    }));
}

/** The question mail of a request needs no answer any more (decided, withdrawn or expired): mark it read. */
async function markQuestionMailRead(trx: Db, mailId: string, now: number): Promise<void> {
  await trx
    .updateTable('deliveries')
    .set({ read_at: now })
    .where('mail_id', '=', mailId)
    .where('read_at', 'is', null)
    .execute();
}

/**
 * Decide a request: store the decision and note, mark the question mail read, and deliver
 * `permission_decision` to every stream of the asking agent (and the person's own stream).
 * @throws GatewayError `AM_GW_NOT_FOUND` (not addressed to this person), `AM_GW_ALREADY_DECIDED`
 *   (409), `AM_GW_BAD_REQUEST` (approval words for a question or answers for an approval)
 */
export async function decidePermission(
  ctx: GatewayContext,
  user: { id: string; name: string },
  id: string,
  input: DecideRequest,
): Promise<{ decision: string }> {
  const batch: EventBatch = [];
  const decision = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('permissions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || row.target_user_id !== user.id)
      throw new GatewayError('NOT_FOUND', `permission request "${id}" not found`, {
        suggestion: 'list your pending requests: GET /api/v1/me/permissions?status=pending',
      });
    if (row.status === 'withdrawn' || row.status === 'expired')
      throw new GatewayError(
        'NO_LONGER_WAITING',
        `permission request "${id}" is no longer waiting: ${row.status === 'expired' ? 'its bridge started again' : 'the asking call stopped waiting'}`,
        {
          detail: 'deciding it now changes nothing; the agent asks again if it still needs the answer',
          suggestion: 'look for a newer request from the same agent',
          extra: { status: row.status },
        },
      );
    if (row.status !== 'pending')
      throw new GatewayError(
        'ALREADY_DECIDED',
        `permission request "${id}" was already decided (${row.decision ?? ''})`,
        {
          suggestion: 'ask the agent to file a new request if the situation changed',
        },
      );
    let wire: string;
    let answers: string[] = [];
    if (input.answers !== undefined) {
      if (row.kind !== 'question')
        throw new GatewayError(
          'BAD_REQUEST',
          'field "answers": this request is an approval; use "decision"',
          {
            suggestion: 'send {"decision": "approve" | "always" | "deny"}',
            extra: { field: 'answers' },
          },
        );
      wire = 'answered';
      answers = input.answers;
    } else {
      const d = input.decision;
      if (row.kind === 'question' && d !== 'deny')
        throw new GatewayError(
          'BAD_REQUEST',
          `field "decision": a question takes "answers" or "deny", not "${d ?? ''}"`,
          {
            suggestion: 'send {"answers": ["<option label or free text>"]}',
            extra: { field: 'decision' },
          },
        );
      wire = d === 'approve' ? 'approve_once' : d === 'always' ? 'approve_always' : 'deny';
    }
    const note = input.note ?? '';
    const now = ctx.config.clock();
    // The note is stored before anyone is woken (SPEC P-6).
    await trx
      .updateTable('permissions')
      .set({ status: 'decided', decision: wire, note, answers: JSON.stringify(answers), decided_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
    await markQuestionMailRead(trx, row.mail_id, now);
    const asker: Actor = { kind: 'agent', name: row.agent_name };
    const decider: Actor = { kind: 'user', id: user.id, name: user.name };
    const event: PermissionDecisionEvent = {
      relay_key: row.relay_key,
      request_id: row.id,
      session_id: row.session_id,
      decision: wire,
      answers,
      note,
      fresh_mails: await freshMails(trx, row, [asker]),
    };
    await ctx.hub.append(trx, batch, agentStream(row.agent_name), 'permission_decision', event);
    // The decider's copy lists only the fresh mails the decider can see as well (SPEC G-38).
    await ctx.hub.append(trx, batch, userStream(user.id), 'permission_decision', {
      ...event,
      fresh_mails: await freshMails(trx, row, [asker, decider]),
    });
    return wire;
  });
  ctx.hub.publish(batch);
  return { decision };
}

/**
 * End pending requests that nobody waits for any more: mark them `status`, mark their question
 * mails read (nothing to answer), and tell each person on their stream (`permission_withdrawn`),
 * so a web page drops them at once and a late answer gets "no longer waiting".
 */
async function endRequests(
  trx: Db,
  batch: EventBatch,
  ctx: GatewayContext,
  rows: readonly PermissionRow[],
  status: 'withdrawn' | 'expired',
  reason: string,
): Promise<void> {
  const now = ctx.config.clock();
  for (const row of rows) {
    const r = await trx
      .updateTable('permissions')
      .set({ status, decided_at: now })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) continue; // decided meanwhile
    await markQuestionMailRead(trx, row.mail_id, now);
    const event: PermissionWithdrawnEvent = {
      request_id: row.id,
      session_id: row.session_id,
      status,
      reason,
    };
    await ctx.hub.append(trx, batch, userStream(row.target_user_id), 'permission_withdrawn', event);
  }
}

/**
 * Withdraw a request of `agentName` whose call stopped waiting (turn timed out, stopped, bridge
 * shutdown). Idempotent; answers the status afterwards (`decided` when the person was first).
 * @throws GatewayError `AM_GW_NOT_FOUND` (no such request of this agent)
 */
export async function withdrawPermission(
  ctx: GatewayContext,
  agentName: string,
  id: string,
  reason: WithdrawReason,
): Promise<{ id: string; status: PermissionStatus }> {
  const batch: EventBatch = [];
  const status = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('permissions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || row.agent_name !== agentName)
      throw new GatewayError('NOT_FOUND', `agent "${agentName}" has no permission request "${id}"`, {
        suggestion: 'withdraw the request_id that POST /permission/request answered',
      });
    if (row.status === 'pending') await endRequests(trx, batch, ctx, [row], 'withdrawn', reason);
    const after = await trx
      .selectFrom('permissions')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return permissionStatusOf(after.status);
  });
  ctx.hub.publish(batch);
  return { id, status };
}

/**
 * Expire every pending request of `agentName` (its bridge started again: no call of the earlier
 * process waits; one that was killed could not withdraw). Answers how many expired.
 */
export async function expirePendingRequests(ctx: GatewayContext, agentName: string): Promise<number> {
  const batch: EventBatch = [];
  const count = await ctx.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('permissions')
      .selectAll()
      .where('agent_name', '=', agentName)
      .where('status', '=', 'pending')
      .execute();
    await endRequests(trx, batch, ctx, rows, 'expired', 'restart');
    return rows.length;
  });
  ctx.hub.publish(batch);
  return count;
}
