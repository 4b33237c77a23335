/**
 * The delivery of mails to the host (SPEC B-7, B-9, B-10, B-14, B-20): one turn per delivery with
 * its timeout, redelivery of a lost turn, the runtime's own failure mails, and settling a mail —
 * marked read once it has its reply or its failure mail, left unread for the next catch-up when
 * not. A collaborator of {@link BridgeRuntime}, which owns the connection it runs on.
 */
import type { MailSummary, NewMailEvent } from '@agentmail/protocol';
import {
  type CatchUp,
  messageOf,
  REDELIVERY_BACKOFF_MS,
  redeliver,
  resolveLocale,
  type SeenMails,
  STOP_GRACE_MS,
  settleWithTimeout,
} from '@agentmail/shared-policy';
import { GATEWAY_TIMEOUT_MS, type GatewayClient } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';
import { sendFailureMail } from './failure-notice.js';
import { type BridgeHost, type BridgeRuntimeConfig, TurnLostError } from './runtime-host.js';
import { TurnGate } from './turn-gate.js';
import type { StartedTurns } from './turn-journal.js';
import type { MailTurnReport } from './turn-report.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The variable naming a failpoint: the bridge process kills itself (SIGKILL) when it reaches that
 * point, so a test crashes it exactly there. `after-relay-ack`: the Gateway took the turn's relay,
 * the mail is not yet marked handled (SPEC B-10, G-32: the mail runs again after the restart, its
 * relay is then a `duplicate_relay`). Unset in production.
 */
export const FAILPOINT_VARIABLE = 'AGENTMAIL_FAILPOINT';

function failpoint(name: 'after-relay-ack'): void {
  if (process.env[FAILPOINT_VARIABLE] === name) process.kill(process.pid, 'SIGKILL');
}

/** What one delivery came to: the host's report, or a timeout (its relay committed or not). */
type Delivery = { report: MailTurnReport; late: boolean } | { timeout: true; committed: boolean };

/** What {@link MailDelivery} reads of the runtime (live values are getters: B-18 switches the client). */
export interface MailDeliveryDeps {
  host: BridgeHost;
  emit: EmitEvent;
  config: () => BridgeRuntimeConfig;
  client: () => GatewayClient;
  /** The admin's model selection from the last heartbeat (G-27). */
  allowedModels: () => readonly string[];
  /** Aborted when the runtime stops. */
  stopping: AbortSignal;
  /** The de-duplication shared by the stream and the catch-up. */
  seen: SeenMails;
  catchUp: Pick<CatchUp<MailSummary>, 'owe'>;
  /** The started-turn record (a restart runs an unsettled mail as a retry); undefined without a data dir. */
  started: StartedTurns | undefined;
}

/** Runs each mail the runtime queues (see the module comment). */
export class MailDelivery {
  readonly #deps: MailDeliveryDeps;
  /** The turns running now (the runtime's stop waits for them, bounded). */
  readonly inflight = new Set<Promise<unknown>>();

  constructor(deps: MailDeliveryDeps) {
    this.#deps = deps;
  }

