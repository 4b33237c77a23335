/**
 * Step 6 of a mail turn that succeeded: the naming sync (SPEC B-11) and the auto relay of its
 * final text (B-10, G-32), exactly once and never after the runtime gave the turn up (B-7).
 */
import { MAIL_SUBJECT_MAX_CHARS } from '@agentmail/protocol';
import {
  decideAutoRelay,
  decideNamingSync,
  formatText,
  type Locale,
  messageOf,
  namingStateAfterSync,
  type TurnPlan,
} from '@agentmail/shared-policy';
import { type GatewayClient, isTransient, newIdempotencyKey } from '@agentmail/shared-policy/client';
import type { TurnState } from './active-turn.js';
import type { AttemptOutcome } from './adapter.js';
import type { CommitFn } from './turn-gate.js';
import type { MailTurnInput } from './turn-input.js';
import type { MailTurnReport } from './turn-report.js';

/**
 * The subject of an auto relay (see SPEC B-10): the mail's subject with the catalogue's reply
 * prefix (`relay.subject`), unless it already carries one; clipped to the Gateway's
 * `MAIL_SUBJECT_MAX_CHARS` (500 UTF-16 units), never inside a character.
 * @example relaySubject('fix tests', 'en') // 'Re: fix tests'
 */
export function relaySubject(subject: string, locale: Locale): string {
  const prefixed = /^\s*(re|回复)\s*[:：]/i.test(subject)
    ? subject
    : formatText('relay.subject', { subject }, locale);
  if (prefixed.length <= MAIL_SUBJECT_MAX_CHARS) return prefixed;
  // The limit counts UTF-16 units (a string's length): never keep half of a surrogate pair.
  const cut = prefixed.slice(0, MAIL_SUBJECT_MAX_CHARS);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** Attempts of the relay send: a Gateway that is briefly unavailable must not lose the reply (B-10). */
const RELAY_RETRY_DELAYS_MS = [1_000, 2_000] as const;

/**
 * B-11: the host's session name → the Gateway session's title and alias. The fingerprint is
 * stored before the request (so a lost answer or our own echo never loops); the final alias
 * after it. Adopted sessions are not synced. Never fails the turn.
 */
export async function syncSessionName(
  input: MailTurnInput,
  state: TurnState,
  adopted: boolean,
  sessionName: string | undefined,
): Promise<void> {
  const { mail, bindings, emit } = input;
  const mailId = mail.mail_id;
  const naming = adopted ? undefined : (await bindings.get(mail.session_id).catch(() => undefined))?.naming;
  const d = decideNamingSync({
    adopted,
    platformName: sessionName,
    state: naming,
    agentName: input.agentName,
  });
  if (!d.sync) {
    if (d.reason !== 'unnamed') emit({ type: 'naming_sync_skipped', mail_id: mailId, reason: d.reason });
    return;
  }
  try {
    await bindings.setNaming(mail.session_id, { ...naming, fingerprint: d.fingerprint });
    const res = await state.client.sessionSync(mail.session_id, d.request);
    await bindings.setNaming(mail.session_id, namingStateAfterSync(d.fingerprint, res));
    emit({ type: 'naming_synced', mail_id: mailId, alias: res.alias, title: res.title });
  } catch (err) {
    emit({ type: 'naming_sync_failed', mail_id: mailId, error: messageOf(err) });
  }
}

/** The succeeded turn a relay is decided for. */
export interface RelayInput {
  plan: TurnPlan;
  turnId: string;
  done: AttemptOutcome;
  model: string;
  platformSessionId: string;
}

/**
 * B-10: relay the turn's final text when {@link decideAutoRelay} says so (event `relay_skipped`
 * otherwise), through the commit gate, with a key from the session's last entry or, without an
 * entry id, from the mail (a resend is idempotent, G-32; a transient failure is retried briefly).
 * A relay that could not be sent is `undelivered` (the mail is delivered again, B-20). Never throws.
 */
export async function relayReply(
  input: MailTurnInput,
  state: TurnState,
  r: RelayInput,
): Promise<MailTurnReport> {
  const { mail, emit } = input;
  const mailId = mail.mail_id;
  const decision = decideAutoRelay({
    plan: r.plan,
    finalParts: r.done.finalParts ?? [],
    explicitSendTargets: await input.explicitSends.targetsFor(r.turnId),
    replyAddress: mail.reply_address,
    platformSessionId: r.platformSessionId,
    lastEntryId: r.done.lastEntryId ?? '',
    mailId,
  });
  const base = { ok: true as const, model: r.model, platformSessionId: r.platformSessionId };
  if (!decision.send) {
    emit({ type: 'relay_skipped', mail_id: mailId, reason: decision.reason });
    return { ...base, relay: { sent: false, reason: decision.reason } };
  }
  const commit: CommitFn = input.commit ?? ((fn) => fn());
  const body = {
    to: decision.to,
    subject: relaySubject(mail.subject, input.locale),
    body: decision.body,
    reply_to: mailId,
    from_session_id: mail.session_id,
    relay: 'summary' as const,
    relay_key: decision.relayKey,
  };
  // The relay key makes a resend idempotent (G-32), and so does one Idempotency-Key for every
  // attempt (G-41): a transient failure is retried briefly.
  const idempotencyKey = newIdempotencyKey();
  const sendWithRetry = async (): Promise<Awaited<ReturnType<GatewayClient['send']>>> => {
    for (const delayMs of [0, ...RELAY_RETRY_DELAYS_MS]) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        return await state.client.send(body, { idempotencyKey });
      } catch (err) {
        if (!isTransient(err) || delayMs === RELAY_RETRY_DELAYS_MS.at(-1)) throw err;
      }
    }
    throw new Error('unreachable');
  };
  try {
    const res = await commit(sendWithRetry);
    if (res === undefined) {
      const reason = 'the turn was given up after its timeout: its answer is not relayed (B-7)';
      emit({ type: 'relay_skipped', mail_id: mailId, reason });
      return { ...base, relay: { sent: false, reason } };
    }
    const duplicate = res.status === 'duplicate_relay';
    emit({ type: 'relayed', mail_id: mailId, to: decision.to, relay_key: decision.relayKey, duplicate });
    return { ...base, relay: { sent: true, mailId: res.mail_id, duplicate } };
  } catch (err) {
    emit({ type: 'relay_failed', mail_id: mailId, error: messageOf(err) });
    // Not lost: the runtime leaves the mail unread and delivers it again (B-20).
    return {
      ...base,
      relay: { sent: false, reason: `relay failed: ${messageOf(err)}`, undelivered: true },
    };
  }
}
