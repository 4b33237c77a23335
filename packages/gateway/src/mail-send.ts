/**
 * Sending: one transaction creates the mail, its deliveries, attachment links, session changes
 * and the events, or nothing at all (SPEC G-35). The steps, each in its own module: check the
 * request (relay key G-32, attachments), find the recipients (mail-send-recipients.ts) and the
 * sessions (mail-send-sessions.ts: `.new`/alias sessions G-2, G-5, G-37), charge the round budget
 * and hop limit (mail-send-budget.ts: G-31, G-33), store the mail (mail-send-store.ts) and
 * announce it (mail-send-events.ts: the `new_mail` payload G-6, G-20, G-30).
 */
import { RELAY_KEY_MAX_BYTES } from '@agentmail/protocol';
import { subjectForSend } from '@agentmail/shared-policy';
import type { Actor, Db, GatewayContext } from './context.js';
import { isUniqueViolation, runTransaction } from './db/database.js';
import { GatewayError } from './errors.js';
import type { EventBatch } from './event-hub.js';
import { answerAfterRace, type IdempotencyClaim, storeAnswer, storedAnswer } from './idempotency.js';
import { actorSessionFor, canSeeAttachment, mailRow } from './mail-access.js';
import { chargeSend, isFreeSend } from './mail-send-budget.js';
import { appendNewMailEvents } from './mail-send-events.js';
import { lookupRecipients } from './mail-send-recipients.js';
import { resolveSessions, wireMode } from './mail-send-sessions.js';
import { storeMail } from './mail-send-store.js';
import type { ReplyParent, ResolvedSend, SendInput, SendResult } from './mail-send-types.js';
import { offlineAgents } from './presence.js';
import { addressIn } from './sessions.js';

export type { SendInput, SendResult } from './mail-send-types.js';

/**
 * Send a mail. Everything happens in one transaction; events are published after the commit.
 * An agent writes from `from_session_id` when given (its from address, round budget, hop-limit
 * run and the thread all use that session), else from its session of `reply_to`, else from its
 * default session.
 *
 * With `claim` (an `Idempotency-Key`, SPEC G-41) the answer is stored with the mail, and a repeat
 * answers it again without sending.
 *
 * @returns `{status: 'sent', …}` or `{status: 'duplicate_relay', mail_id}` (SPEC G-32)
 * @throws GatewayError `AM_GW_BAD_REQUEST` (bad address, relay key too long, person to person),
 *   `AM_GW_UNKNOWN_RECIPIENT` / `AM_GW_UNKNOWN_ALIAS` / `AM_GW_UNKNOWN_ATTACHMENT` /
 *   `AM_GW_NOT_FOUND` (404, also an unknown `from_session_id`), `AM_GW_FORBIDDEN` (403,
 *   `from_session_id` of another agent), `AM_GW_BUDGET_EXHAUSTED` / `AM_GW_HOP_LIMIT` (409),
 *   `AM_GW_SESSION_RATE_LIMIT` (429), `AM_GW_IDEMPOTENCY_KEY_REUSED` (409)
 */
