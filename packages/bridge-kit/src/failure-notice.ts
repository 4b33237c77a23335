/**
 * The failure mail of a turn (see SPEC B-9), sent on the relay channel with its stable key.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import type { Locale } from '@agentmail/shared-policy';
import { buildFailureMail, type FailureKind, messageOf } from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';
import type { MailTurnReport } from './turn-report.js';

/**
 * Send the failure mail of a failed turn (B-9; key `model-failure:<mail_id>`, so a second one is a
 * `duplicate_relay`) and build the `{ ok: false }` report. Emits `failure_mail_sent` or
 * `failure_mail_failed`. Never throws.
 */
export async function sendFailureMail(
  client: GatewayClient,
  args: {
    kind: FailureKind;
    mail: NewMailEvent;
    cause: string;
    agentName: string;
    locale: Locale;
    timeoutMs?: number;
    attempts?: number;
    emit: EmitEvent;
  },
): Promise<Extract<MailTurnReport, { ok: false }>> {
  const { kind, mail, cause, emit } = args;
  try {
    const fm = buildFailureMail({
      kind,
      mail,
      cause,
      agentName: args.agentName,
      locale: args.locale,
      ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
      ...(args.attempts === undefined ? {} : { attempts: args.attempts }),
    });
    const res = await client.send({ ...fm, from_session_id: mail.session_id });
    emit({
      type: 'failure_mail_sent',
      mail_id: mail.mail_id,
      kind,
      duplicate: res.status === 'duplicate_relay',
    });
    return { ok: false, kind, cause, failureMailSent: true };
  } catch (err) {
    emit({ type: 'failure_mail_failed', mail_id: mail.mail_id, kind, error: messageOf(err) });
    return { ok: false, kind, cause, failureMailSent: false, failureMailError: messageOf(err) };
  }
}
