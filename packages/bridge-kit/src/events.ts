/**
 * The bridge's lifecycle as typed events (see STYLE "lifecycle as a typed event union"): the
 * runtime, the mail turn and the permission flow emit them; logging is one subscriber
 * ({@link logBridgeEvents}), tests and bridges are others. No behaviour depends on a log line.
 */
import type { FailureKind } from '@agentmail/shared-policy';

/** Why a catch-up pass ran (see SPEC B-20). */
export type CatchUpTrigger = 'start' | 'heartbeat' | 'stream_reopened';

/** The relay outcome of a finished turn (see SPEC B-10). */
export type RelayOutcome =
  | { sent: true; mailId: string; duplicate: boolean }
  | { sent: false; reason: string };

/**
 * Every lifecycle event of a bridge: a discriminated union on `type`. Fields are JSON scalars or
 * small arrays, so an event crosses a process boundary (a worker's events reach the daemon's bus;
 * a child process's events reach a test through its JSON log lines, field `event`).
 */
export type BridgeEvent =
  // ---- the bridge lock (one bridge per agent and data directory, SPEC G-22)
  | { type: 'standby'; lock: string; holder_pid?: number; holder_host?: string }
  | { type: 'lock_taken'; lock: string; takeover: boolean; waited_ms: number }
  | { type: 'lock_lost'; lock: string; error: string }
  // ---- start and connection (B-1, B-2, B-18, B-20, G-25)
  | { type: 'start_failed'; error: string; permanent: boolean; retry_ms: number }
  | { type: 'registered'; agent: string; platform: string; created: boolean }
  | { type: 'heartbeat_failed'; error: string }
  | { type: 'snapshot_partial'; part: 'sessions' | 'models'; error: string }
  | { type: 'stream_open'; connection: number; url: string; last_event_id?: string }
  | { type: 'stream_problem'; code: string; error: string }
  | {
      type: 'catch_up_done';
      trigger: CatchUpTrigger;
      delivered: string[];
      skipped: Array<{ id: string; reason: string }>;
      failed: number;
    }
  | { type: 'catch_up_failed'; trigger: CatchUpTrigger; error: string }
  | { type: 'ready'; agent: string }
  | { type: 'reconnected'; url: string }
  // ---- mails (B-13, B-14, B-20)
  | { type: 'mail_queued'; mail_id: string; session_id: string; from: string; backlog: boolean }
  | { type: 'mail_duplicate'; mail_id: string }
  | { type: 'mail_not_run'; mail_id: string; reason: string }
  | { type: 'mail_read_failed'; mail_id: string; error: string }
  // ---- one turn (B-3..B-11)
  | { type: 'turn_started'; mail_id: string; session_id: string; attempt: number; backlog: boolean }
  | { type: 'workspace_fallback'; mail_id: string; cwd: string; reason: string }
  | { type: 'binding_gone'; mail_id: string; session_id: string; platform_session_id: string }
  | { type: 'model_order'; mail_id: string; host_default: boolean; line: string }
  | { type: 'attempt_failed'; mail_id: string; index: number; model: string; cause: string }
  | { type: 'attempt_not_discarded'; mail_id: string; error: string }
  | {
      type: 'turn_done';
      mail_id: string;
      model: string;
      platform_session_id: string;
      relay: RelayOutcome;
      fields?: Record<string, string | number | boolean>;
    }
  | {
      type: 'turn_failed';
      mail_id: string;
      kind: FailureKind;
      cause: string;
      failure_mail: boolean;
      fields?: Record<string, string | number | boolean>;
    }
  | { type: 'turn_timed_out'; mail_id: string; timeout_ms: number; late: boolean }
  | { type: 'turn_lost'; mail_id: string; attempt: number; delay_ms: number; error: string }
  | { type: 'turn_given_up'; mail_id: string; attempts: number; error: string }
  | { type: 'turn_interrupted'; mail_id: string; reason: string }
  | { type: 'relayed'; mail_id: string; to: string; relay_key: string; duplicate: boolean }
  | { type: 'relay_skipped'; mail_id: string; reason: string }
  | { type: 'relay_failed'; mail_id: string; error: string }
  | { type: 'failure_mail_sent'; mail_id: string; kind: FailureKind; duplicate: boolean }
  | { type: 'failure_mail_failed'; mail_id: string; kind: FailureKind; error: string }
  | { type: 'naming_synced'; mail_id: string; alias: string; title: string }
  | { type: 'naming_sync_skipped'; mail_id: string; reason: string }
  | { type: 'naming_sync_failed'; mail_id: string; error: string }
  // ---- permissions (P-1..P-9)
  | { type: 'enforcement'; mode: 'native' | 'advisory'; reason?: string }
  /** The workspace sandbox's start-time self-check (P-12): each canary, and the outcome. */
  | {
      type: 'sandbox_checked';
      verified: boolean;
      reason?: string;
      canaries: Array<{ id: string; ok: boolean; detail: string }>;
    }
  | { type: 'permission_refused'; tool: string; mode: string }
  | {
      type: 'permission_asked';
      tool: string;
      relay_key: string;
      request_id: string;
      kind: 'approval' | 'question';
    }
  | { type: 'permission_decided'; tool: string; relay_key: string; decision: string; source: string }
  | { type: 'permission_failed'; tool: string; outcome: 'allow' | 'deny' | 'yield'; reason: string }
  | { type: 'grant_not_stored'; tool: string; error: string }
  /**
   * The wait ended without a person's decision (timeout, stop, shutdown): the request was
   * withdrawn at the Gateway (`status` after the call: `withdrawn`, or `decided` when the person
   * was first), or the withdrawal failed (`error`; the Gateway expires it when the bridge starts again).
   */
  | {
      type: 'permission_withdrawn';
      tool: string;
      request_id: string;
      reason: string;
      status?: string;
      error?: string;
    }
  | {
      type: 'decision_unclaimed';
      relay_key: string;
      decision: string;
      why: 'kept' | 'expired' | 'evicted' | 'closed';
    }
  // ---- the turn RPC of out-of-process hosts (B-21)
  | {
      type: 'rpc_problem';
      problem:
        | 'server_error'
        | 'request_too_long'
        | 'request_invalid'
        | 'token_refused'
        | 'handler_failed'
        | 'result_invalid';
      method?: string;
      error?: string;
    }
  // ---- stop (B-15)
  | { type: 'stopping'; turns: number }
  | { type: 'stopped' };

