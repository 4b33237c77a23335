/**
 * The failure mail of a turn (see SPEC B-9), sent on the relay channel with its stable key.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import type { GatewayClient } from '../client/gateway-client.js';
import { buildFailureMail, type FailureKind } from '../failure-mail.js';
import type { Locale } from '../texts/index.js';
import type { BridgeLogger } from './logger.js';
import type { MailTurnReport } from './turn-report.js';

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Send the failure mail of a failed turn (B-9) and build the `{ ok: false }` report. Never throws. */
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
    log: BridgeLogger;
  },
): Promise<Extract<MailTurnReport, { ok: false }>> {
  const { kind, mail, cause, log } = args;
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
    log.info({ mail_id: mail.mail_id, kind, status: res.status }, 'failure mail sent');
    return { ok: false, kind, cause, failureMailSent: true };
  } catch (err) {
    log.error({ mail_id: mail.mail_id, kind, err: messageOf(err) }, 'failure mail not sent');
    return { ok: false, kind, cause, failureMailSent: false, failureMailError: messageOf(err) };
  }
}
