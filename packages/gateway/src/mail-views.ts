/**
 * Read paths: inbox, one mail, thread and participants, always for one reader, with
 * `from_human`/`to_human` from the users table (SPEC G-30), `in_reply_to`/`parent_from` (G-20) and
 * the reader's `reply_address`/`self_address` (G-6).
 */
import type {
  AttachmentInfo,
  InboxResponse,
  Mail,
  MailSummary,
  Participant,
  PermissionMode,
  PermissionStatus,
  SessionParticipant,
  ThreadResponse,
} from '@agentmail/protocol';
import { FAILURE_RELAY_KEY_PREFIX } from '@agentmail/shared-policy';
import type { Actor, Db, SessionRow } from './context.js';
import { iso } from './context.js';
import { GatewayError } from './errors.js';
import {
  type DeliveryRow,
  isHumanActor,
  type MailRow,
  readerSessionId,
  visibleSessionMailIds,
} from './mail-access.js';
import { addressIn, sessionById, sessionsById } from './sessions.js';

/** Length of the inbox snippet, in characters. @default 200 */
export const SNIPPET_LENGTH = 200;

/** Mail kinds stored internally: the wire kinds plus `permission` (question mails, B-20). */
export const PERMISSION_KIND = 'permission';

/** A stored request status as the wire names it; anything unknown reads as `pending` (it was never decided). */
export function permissionStatusOf(status: string): PermissionStatus {
  return status === 'decided' || status === 'withdrawn' || status === 'expired' ? status : 'pending';
}

function permissionModeOf(session: SessionRow): PermissionMode {
  const m = session.permission_mode;
  return m === 'plan' || m === 'full' ? m : 'workspace';
}

interface Loaded {
  mails: MailRow[];
  deliveries: Map<string, DeliveryRow[]>;
  attachments: Map<string, AttachmentInfo[]>;
  sessions: Map<string, SessionRow>;
  parents: Map<string, string>;
  /** The request a permission mail carries, by mail id. */
  requests: Map<string, NonNullable<MailSummary['request']>>;
}

async function load(db: Db, mailIds: readonly string[]): Promise<Loaded> {
  if (mailIds.length === 0)
    return {
      mails: [],
      deliveries: new Map(),
      attachments: new Map(),
      sessions: new Map(),
      parents: new Map(),
      requests: new Map(),
    };
  const mails = await db.selectFrom('mails').selectAll().where('id', 'in', mailIds).orderBy('id').execute();
  const dRows = await db.selectFrom('deliveries').selectAll().where('mail_id', 'in', mailIds).execute();
  const deliveries = new Map<string, DeliveryRow[]>();
  for (const d of dRows) {
    const list = deliveries.get(d.mail_id) ?? [];
    list.push(d);
    deliveries.set(d.mail_id, list);
  }
  for (const list of deliveries.values())
    list.sort((a, b) => (a.role === b.role ? 0 : a.role === 'to' ? -1 : 1));
  const aRows = await db
    .selectFrom('mail_attachments')
    .innerJoin('attachments', 'attachments.id', 'mail_attachments.attachment_id')
    .select([
      'mail_attachments.mail_id',
      'mail_attachments.position',
      'attachments.id',
      'attachments.filename',
      'attachments.content_type',
      'attachments.size_bytes',
      'attachments.sha256',
      'attachments.created_at',
    ])
    .where('mail_attachments.mail_id', 'in', mailIds)
    .orderBy('mail_attachments.position')
    .execute();
  const attachments = new Map<string, AttachmentInfo[]>();
  for (const a of aRows) {
    const list = attachments.get(a.mail_id) ?? [];
    list.push({
      id: a.id,
      filename: a.filename,
      content_type: a.content_type,
      size_bytes: Number(a.size_bytes),
      sha256: a.sha256,
      created_at: iso(Number(a.created_at)),
    });
    attachments.set(a.mail_id, list);
  }
  const sessions = await sessionsById(db, [
    ...mails.map((m) => m.session_id),
    ...dRows.map((d) => d.session_id),
  ]);
  const parentIds = [...new Set(mails.map((m) => m.in_reply_to).filter((x): x is string => x !== null))];
  const parents = new Map<string, string>();
  if (parentIds.length) {
    const rows = await db
      .selectFrom('mails')
      .select(['id', 'from_name'])
      .where('id', 'in', parentIds)
      .execute();
    for (const r of rows) parents.set(r.id, r.from_name);
  }
  const requests = new Map<string, NonNullable<MailSummary['request']>>();
  const permissionMailIds = mails.filter((m) => m.kind === PERMISSION_KIND).map((m) => m.id);
  if (permissionMailIds.length) {
    const rows = await db
      .selectFrom('permissions')
      .select(['mail_id', 'status', 'decision'])
      .where('mail_id', 'in', permissionMailIds)
      .execute();
    for (const r of rows)
      requests.set(r.mail_id, { status: permissionStatusOf(r.status), decision: r.decision });
  }
  return { mails, deliveries, attachments, sessions, parents, requests };
}

