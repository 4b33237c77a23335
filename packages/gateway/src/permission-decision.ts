/**
 * The end of a permission or question request (SPEC G-21, G-38, P-6, P-7): a person's
 * decision goes to every stream of the asking agent as `permission_decision`, with the note and
 * the mails that arrived meanwhile; a request whose call stopped waiting is withdrawn, and the
 * pending requests of a restarted bridge expire.
 */
import type {
  DecideRequest,
  FreshMail,
  PermissionDecisionEvent,
  PermissionStatus,
  PermissionWithdrawnEvent,
  WithdrawReason,
} from '@agentmail/protocol';
import type { Actor, Db, GatewayContext } from './context.js';
import { GatewayError } from './errors.js';
import { agentStream, type EventBatch, userStream } from './event-hub.js';
import { canSeeMail } from './mail-access.js';
import { PERMISSION_KIND, permissionStatusOf } from './mail-views.js';
import type { PermissionRow } from './permissions.js';

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

/** The refusal for deciding a request that no longer waits (decided, withdrawn or expired). */
function notPending(id: string, row: PermissionRow): GatewayError {
  if (row.status === 'withdrawn' || row.status === 'expired')
    return new GatewayError(
      'NO_LONGER_WAITING',
      `permission request "${id}" is no longer waiting: ${row.status === 'expired' ? 'its bridge started again' : 'the asking call stopped waiting'}`,
      {
        detail: 'deciding it now changes nothing; the agent asks again if it still needs the answer',
        suggestion: 'look for a newer request from the same agent',
        extra: { status: row.status },
      },
    );
  return new GatewayError(
    'ALREADY_DECIDED',
    `permission request "${id}" was already decided (${row.decision ?? ''})`,
    {
      suggestion: 'ask the agent to file a new request if the situation changed',
    },
  );
}

/**
 * Decide a request: store the decision and note, mark the question mail read, and deliver
 * `permission_decision` to every stream of the asking agent (and the person's own stream).
 * The write is conditional on the request still pending, so of concurrent decisions (on one or
 * several Gateways) exactly one is stored and delivered.
 * @throws GatewayError `AM_GW_NOT_FOUND` (not addressed to this person), `AM_GW_ALREADY_DECIDED`
 *   (409), `AM_GW_NO_LONGER_WAITING` (withdrawn or expired), `AM_GW_BAD_REQUEST` (approval words for a question or answers for an approval)
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
    if (row.status !== 'pending') throw notPending(id, row);
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
    // The note is stored before anyone is woken (SPEC P-6). Conditional: of two deciders (two
    // Gateways, or a withdrawal) racing past the read above, one writes; the other is told why.
    const decided = await trx
      .updateTable('permissions')
      .set({ status: 'decided', decision: wire, note, answers: JSON.stringify(answers), decided_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .returning('id')
      .executeTakeFirst();
    if (!decided) {
      const current = await trx
        .selectFrom('permissions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      throw notPending(id, current);
    }
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
 * so a web page drops them at once and a late answer gets "no longer waiting". Answers how many
 * it ended (a row decided meanwhile is left as it is).
 */
async function endRequests(
  trx: Db,
  batch: EventBatch,
  ctx: GatewayContext,
  rows: readonly PermissionRow[],
  status: 'withdrawn' | 'expired',
  reason: string,
): Promise<number> {
  const now = ctx.config.clock();
  let ended = 0;
  for (const row of rows) {
    const r = await trx
      .updateTable('permissions')
      // Why it ended, kept for the person (`PermissionView.decision`): timeout, aborted, shutdown, restart.
      .set({ status, decided_at: now, decision: reason })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) continue; // decided meanwhile
    ended++;
    await markQuestionMailRead(trx, row.mail_id, now);
    const event: PermissionWithdrawnEvent = {
      request_id: row.id,
      session_id: row.session_id,
      status,
      reason,
    };
    await ctx.hub.append(trx, batch, userStream(row.target_user_id), 'permission_withdrawn', event);
  }
  return ended;
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
    return endRequests(trx, batch, ctx, rows, 'expired', 'restart');
  });
  ctx.hub.publish(batch);
  return count;
}