export async function sendMail(
  ctx: GatewayContext,
  actor: Actor,
  input: SendInput,
  claim?: IdempotencyClaim,
): Promise<SendResult> {
  // Every subject stored, from a person, an agent, a relay or a forward, holds no control
  // character; a send without one gets the one rule's subject (from the body's first line), so the
  // CLI, the web, the agents and every "Re:" show the same.
  input = { ...input, subject: subjectForSend(input.subject, input.body, ctx.config.locale) };
  if (input.relay_key !== undefined && Buffer.byteLength(input.relay_key, 'utf8') > RELAY_KEY_MAX_BYTES)
    throw new GatewayError('BAD_REQUEST', `field "relay_key": longer than ${RELAY_KEY_MAX_BYTES} bytes`, {
      suggestion: 'clamp the key with clampRelayKey() of @agentmail/shared-policy (SPEC G-32)',
      extra: { field: 'relay_key' },
    });
  let batch: EventBatch = [];
  let result: SendResult;
  try {
    // Sessions of several agents are locked on the way (their creation, the sender's round): a
    // deadlock with another send runs the transaction again.
    result = await runTransaction(ctx.db, (trx) => {
      batch = [];
      return sendInTransaction(ctx, trx, actor, input, batch, claim);
    });
  } catch (err) {
    // A repeat with the same Idempotency-Key committed first (another Gateway): its answer.
    const first = await answerAfterRace<SendResult>(ctx.db, claim, err, ctx.config.clock());
    if (first) return first;
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
  claim: IdempotencyClaim | undefined,
): Promise<SendResult> {
  const now = ctx.config.clock();
  // G-41: a repeat of a stored send answers what the first one answered and creates nothing.
  const stored = claim && (await storedAnswer<SendResult>(trx, claim, now));
  if (stored) return stored;
  const result = await sendOnce(ctx, trx, actor, input, batch, now);
  if (claim) await storeAnswer(trx, claim, result, now);
  return result;
}

async function sendOnce(
  ctx: GatewayContext,
  trx: Db,
  actor: Actor,
  input: SendInput,
  batch: EventBatch,
  now: number,
): Promise<SendResult> {
  const prior = await priorRelay(trx, actor, input);
  if (prior !== undefined) return { status: 'duplicate_relay', mail_id: prior };
  const attachmentIds = await attachmentsToLink(trx, actor, input);
  const parent = await replyParent(trx, actor, input);
  const recipients = await lookupRecipients(trx, input.to, input.cc ?? []);
  const sessions = await resolveSessions(ctx, trx, actor, input, recipients, parent);
  await chargeSend(trx, now, actor, input, recipients, sessions.sender);
  const send: ResolvedSend = { actor, input, now, parent, recipients, sessions };
  const stored = await storeMail(ctx, trx, send, attachmentIds);
  await appendNewMailEvents(ctx, trx, batch, send, stored);
  return sentResult(trx, send, stored.mailId);
}

/** G-32: the mail this sender already sent with the relay key, if any (nothing new is made then). */
async function priorRelay(trx: Db, actor: Actor, input: SendInput): Promise<string | undefined> {
  if (input.relay_key === undefined) return undefined;
  const prior = await trx
    .selectFrom('mails')
    .select('id')
    .where('from_name', '=', actor.name)
    .where('relay_key', '=', input.relay_key)
    .executeTakeFirst();
  return prior?.id;
}

/**
 * G-35: every attachment is checked before anything is created; the same id twice attaches the
 * file once, in the place it was first named.
 * @throws GatewayError `AM_GW_UNKNOWN_ATTACHMENT` naming the index
 */
async function attachmentsToLink(trx: Db, actor: Actor, input: SendInput): Promise<string[]> {
  const requested = input.trustedAttachmentIds ?? input.attachment_ids ?? [];
  if (input.trustedAttachmentIds === undefined) await checkAttachments(trx, actor, requested);
  return [...new Set(requested)];
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
 * The mail `reply_to` names, when the sender can see it.
 * @throws GatewayError `AM_GW_NOT_FOUND` (no such mail, or not one of the sender's)
 */
async function replyParent(trx: Db, actor: Actor, input: SendInput): Promise<ReplyParent | undefined> {
  if (input.reply_to === undefined) return undefined;
  const parent = await mailRow(trx, input.reply_to);
  const actorSessionId = parent ? actorSessionFor(actor, parent.mail, parent.deliveries) : undefined;
  if (parent === undefined || actorSessionId === undefined)
    throw new GatewayError('NOT_FOUND', `field "reply_to": mail "${input.reply_to}" not found`, {
      suggestion: 'reply to a mail from your inbox or thread',
      extra: { field: 'reply_to' },
    });
  return { ...parent, actorSessionId };
}

/** The answer of a stored send: the first recipient's session and address, the rounds left. */
async function sentResult(trx: Db, send: ResolvedSend, mailId: string): Promise<SendResult> {
  const { actor, input, now, recipients } = send;
  const sender = send.sessions.sender;
  const primary = recipients[0];
  const primarySession = primary?.session ?? send.sessions.thread;
  const free = isFreeSend(actor, input, recipients);
  // H-3: the sender is told which agents are offline; the mail waits for them (G-39).
  const offline = await offlineAgents(
    trx,
    recipients.filter((r) => !r.human).map((r) => r.name),
    now,
  );
  return {
    status: 'sent',
    mail_id: mailId,
    session_id: primarySession.id,
    session_alias: primarySession.alias ?? '',
    address: primary ? addressIn(primary.name, primary.human, primarySession) : '',
    rounds_left: free || !sender ? null : Math.max(0, sender.max_rounds - sender.rounds_used),
    permission_mode: wireMode(primarySession.permission_mode),
    ...(offline.length === 0 ? {} : { offline_recipients: offline }),
  };
}
