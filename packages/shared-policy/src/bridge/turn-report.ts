/**
 * The report of one mail turn (what `runMailTurn` and every bridge's turn return).
 */
import type { FailureKind } from '../failure-mail.js';

/** How a turn ended: the relay outcome, or the failure (a failure mail was attempted, B-9). */
export type MailTurnReport =
  | {
      ok: true;
      model: string;
      platformSessionId: string;
      relay: { sent: true; mailId: string; duplicate: boolean } | { sent: false; reason: string };
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