  /** One delivery with its timeout (B-7); rejects with a lost turn (B-14). */
  async #deliver(mail: NewMailEvent, backlog: boolean, attempt: number, retry: boolean): Promise<Delivery> {
    if (this.#deps.stopping.aborted) throw new TurnLostError('the bridge is stopping');
    const run = new AbortController();
    const released = new AbortController();
    const gate = new TurnGate();
    const onStop = (): void => run.abort('shutdown');
    this.#deps.stopping.addEventListener('abort', onStop, { once: true });
    this.#deps.emit({
      type: 'turn_started',
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      attempt,
      backlog,
    });
    const work = Promise.resolve().then(() =>
      this.#deps.host.runMail({
        mail,
        backlog,
        attempt,
        retry: retry || attempt > 1,
        allowedModels: this.#deps.allowedModels(),
        turnTimeoutMs: this.#deps.config().turnTimeoutMs,
        client: this.#deps.client(),
        signal: run.signal,
        gate,
        released: released.signal,
      }),
    );
    this.inflight.add(work);
    try {
      const r = await settleWithTimeout(work, {
        timeoutMs: this.#deps.config().turnTimeoutMs,
        graceMs: this.#deps.config().stopGraceMs ?? STOP_GRACE_MS,
        stop: () => run.abort('timeout'),
        kill: () => undefined, // the host stops its own processes on the aborted signal
      });
      if (r.ok) return { report: r.value, late: r.late === true };
      // The turn did not end within the grace period, or it ended with an error after its timeout:
      // give it up — unless its relay is already under way, it can no longer commit one.
      if (r.reason === 'timeout' || (r.late === true && !this.#deps.stopping.aborted)) {
        const given = await gate.abandon(GATEWAY_TIMEOUT_MS);
        released.abort('given up');
        return { timeout: true, committed: given.committed };
      }
      throw r.error;
    } finally {
      this.#deps.stopping.removeEventListener('abort', onStop);
      void work.then(
        () => this.inflight.delete(work),
        () => this.inflight.delete(work),
      );
    }
  }

  /** Run one mail: redelivery (B-14), timeout (B-7), failure mail when all is lost (B-9). */
  async run(mail: NewMailEvent, backlog: boolean): Promise<void> {
    if (this.#deps.stopping.aborted) return;
    const mailId = mail.mail_id;
    // B-10, B-14: started and not yet settled (read) — until the mark-read, a crash makes the next
    // run of this mail a retry.
    const retry = this.#deps.started?.has(mailId) ?? false;
    this.#deps.started?.add(mailId);
    const result = await redeliver((attempt) => this.#deliver(mail, backlog, attempt, retry), {
      backoffMs: this.#deps.config().redeliveryBackoffMs ?? REDELIVERY_BACKOFF_MS,
      sleep,
      shouldRetry: (err) => err instanceof TurnLostError && !this.#deps.stopping.aborted,
      onRetry: ({ attempt, error, delayMs }) =>
        this.#deps.emit({
          type: 'turn_lost',
          mail_id: mailId,
          attempt,
          delay_ms: delayMs,
          error: messageOf(error),
        }),
    });
    if (!result.ok) {
      if (this.#deps.stopping.aborted) {
        this.#deps.emit({ type: 'turn_interrupted', mail_id: mailId, reason: 'shutdown' });
        return;
      }
      this.#deps.emit({
        type: 'turn_given_up',
        mail_id: mailId,
        attempts: result.attempts,
        error: messageOf(result.lastError),
      });
      await this.#markHandled(mail);
      await this.#sendFailure(mail, 'worker_lost', messageOf(result.lastError), result.attempts);
      return;
    }
    const delivery = result.value;
    const timeoutMs = this.#deps.config().turnTimeoutMs;
    if ('timeout' in delivery) {
      if (this.#deps.stopping.aborted && !delivery.committed) {
        this.#deps.emit({ type: 'turn_interrupted', mail_id: mailId, reason: 'shutdown' });
        return;
      }
      this.#deps.emit({
        type: 'turn_timed_out',
        mail_id: mailId,
        timeout_ms: timeoutMs,
        late: delivery.committed,
      });
      // Its relay went out before it was given up: that reply is the mail's one outcome.
      if (!delivery.committed) await this.#sendFailure(mail, 'timeout', `no result within ${timeoutMs} ms`);
      await this.#markHandled(mail);
      return;
    }
    const { report, late } = delivery;
    // Not settled: a failure whose mail could not be sent, or a reply the Gateway would not take.
    const unsettled = report.ok
      ? report.relay.sent === false && report.relay.undelivered === true
      : !report.failureMailSent;
    if (this.#deps.stopping.aborted && unsettled) {
      this.#deps.emit({ type: 'turn_interrupted', mail_id: mailId, reason: 'shutdown' });
      return;
    }
    if (late) this.#deps.emit({ type: 'turn_timed_out', mail_id: mailId, timeout_ms: timeoutMs, late: true });
    // The mail got its turn (or its failure mail): it is no longer backlog (B-20), so a restart
    // does not run it again. An unsettled one stays unread and is delivered again: nothing is lost.
    if (unsettled) this.#again(mail);
    else {
      if (report.ok && report.relay.sent) failpoint('after-relay-ack');
      await this.#markHandled(mail);
    }
    if (report.ok)
      this.#deps.emit({
        type: 'turn_done',
        mail_id: mailId,
        model: report.model,
        platform_session_id: report.platformSessionId,
        relay: report.relay,
        ...(report.logFields ? { fields: { ...report.logFields } } : {}),
      });
    else
      this.#deps.emit({
        type: 'turn_failed',
        mail_id: mailId,
        kind: report.kind,
        cause: report.cause,
        failure_mail: report.failureMailSent,
        ...(report.logFields ? { fields: { ...report.logFields } } : {}),
      });
  }

  /**
   * Leave an unsettled mail unread for the next catch-up pass (B-20): forget it in the
   * de-duplication set and owe a pass after the next successful heartbeat.
   */
  #again(mail: NewMailEvent): void {
    this.#deps.seen.release(mail.mail_id);
    this.#deps.catchUp.owe();
    this.#deps.emit({
      type: 'mail_not_run',
      mail_id: mail.mail_id,
      reason: 'not settled: it is delivered again by the next catch-up',
    });
  }

  /** Mark a handled mail read (B-20); a failure is reported, the next catch-up may then run it again. */
  async #markHandled(mail: NewMailEvent): Promise<void> {
    try {
      await this.#deps.client().markRead([mail.mail_id]);
      this.#deps.started?.delete(mail.mail_id);
    } catch (err) {
      this.#deps.emit({ type: 'mail_read_failed', mail_id: mail.mail_id, error: messageOf(err) });
    }
  }

  /** Send the runtime's own failure mail (B-9); true when it went out. */
  async #sendFailure(
    mail: NewMailEvent,
    kind: 'timeout' | 'worker_lost',
    cause: string,
    attempts?: number,
  ): Promise<boolean> {
    const r = await sendFailureMail(this.#deps.client(), {
      kind,
      mail,
      cause,
      agentName: this.#deps.config().agentName,
      locale: resolveLocale(this.#deps.config().locale),
      timeoutMs: this.#deps.config().turnTimeoutMs,
      ...(attempts === undefined ? {} : { attempts }),
      emit: this.#deps.emit,
    });
    return r.failureMailSent;
  }
}
