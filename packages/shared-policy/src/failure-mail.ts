/**
 * Failure mails: what the sender of a mail reads when its turn failed (see SPEC B-9, B-14).
 * Every bridge sends the same words; only the platform's cause differs.
 */
import { failureRelayKey } from './relay-key.js';
import { DEFAULT_LOCALE, formatText, type Locale } from './texts/index.js';

/**
 * Why a turn failed, which picks the remedy (see SPEC B-4, B-7, B-8, B-9, B-14):
 * - `all_models_failed`: a new session, every model attempt failed (or none was left to try);
 * - `resume_failed`: a resumed session failed (it never switches model);
 * - `session_missing`: an adopted platform session is gone (never silently replaced);
 * - `worker_lost`: the worker died before reporting, every redelivery attempt too;
 * - `timeout`: the turn was stopped at the turn timeout.
 */
export type FailureKind =
  | 'all_models_failed'
  | 'resume_failed'
  | 'session_missing'
  | 'worker_lost'
  | 'timeout'
  /** The bridge is not set up to run this mail (e.g. not loaded for its working directory). */
  | 'bridge_setup'
  /** The bridge itself failed while handling the mail (a bug, or a host adapter that broke its contract). */
  | 'bridge_error';

/** Input of {@link buildFailureMail}. */
export interface FailureMailInput {
  kind: FailureKind;
  /** The mail whose turn failed (fields of its `new_mail` event). */
  mail: {
    mail_id: string;
    subject: string;
    from_name: string;
    /** Where the failure mail goes; falls back to `from_name`. */
    reply_address?: string | null | undefined;
  };
  /** The platform's own cause (error message), shown verbatim; '' when unknown. */
  cause: string;
  /** The agent's name, for the intro line. */
  agentName: string;
  /** For `worker_lost`: attempts made. @default 3 */
  attempts?: number;
  /** For `timeout`: the turn timeout, in ms. @default 600_000 */
  timeoutMs?: number;
  /** @default 'en' */
  locale?: Locale;
}

/**
 * A failure mail as a `POST /mail/send` body: a relay (`relay: 'summary'`) with the stable key
 * `model-failure:<mail_id>`, answering the failed mail.
 */
export interface FailureMail {
  to: string;
  subject: string;
  body: string;
  reply_to: string;
  relay: 'summary';
  relay_key: string;
}

/** Longest cause kept in the body, in characters (a provider may answer a whole HTML page). */
export const FAILURE_CAUSE_MAX_CHARS = 2_000;

/**
 * Build the failure mail for a failed turn (see SPEC B-9): intro (subject, mail id, agent), the
 * platform's cause, and the remedy of `kind` (the resume text differs from the all-models text).
 * The relay key is {@link failureRelayKey}, so a repeated failure mail is a `duplicate_relay`.
 *
 * @throws AgentMailError `AM_RELAY_KEY_INVALID` when `mail.mail_id` is empty.
 * @example client.send(buildFailureMail({ kind: 'all_models_failed', mail, cause: '500: boom', agentName: 'pi' }))
 */
export function buildFailureMail(input: FailureMailInput): FailureMail {
  const locale = input.locale ?? DEFAULT_LOCALE;
  const { mail } = input;
  const relayKey = failureRelayKey(mail.mail_id);
  const subject = mail.subject.replace(/[\s\p{Cc}]+/gu, ' ').trim();
  const rawCause = input.cause.trim() || formatText('permission.failure.no_details', {}, locale);
  const cause =
    rawCause.length > FAILURE_CAUSE_MAX_CHARS ? `${rawCause.slice(0, FAILURE_CAUSE_MAX_CHARS)}…` : rawCause;
  const remedy = formatText(
    `failure.${input.kind}`,
    { attempts: input.attempts ?? 3, timeout_s: Math.round((input.timeoutMs ?? 600_000) / 1000) },
    locale,
  );
  const body = [
    formatText('failure.intro', { subject, mail_id: mail.mail_id, agent: input.agentName }, locale),
    formatText('failure.cause', { cause }, locale),
    remedy,
  ].join('\n\n');
  return {
    to: mail.reply_address?.trim() || mail.from_name,
    subject: formatText('failure.subject', { subject }, locale).slice(0, 500),
    body,
    reply_to: mail.mail_id,
    relay: 'summary',
    relay_key: relayKey,
  };
}