function participantOf(d: DeliveryRow, sessions: Map<string, SessionRow>): Participant {
  const s = sessions.get(d.session_id);
  const human = d.recipient_human === 1;
  return {
    name: d.recipient_name,
    human,
    address: s ? addressIn(d.recipient_name, human, s) : `${d.recipient_name}@.`,
  };
}

function summaryOf(actor: Actor, mail: MailRow, l: Loaded): MailSummary {
  const deliveries = l.deliveries.get(mail.id) ?? [];
  const sessionId = readerSessionId(actor, mail, deliveries) ?? mail.session_id;
  const session = l.sessions.get(sessionId);
  const mailSession = l.sessions.get(mail.session_id);
  if (!session || !mailSession) throw new Error(`mail ${mail.id}: session missing`);
  const fromHuman = mail.from_human === 1;
  const fromAddress = addressIn(mail.from_name, fromHuman, mailSession);
  const to = deliveries.filter((d) => d.role === 'to').map((d) => participantOf(d, l.sessions));
  const cc = deliveries.filter((d) => d.role === 'cc').map((d) => participantOf(d, l.sessions));
  const own = deliveries.find(
    (d) => d.recipient_name === actor.name && (d.recipient_human === 1) === isHumanActor(actor),
  );
  const isSender = own === undefined;
  return {
    id: mail.id,
    session_id: sessionId,
    session_alias: session.alias ?? '',
    from_name: mail.from_name,
    from_human: fromHuman,
    from_address: fromAddress,
    to,
    cc,
    to_human: deliveries.find((d) => d.role === 'to')?.recipient_human === 1,
    subject: mail.subject,
    snippet: mail.body.replace(/\s+/g, ' ').trim().slice(0, SNIPPET_LENGTH),
    created_at: iso(Number(mail.created_at)),
    status: own === undefined || own.read_at !== null ? 'read' : 'unread',
    attachments: l.attachments.get(mail.id) ?? [],
    in_reply_to: mail.in_reply_to ?? '',
    kind: mail.kind === 'calendar' ? 'calendar' : 'mail',
    is_permission: mail.kind === PERMISSION_KIND,
    relay: mail.relay !== null,
    // The failure mail's key is the one mark it has on the wire (its subject is in the sender's language).
    failure: mail.relay !== null && (mail.relay_key ?? '').startsWith(FAILURE_RELAY_KEY_PREFIX),
    request: mail.kind === PERMISSION_KIND ? (l.requests.get(mail.id) ?? null) : null,
    permission_mode: permissionModeOf(session),
    reply_address: isSender ? (to[0]?.address ?? fromAddress) : fromAddress,
    self_address: addressIn(actor.name, isHumanActor(actor), session),
    platform_session_id:
      !isHumanActor(actor) && session.agent_name === actor.name ? (session.platform_id ?? '') : '',
  };
}

