/**
 * Relay policy: what a turn's prompt says and whether its final text is mailed back
 * (see SPEC B-5, B-6, B-10, B-20).
 *
 * {@link planTurn} is the one place that decides both the reply instruction the model reads and
 * whether an automatic relay happens, so "it will be mailed back" is said exactly when it is
 * true. {@link decideAutoRelay} applies that plan to the turn's outcome.
 */
import { parseAddress } from '@agentmail/protocol';
import { AgentMailError } from './errors.js';
import { autoRelayKey, mailRelayKey } from './relay-key.js';
import { DEFAULT_LOCALE, formatText, type Locale } from './texts/index.js';

/**
 * The `new_mail` event fields a turn plan reads (see SPEC G-20). Structurally a subset of the
 * protocol's `NewMailEvent`, but lenient: fields an older Gateway may omit are optional, and a
 * missing `from_human` counts as an agent (B-6).
 */
export interface TurnMail {
  mail_id: string;
  from_name: string;
  /** True only for a person; missing or null counts as an agent. */
  from_human?: boolean | null | undefined;
  subject: string;
  /** Id of the recipient's own mail this answers, or `''`. */
  in_reply_to?: string | null | undefined;
  /** Sender of the parent mail (a name, or an address whose name part is used), or `''`. */
  parent_from?: string | null | undefined;
  session_alias?: string | null | undefined;
  /** Where a reply goes (G-6); the auto relay target. */
  reply_address?: string | null | undefined;
  /** The recipient's own address in this session (G-6). */
  self_address?: string | null | undefined;
  /** `mail` or `calendar`. */
  kind?: string | null | undefined;
}

/** Input of {@link planTurn}. */
export interface PlanTurnInput {
  /** The delivered mail. */
  mail: TurnMail;
  /** The recipient's own name (the agent running the turn). */
  selfName: string;
  /** Delivered by catch-up, not live (B-20). @default false */
  backlog?: boolean | undefined;
  /** The mail goes into a session that already has turns (B-4). @default false */
  continuedSession?: boolean | undefined;
  /** An earlier turn for this mail ended without an outcome (the bridge crashed or restarted, B-10, B-14). @default false */
  retry?: boolean | undefined;
}

/**
 * What arrived (see SPEC B-5): a new task, a reply to the recipient's own mail, a continuation
 * of a multi-party thread, or a scheduled calendar mail.
 */
export type HeadlineKind = 'new_task' | 'reply_to_own' | 'thread_continuation' | 'calendar';

/** Whether the turn's final text is relayed; every "no" carries a reason for the log line. */
export type AutoRelayPlan = { enabled: true } | { enabled: false; reason: string };

/** The plan of one turn (see SPEC B-5, B-6). */
export interface TurnPlan {
  headlineKind: HeadlineKind;
  /** What arrived, backlog / continued-session notes, and whether the sender is an agent. */
  headline: string;
  /** The person text ("it will be mailed back") iff `autoRelay.enabled`, else the agent text. */
  replyInstruction: string;
  /** True unless `from_human` is exactly `true` (B-6). */
  senderIsAgent: boolean;
  autoRelay: AutoRelayPlan;
  /** Locale of the texts; {@link buildTurnPrompt} uses it by default. */
  locale: Locale;
}

/** `parent_from` may be a name or an address: compare its name part. */
function namePart(value: string): string {
  const at = value.indexOf('@');
  return (at === -1 ? value : value.slice(0, at)).trim();
}

function headlineKindOf(mail: TurnMail, selfName: string): HeadlineKind {
  if (mail.kind === 'calendar') return 'calendar';
  if (!mail.in_reply_to) return 'new_task';
  // A reply whose parent sender is unknown is treated as a thread continuation, not as an
  // answer to us: "read the thread" is safe, "this answers your mail" might be false.
  const parent = namePart(mail.parent_from ?? '');
  return parent !== '' && parent === selfName.trim() ? 'reply_to_own' : 'thread_continuation';
}

/** The relay half of the decision (B-6): only a person with a reply address gets an auto relay. */
function autoRelayPlanOf(mail: TurnMail): AutoRelayPlan {
  if (mail.from_human === false)
    return {
      enabled: false,
      reason:
        'sender is an agent (from_human=false): it gets mail only through an explicit send_mail (SPEC B-6)',
    };
  if (mail.from_human !== true)
    return {
      enabled: false,
      reason: 'from_human is missing: the sender counts as an agent, no auto relay (SPEC B-6)',
    };
  if (!mail.reply_address?.trim())
    return {
      enabled: false,
      reason: 'sender is a person but the event has no reply_address: nowhere to relay to (SPEC G-6)',
    };
  return { enabled: true };
}

