/**
 * Storing a send (SPEC G-35, B-10): the mail row with its from/to/cc addresses, one delivery per
 * recipient, a relay's parent marked read for the relaying agent, and the attachment links.
 */
import type { Db, GatewayContext } from './context.js';
import { newId } from './ids.js';
import type { ResolvedSend } from './mail-send-types.js';
import { addressIn } from './sessions.js';

/** A stored mail: its id and the address it is from (recipients reply there). */
export interface StoredMail {
  mailId: string;
  fromAddress: string;
}

/**
 * Insert the mail, its deliveries and attachment links, then run `ctx.afterMailCreated`.
 * @param attachmentIds - checked and deduplicated, in the order they were first named
 */
export async function storeMail(
  ctx: GatewayContext,
  trx: Db,
  send: ResolvedSend,
  attachmentIds: readonly string[],
): Promise<StoredMail> {
  const { actor, input, now, parent, recipients } = send;
  const thread = send.sessions.thread;
  const isPerson = actor.kind === 'user';
  const mailId = newId('m', now);
  const fromAddress = addressIn(actor.name, isPerson, thread);
  const addressesOf = (role: 'to' | 'cc') =>
    JSON.stringify(
      recipients.filter((r) => r.role === role).map((r) => addressIn(r.name, r.human, r.session ?? thread)),
    );
  await trx
    .insertInto('mails')
    .values({
      id: mailId,
      session_id: thread.id,
      from_name: actor.name,
      from_human: isPerson ? 1 : 0,
      from_address: fromAddress,
      subject: input.subject,
      body: input.body,
      to_addresses: addressesOf('to'),
      cc_addresses: addressesOf('cc'),
      in_reply_to: parent?.mail.id ?? null,
      relay: input.relay ?? null,
      relay_key: input.relay_key ?? null,
      kind: input.internalKind ?? input.kind ?? 'mail',
      created_at: now,
    })
    .execute();
  for (const r of recipients) {
    const s = r.session ?? thread;
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
  if (input.relay === 'summary' && parent !== undefined && !isPerson)
    await markParentRead(trx, parent.mail.id, actor.name, now);
  for (const [position, attachmentId] of attachmentIds.entries()) {
    await trx
      .insertInto('mail_attachments')
      .values({ mail_id: mailId, attachment_id: attachmentId, position })
      .execute();
  }
  await ctx.afterMailCreated?.(mailId);
  return { mailId, fromAddress };
}

/**
 * B-10, G-32: an agent's relay answers the mail it replies to, so that mail is read for the agent
 * in the same transaction: a bridge that crashes after the relay was taken and before its own
 * mark-read finds nothing to run again at catch-up. One conditional statement that nothing
 * reads back (0 rows: already read, by the bridge or a concurrent relay), so it holds with
 * several instances on PostgreSQL.
 */
async function markParentRead(trx: Db, parentId: string, agentName: string, now: number): Promise<void> {
  await trx
    .updateTable('deliveries')
    .set({ read_at: now })
    .where('mail_id', '=', parentId)
    .where('recipient_name', '=', agentName)
    .where('recipient_human', '=', 0)
    .where('read_at', 'is', null)
    .execute();
}