/**
 * Everyone in a session as the reader sees it: the session's agent, and the senders and
 * recipients of the mails of the session the reader can see ({@link canSeeMail} in mail-access.ts), with their
 * address there, whether they have spoken and when they last wrote (SPEC §3 participants). Who
 * else wrote into a shared session stays hidden.
 */
export async function sessionParticipants(
  db: Db,
  actor: Actor,
  session: SessionRow,
): Promise<SessionParticipant[]> {
  const ids = await visibleSessionMailIds(db, actor, session.id);
  const l = await load(db, ids);
  const byName = new Map<string, SessionParticipant>();
  const key = (name: string, human: boolean) => `${human ? 'u' : 'a'}:${name}`;
  const touch = (name: string, human: boolean, address: string, spokeAt: number | null) => {
    const k = key(name, human);
    const p = byName.get(k) ?? { name, human, address, has_spoken: false, last_mail_at: null };
    p.address = address;
    if (spokeAt !== null) {
      p.has_spoken = true;
      p.last_mail_at = iso(spokeAt);
    }
    byName.set(k, p);
  };
  touch(session.agent_name, false, addressIn(session.agent_name, false, session), null);
  for (const m of l.mails) {
    const ms = l.sessions.get(m.session_id);
    if (ms)
      touch(
        m.from_name,
        m.from_human === 1,
        addressIn(m.from_name, m.from_human === 1, ms),
        Number(m.created_at),
      );
    for (const d of l.deliveries.get(m.id) ?? []) {
      const ds = l.sessions.get(d.session_id);
      if (ds)
        touch(
          d.recipient_name,
          d.recipient_human === 1,
          addressIn(d.recipient_name, d.recipient_human === 1, ds),
          null,
        );
    }
  }
  // the session's own agent is addressed by its own address in this session
  const self = byName.get(key(session.agent_name, false));
  if (self) self.address = addressIn(session.agent_name, false, session);
  return [...byName.values()];
}

/** Participants as the short `Participant` list of a `Mail`. */
function shortParticipants(list: readonly SessionParticipant[]): Participant[] {
  return list.map((p) => ({ name: p.name, address: p.address, human: p.human }));
}

/** Throw the 404 for a mail the reader can not see. */
function mailNotFound(id: string): GatewayError {
  return new GatewayError('NOT_FOUND', `mail "${id}" not found`, {
    suggestion: 'use an id from your inbox or thread',
  });
}

/**
 * One mail for a reader, with the body, participants and parent sender.
 * @throws GatewayError `AM_GW_NOT_FOUND` when the mail does not exist or the reader is neither
 *   its sender nor a recipient.
 */
export async function readMail(db: Db, actor: Actor, id: string): Promise<Mail> {
  const l = await load(db, [id]);
  const mail = l.mails[0];
  if (!mail || readerSessionId(actor, mail, l.deliveries.get(id) ?? []) === undefined) throw mailNotFound(id);
  const summary = summaryOf(actor, mail, l);
  const session = l.sessions.get(summary.session_id);
  const participants = session ? shortParticipants(await sessionParticipants(db, actor, session)) : [];
  return {
    ...summary,
    body: mail.body,
    participants,
    parent_from: mail.in_reply_to ? (l.parents.get(mail.in_reply_to) ?? '') : '',
  };
}

/**
 * The thread of a mail for its reader: the mails of the reader's session for it that the reader
 * can see ({@link canSeeMail} in mail-access.ts: sent by it or delivered to it), oldest first, paged. With `around`
 * (a mail of the thread) the page holds that mail, in its middle where the thread allows, and
 * `offset` is ignored.
 * @throws GatewayError `AM_GW_NOT_FOUND` as {@link readMail}; `AM_GW_BAD_REQUEST` (field
 *   `around`) when `around` is no mail of this thread for the reader.
 */
