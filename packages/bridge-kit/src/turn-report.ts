/**
 * The report of one mail turn (what `runMailTurn` and every bridge's turn return).
 */
import type { FailureKind } from '@agentmail/shared-policy';

/** How a turn ended: the relay outcome, or the failure (a failure mail was attempted, B-9). */
export type MailTurnReport =
  | {
      ok: true;
      model: string;
      platformSessionId: string;
      /**
       * `undelivered`: the reply was due but could not be sent (the Gateway kept failing): the mail
       * is not settled and is delivered again (B-20).
       */
      relay:
        | { sent: true; mailId: string; duplicate: boolean }
        | { sent: false; reason: string; undelivered?: boolean };
      /** Extra fields for the bridge's "turn done" log line (e.g. worker RSS). */
      logFields?: Readonly<Record<string, string | number | boolean>>;
    }
  | {
      ok: false;
      kind: FailureKind;
      cause: string;
      failureMailSent: boolean;
      failureMailError?: string;
      /** Extra fields for the bridge's "turn failed" log line. */
      logFields?: Readonly<Record<string, string | number | boolean>>;
    };