/**
 * Plan a turn: headline, reply instruction and auto relay, from one decision
 * (see SPEC B-5, B-6, B-20).
 *
 * - Headline: `calendar` for `kind: 'calendar'`; `reply_to_own` when `in_reply_to` is set and
 *   `parent_from` is `selfName` ("not a new task"); `thread_continuation` when `in_reply_to` is
 *   set and the parent is someone else's (or unknown); else `new_task`. Then the backlog note,
 *   the continued-session note, and whether the sender is a person or an agent.
 * - Auto relay: enabled only when `from_human === true` and `reply_address` is set. The reply
 *   instruction is the person text exactly when it is enabled, otherwise the agent text
 *   ("nothing is sent unless you call send_mail").
 *
 * Pure; never throws.
 * @param locale - text locale @default 'en'
 * @example planTurn({ mail: event, selfName: 'pi', backlog: true }).autoRelay
 */
export function planTurn(input: PlanTurnInput, locale: Locale = DEFAULT_LOCALE): TurnPlan {
  const { mail } = input;
  const headlineKind = headlineKindOf(mail, input.selfName);
  const autoRelay = autoRelayPlanOf(mail);
  const senderIsAgent = mail.from_human !== true;
  const fromName = mail.from_name.trim() || formatText('prompt.sender.unknown_name', {}, locale);

  const parts = [
    formatText(
      `prompt.headline.${headlineKind}`,
      { in_reply_to: mail.in_reply_to ?? '', parent_from: mail.parent_from ?? '' },
      locale,
    ),
  ];
  // A retry came in while the bridge was online: the backlog note ("arrived while you were
  // offline") would be wrong; the retry note says what matters.
  if (input.retry) parts.push(formatText('prompt.note.retry', {}, locale));
  else if (input.backlog) parts.push(formatText('prompt.note.backlog', {}, locale));
  if (input.continuedSession) parts.push(formatText('prompt.note.continued_session', {}, locale));
  parts.push(
    formatText(
      senderIsAgent ? 'prompt.sender.agent' : 'prompt.sender.person',
      { from_name: fromName },
      locale,
    ),
  );

  // The one branch point of B-6: the instruction follows `autoRelay`, never `from_human` alone.
  const replyTarget = mail.reply_address?.trim() || fromName;
  const replyInstruction = formatText(
    autoRelay.enabled ? 'prompt.reply.to_person' : 'prompt.reply.to_agent',
    { reply_address: replyTarget },
    locale,
  );

  return { headlineKind, headline: parts.join(' '), replyInstruction, senderIsAgent, autoRelay, locale };
}