export async function readThread(
  db: Db,
  actor: Actor,
  id: string,
  offset: number,
  limit: number,
  around?: string,
): Promise<ThreadResponse> {
  const first = await load(db, [id]);
  const mail = first.mails[0];
  const sessionId = mail ? readerSessionId(actor, mail, first.deliveries.get(id) ?? []) : undefined;
  if (!mail || sessionId === undefined) throw mailNotFound(id);
  const session = await sessionById(db, sessionId);
  if (!session) throw mailNotFound(id);
  const ids = await visibleSessionMailIds(db, actor, sessionId);
  if (around !== undefined) {
    const at = ids.indexOf(around);
    if (at < 0)
      throw new GatewayError('BAD_REQUEST', `field "around": ${around} is no mail of this thread`, {
        suggestion: 'give the id of a mail of this thread, e.g. the one in the path',
        extra: { field: 'around' },
      });
    offset = Math.max(0, Math.min(at - Math.floor(limit / 2), ids.length - limit));
  }
  const page = ids.slice(offset, offset + limit);
  const l = await load(db, page);
  const participants = shortParticipants(await sessionParticipants(db, actor, session));
  const mails: Mail[] = l.mails.map((m) => {
    // Shown in the frame of this session (a mail the reader got in another of its sessions too).
    const summary = summaryOf(actor, m, l);
    return {
      ...summary,
      session_id: sessionId,
      session_alias: session.alias ?? '',
      body: m.body,
      participants,
      parent_from: m.in_reply_to ? (l.parents.get(m.in_reply_to) ?? '') : '',
    };
  });
  return {
    session_id: sessionId,
    session_alias: session.alias ?? '',
    mails,
    total: ids.length,
    offset,
    next_offset: offset + limit < ids.length ? offset + limit : null,
  };
}

/**
 * A reader's inbox page. By default unread is oldest first (a work queue; SPEC G-39, B-20) and all
 * is newest first; `order` chooses either, and `before` (a mail id) keeps only older mails, for
 * paging back through newest-first pages.
 */
export async function readInbox(
  db: Db,
  actor: Actor,
  query: {
    status: 'unread' | 'all';
    limit: number;
    session_id?: string | undefined;
    order?: 'oldest' | 'newest' | undefined;
    before?: string | undefined;
  },
): Promise<InboxResponse> {
  const human = isHumanActor(actor) ? 1 : 0;
  let q = db
    .selectFrom('deliveries')
    .select('mail_id')
    .where('recipient_name', '=', actor.name)
    .where('recipient_human', '=', human);
  if (query.status === 'unread') q = q.where('read_at', 'is', null);
  if (query.session_id !== undefined) q = q.where('session_id', '=', query.session_id);
  // Mail ids sort by creation time: `before` pages back from the last id of a newest-first page.
  if (query.before !== undefined) q = q.where('mail_id', '<', query.before);
  const order = query.order ?? (query.status === 'unread' ? 'oldest' : 'newest');
  const rows = await q
    .orderBy('mail_id', order === 'oldest' ? 'asc' : 'desc')
    .limit(query.limit + 1)
    .execute();
  const pageIds = rows.slice(0, query.limit).map((r) => r.mail_id);
  const l = await load(db, pageIds);
  const byId = new Map(l.mails.map((m) => [m.id, m]));
  const mails = pageIds
    .map((id) => byId.get(id))
    .filter((m): m is MailRow => m !== undefined)
    .map((m) => summaryOf(actor, m, l));
  const unread = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('recipient_name', '=', actor.name)
    .where('recipient_human', '=', human)
    .where('read_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { mails, unread_count: Number(unread.n), has_more: rows.length > query.limit };
}

/** Mark exactly the listed mails read for the reader; answers how many changed. */
export async function markRead(db: Db, actor: Actor, ids: readonly string[], nowMs: number): Promise<number> {
  const r = await db
    .updateTable('deliveries')
    .set({ read_at: nowMs })
    .where('recipient_name', '=', actor.name)
    .where('recipient_human', '=', isHumanActor(actor) ? 1 : 0)
    .where('mail_id', 'in', [...ids])
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