/** The `type` of a {@link BridgeEvent}. */
export type BridgeEventType = BridgeEvent['type'];

/** The event of one type. */
export type BridgeEventOf<T extends string, E extends { type: string } = BridgeEvent> = Extract<
  E,
  { type: T }
>;

/** A listener; a throw is caught and reported to `onListenerError`, never to the emitter. */
export type BridgeEventListener<E> = (event: E) => void;

/** Options of {@link BridgeEventBus.next}. */
export interface NextEventOptions {
  /** Reject after this many ms. @default no timeout */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * A synchronous event bus: `emit` calls every listener in subscription order. Generic over the
 * event union, so a bridge can add its host's own events (`BridgeEvent | PiEvent`).
 *
 * @example
 * const off = bus.subscribe((e) => { if (e.type === 'turn_done') count++; });
 * const ready = await bus.next('ready', undefined, { timeoutMs: 30_000 });
 * off();
 */
export class BridgeEventBus<E extends { type: string } = BridgeEvent> {
  readonly #listeners = new Set<BridgeEventListener<E>>();
  readonly #onListenerError: (err: unknown, event: E) => void;

  /** @param onListenerError where a throwing listener is reported. @default writes to stderr */
  constructor(onListenerError?: (err: unknown, event: E) => void) {
    this.#onListenerError =
      onListenerError ??
      ((err, event) =>
        process.stderr.write(
          `agentmail: a bridge event listener failed on "${event.type}": ${String(err)}\n`,
        ));
  }

  /** Add a listener; returns its unsubscribe function. */
  subscribe(listener: BridgeEventListener<E>): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Deliver `event` to every listener, synchronously. Never throws. */
  emit(event: E): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (err) {
        try {
          this.#onListenerError(err, event);
        } catch {
          // a failing error reporter must not break the emitter
        }
      }
    }
  }

  /**
   * The next event of `type` (matching `where`, when given), emitted after this call.
   * @throws Error on timeout or abort, naming the awaited type.
   */
  next<T extends E['type']>(
    type: T,
    where?: (event: Extract<E, { type: T }>) => boolean,
    options: NextEventOptions = {},
  ): Promise<Extract<E, { type: T }>> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (): void => {
        off();
        if (timer !== undefined) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      };
      const off = this.subscribe((event) => {
        if (event.type !== type) return;
        const e = event as Extract<E, { type: T }>;
        if (where && !where(e)) return;
        done();
        resolve(e);
      });
      const onAbort = (): void => {
        done();
        reject(new Error(`stopped waiting for the bridge event "${type}"`));
      };
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.timeoutMs !== undefined)
        timer = setTimeout(() => {
          done();
          reject(new Error(`no bridge event "${type}" within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
    });
  }
}

/** Anything events can be emitted into (a bus, or a forwarder across a process boundary). */
export type EmitEvent<E extends { type: string } = BridgeEvent> = (event: E) => void;