/** Subjects are shown on one line. */
function oneLine(text: string): string {
  return text.replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

/**
 * The whole prompt of a mail turn (see SPEC B-5, B-6): headline; sender with kind and reply
 * address; the recipient's own address and session; subject; mail id and how to read the body
 * (`read_mail`, `read_thread`, `read_inbox`); the reply instruction. Blocks are separated by a
 * blank line. The body itself is not included: the model reads it with the tools.
 * @param locale - label locale @default plan.locale
 */
export function buildTurnPrompt(plan: TurnPlan, mail: TurnMail, locale: Locale = plan.locale): string {
  const fromName = mail.from_name.trim() || formatText('prompt.sender.unknown_name', {}, locale);
  const senderKind = formatText(
    plan.senderIsAgent ? 'prompt.sender_kind.agent' : 'prompt.sender_kind.person',
    {},
    locale,
  );
  const header = [
    formatText(
      'prompt.field.from',
      { from_name: fromName, sender_kind: senderKind, reply_address: mail.reply_address ?? '' },
      locale,
    ),
    // A default session has no alias: say so, never "(session )".
    (mail.session_alias ?? '').trim() === ''
      ? formatText('prompt.field.self_default', { self_address: mail.self_address ?? '' }, locale)
      : formatText(
          'prompt.field.self',
          { self_address: mail.self_address ?? '', session_alias: mail.session_alias ?? '' },
          locale,
        ),
    formatText('prompt.field.subject', { subject: oneLine(mail.subject) }, locale),
    formatText('prompt.field.mail_id', { mail_id: mail.mail_id }, locale),
  ].join('\n');
  return [
    plan.headline,
    header,
    formatText('prompt.how_to_read', { mail_id: mail.mail_id }, locale),
    plan.replyInstruction,
  ].join('\n\n');
}

/** One part of the model's final message; only `type: 'text'` is ever relayed. */
export interface FinalPart {
  /** `text`, `reasoning`, `thinking`, `tool-call`, … */
  type: string;
  text?: string | undefined;
}

/** Input of {@link decideAutoRelay}. */
export interface AutoRelayInput {
  /** The turn's plan (only `autoRelay` is read). */
  plan: Pick<TurnPlan, 'autoRelay'>;
  /** Parts of the model's final message. */
  finalParts: readonly FinalPart[];
  /** Addresses or names the model mailed explicitly during this turn (to and cc). */
  explicitSendTargets: readonly string[];
  /** Where the relay goes: the event's `reply_address`. */
  replyAddress: string;
  platformSessionId: string;
  /** Id of the last entry of the platform session after the turn; '' when the host has none. */
  lastEntryId: string;
  /**
   * The mail the turn answers: the relay key whenever it is given (every attempt at the same mail,
   * before and after a crash, sends the same key: a re-run's relay is a `duplicate_relay`, G-32).
   * Without it, the host's session and entry ids.
   */
  mailId?: string;
}

/** Result of {@link decideAutoRelay}: a send, or the reason for the log line. */
export type AutoRelayDecision =
  | { send: true; to: string; body: string; relayKey: string }
  | { send: false; reason: string };

function normalisePath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

function recipientOf(target: string): { name: string; path: string } {
  try {
    const { name, path } = parseAddress(target);
    return { name, path: normalisePath(path) };
  } catch {
    return { name: namePart(target), path: '' };
  }
}

/**
 * True when an explicit send target is the same party as the reply target (see SPEC B-10).
 * Compared on `name@path`, ignoring the session: names equal (exactly), and paths equal (a
 * trailing `/` ignored) or either empty (`pi` or `alice@.` names the same party as
 * `pi@/srv/app.x`). A target that does not parse is compared by the text before `@`.
 * Leaning to "same" means a possible missing copy rather than a duplicate mail: the model did
 * mail that party itself.
 * @example isSameRecipient('alice', 'alice@.pi-fix-import-paths') // true
 */
export function isSameRecipient(target: string, replyAddress: string): boolean {
  const a = recipientOf(target);
  const b = recipientOf(replyAddress);
  if (a.name === '' || a.name !== b.name) return false;
  return a.path === '' || b.path === '' || a.path === b.path;
}

/**
 * Decide whether to mail the turn's final text back (see SPEC B-10).
 *
 * In order, no relay when: the plan disables it (its reason); `replyAddress` is empty; the final
 * message has no non-blank `text` part (reasoning and other parts are never relayed); the model
 * already mailed the reply target this turn ({@link isSameRecipient}); no stable key can be
 * built. Otherwise the body is the non-blank text parts joined by a blank line, trimmed, and
 * the key is {@link mailRelayKey}(mailId): the same for every attempt at the mail, whatever ids
 * the host gives each run (a bridge killed after the Gateway took its relay and before it marked
 * the mail handled runs the mail again: that relay is then a `duplicate_relay`, SPEC B-10, G-32).
 * Without a mail id, {@link autoRelayKey}(platformSessionId, lastEntryId).
 *
 * Never throws: every "no" is `{ send: false, reason }`, a sentence for the log line.
 * @example decideAutoRelay({ plan, finalParts: [{ type: 'text', text: 'Done.' }], explicitSendTargets: [], replyAddress: 'alice@.fix', platformSessionId: 's1', lastEntryId: 'e9' })
 */
export function decideAutoRelay(input: AutoRelayInput): AutoRelayDecision {
  const { plan } = input;
  if (!plan.autoRelay.enabled) return { send: false, reason: plan.autoRelay.reason };
  const to = input.replyAddress.trim();
  if (to === '') return { send: false, reason: 'no reply address to relay to (SPEC G-6)' };

  const body = input.finalParts
    .filter((part) => part.type === 'text' && typeof part.text === 'string' && part.text.trim() !== '')
    .map((part) => part.text as string)
    .join('\n\n')
    .trim();
  if (body === '')
    return {
      send: false,
      reason: 'the final answer has no text (only reasoning, tool parts or whitespace): no mail (SPEC B-10)',
    };

  const sent = input.explicitSendTargets.find((target) => isSameRecipient(target, to));
  if (sent !== undefined)
    return {
      send: false,
      reason: `the model already mailed ${JSON.stringify(sent)} (reply target ${to}) during this turn: no second copy (SPEC B-10)`,
    };

  try {
    const relayKey = input.mailId?.trim()
      ? mailRelayKey(input.mailId)
      : autoRelayKey(input.platformSessionId, input.lastEntryId);
    return { send: true, to, body, relayKey };
  } catch (err) {
    const detail = err instanceof AgentMailError ? err.message : String(err);
    return { send: false, reason: `no stable relay key: ${detail}` };
  }
}
