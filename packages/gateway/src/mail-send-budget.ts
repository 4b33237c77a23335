/**
 * What a send costs (SPEC G-31, G-33): an agent's relay into agents is refused at its session's
 * hop limit; every agent send but a summary relay to people spends one round of the sender's
 * session; a person's mail refills the budget of the sessions it reaches.
 */
import type { Actor, Db, SessionRow } from './context.js';
import { GatewayError } from './errors.js';
import type { Recipient, SendInput } from './mail-send-types.js';
import { PERMISSION_KIND } from './mail-views.js';

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

/** A send that spends no round: any mail of a person, and an agent's summary relay to people only (G-31). */
export function isFreeSend(actor: Actor, input: SendInput, recipients: readonly Recipient[]): boolean {
  return actor.kind === 'user' || (input.relay === 'summary' && recipients.every((r) => r.human));
}

/**
 * Charge a send before it is stored: for an agent, the hop limit and one round of its session
 * (the session row is updated in place); for a person, the refill of the agent sessions it
 * reaches.
 * @throws GatewayError `AM_GW_HOP_LIMIT` (409), `AM_GW_BUDGET_EXHAUSTED` (409)
 */
export async function chargeSend(
  trx: Db,
  now: number,
  actor: Actor,
  input: SendInput,
  recipients: readonly Recipient[],
  sender: SessionRow | undefined,
): Promise<void> {
  const agents = recipients.filter((r) => !r.human);
  if (actor.kind === 'user') {
    // A person's mail refills the budget of the sessions it reaches.
    const ids = agents.map((r) => r.session?.id).filter((x): x is string => x !== undefined);
    if (ids.length)
      await trx
        .updateTable('sessions')
        .set({ rounds_used: 0, updated_at: now })
        .where('id', 'in', ids)
        .execute();
    return;
  }
  if (!sender) return;
  // The round first: its guarded update locks the sender's session row until commit, so two sends
  // of one session (on any Gateway of the store) check the hop limit one after the other.
  if (!isFreeSend(actor, input, recipients)) await spendRound(trx, now, sender);
  // G-33: a relay into agents is refused at the session's hop limit.
  if (input.relay !== undefined && agents.length > 0) await checkHopLimit(trx, sender);
}

async function checkHopLimit(trx: Db, session: SessionRow): Promise<void> {
  const run = await trailingRelayRun(trx, session.id, session.hop_limit);
  if (run >= session.hop_limit)
    throw new GatewayError(
      'HOP_LIMIT',
      `hop limit reached: ${run} relays in a row in session "${session.alias ?? session.id}"`,
      {
        detail: `the session allows ${session.hop_limit} consecutive relays between agents (SPEC G-33)`,
        suggestion: 'send a hand-written mail or ask a person; relays to people are still allowed',
        extra: { hop_limit: session.hop_limit },
      },
    );
}

/**
 * Spend one round of the session: one guarded update (`rounds_used < max_rounds`), so concurrent
 * sends never overspend; the row is updated in place.
 * @throws GatewayError `AM_GW_BUDGET_EXHAUSTED` (409)
 */
async function spendRound(trx: Db, now: number, session: SessionRow): Promise<void> {
  const spent = await trx
    .updateTable('sessions')
    .set((eb) => ({ rounds_used: eb('rounds_used', '+', 1), updated_at: now }))
    .where('id', '=', session.id)
    .where((eb) => eb('rounds_used', '<', eb.ref('max_rounds')))
    .returning(['rounds_used', 'max_rounds'])
    .executeTakeFirst();
  if (spent) {
    session.rounds_used = spent.rounds_used;
    session.max_rounds = spent.max_rounds;
    return;
  }
  const fresh = await trx
    .selectFrom('sessions')
    .select(['rounds_used', 'max_rounds'])
    .where('id', '=', session.id)
    .executeTakeFirstOrThrow();
  throw new GatewayError(
    'BUDGET_EXHAUSTED',
    `the round budget of session "${session.alias ?? session.id}" is spent (${fresh.rounds_used}/${fresh.max_rounds})`,
    {
      detail: 'every send but a relay to a person spends one round (SPEC G-31); the relay key was not kept',
      suggestion: 'finish and report to the person; a mail from a person refills the budget',
      extra: { rounds_used: fresh.rounds_used, max_rounds: fresh.max_rounds },
    },
  );
}
