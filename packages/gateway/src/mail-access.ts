/**
 * Who may see what (the visibility rule, SPEC H-4): a reader sees exactly the mails it sent or
 * that were delivered to it, and the attachments of those mails and its own uploads. Every read
 * path, reply and forward asks here; mail-views.ts shapes what it may see.
 */
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Actor, Db } from './context.js';
import type { Database, DeliveriesTable, MailsTable } from './db/schema.js';

/** A stored mail. */
export type MailRow = Selectable<MailsTable>;
/** A stored delivery (one recipient of a mail). */
export type DeliveryRow = Selectable<DeliveriesTable>;

/** A person reads as a user, everyone else as an agent. */
export function isHumanActor(actor: Actor): boolean {
  return actor.kind === 'user';
}

/** The reader's session for a mail: its delivery's session, or the mail's session for its sender. */
export function readerSessionId(
  actor: Actor,
  mail: MailRow,
  deliveries: readonly DeliveryRow[],
): string | undefined {
  const own = deliveries.find(
    (d) => d.recipient_name === actor.name && (d.recipient_human === 1) === isHumanActor(actor),
  );
  if (own) return own.session_id;
  if (mail.from_name === actor.name && (mail.from_human === 1) === isHumanActor(actor))
    return mail.session_id;
  return undefined;
}

/**
 * The visibility rule, the one place it is decided: a reader sees exactly the mails it sent or
 * that were delivered to it (to or cc). It holds on every read path — one mail, thread, inbox,
 * participants, attachments, reply and forward. A session is no wider than that: a default
 * session (`pi@.`) is shared by everyone who writes to it, so being in a session, or having
 * opened it, never shows the other people's mails in it.
 */
export function canSeeMail(actor: Actor, mail: MailRow, deliveries: readonly DeliveryRow[]): boolean {
  return readerSessionId(actor, mail, deliveries) !== undefined;
}

/**
 * {@link canSeeMail} as a SQL condition on `mails`: sent by the reader, or delivered to it. The
 * queries that list mails or check attachments use this, so the rule is written once.
 */
function mailVisibleTo(eb: ExpressionBuilder<Database, 'mails'>, actor: Actor) {
  const human = isHumanActor(actor) ? 1 : 0;
  return eb.or([
    eb.and([eb('mails.from_name', '=', actor.name), eb('mails.from_human', '=', human)]),
    eb(
      'mails.id',
      'in',
      eb
        .selectFrom('deliveries')
        .select('deliveries.mail_id')
        .where('deliveries.recipient_name', '=', actor.name)
        .where('deliveries.recipient_human', '=', human),
    ),
  ]);
}

/**
 * Ids of the mails of a session the reader can see ({@link canSeeMail}), oldest first: written
 * in the session or delivered into it, and sent by the reader or delivered to it.
 */
export async function visibleSessionMailIds(db: Db, actor: Actor, sessionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mails')
    .select('mails.id')
    .where((eb) =>
      eb.or([
        eb('mails.session_id', '=', sessionId),
        eb(
          'mails.id',
          'in',
          eb
            .selectFrom('deliveries')
            .select('deliveries.mail_id')
            .where('deliveries.session_id', '=', sessionId),
        ),
      ]),
    )
    .where((eb) => mailVisibleTo(eb, actor))
    .orderBy('mails.id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * True when the actor may see (download, attach) an attachment: its own upload, or an attachment
 * of a mail it can see ({@link canSeeMail}: sent by it or delivered to it).
 */
export async function canSeeAttachment(db: Db, actor: Actor, attachmentId: string): Promise<boolean> {
  const human = isHumanActor(actor) ? 1 : 0;
  const a = await db
    .selectFrom('attachments')
    .select(['uploader_name', 'uploader_human'])
    .where('id', '=', attachmentId)
    .executeTakeFirst();
  if (!a) return false;
  if (a.uploader_name === actor.name && a.uploader_human === human) return true;
  const seen = await db
    .selectFrom('mail_attachments')
    .innerJoin('mails', 'mails.id', 'mail_attachments.mail_id')
    .select('mails.id')
    .where('mail_attachments.attachment_id', '=', attachmentId)
    .where((eb) => mailVisibleTo(eb, actor))
    .executeTakeFirst();
  return seen !== undefined;
}

/** Load the rows of one mail (for sends that reference it). */
export async function mailRow(
  db: Db,
  id: string,
): Promise<{ mail: MailRow; deliveries: DeliveryRow[] } | undefined> {
  const mail = await db.selectFrom('mails').selectAll().where('id', '=', id).executeTakeFirst();
  if (!mail) return undefined;
  const deliveries = await db.selectFrom('deliveries').selectAll().where('mail_id', '=', id).execute();
  return { mail, deliveries };
}

/** The session an actor has for a mail (sender or recipient), or undefined when it can not see it. */
export function actorSessionFor(
  actor: Actor,
  mail: MailRow,
  deliveries: readonly DeliveryRow[],
): string | undefined {
  return readerSessionId(actor, mail, deliveries);
}
