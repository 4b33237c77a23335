import type { FreshMail } from '@agentmail/protocol';
import { type ApprovalDecision, parseApproval } from './approval.js';
import { formatText, type Locale } from './texts/index.js';

/** How long a decision that arrived before its `wait()` is kept, in ms. @default 60_000 */
export const EARLY_DECISION_TTL_MS = 60_000;
/** Most early decisions kept at once (oldest dropped first). @default 256 */
export const EARLY_DECISIONS_MAX = 256;

/** Why a wait ended: a person decided, or the bridge denied on its own. */
export type DecisionSource = 'person' | 'timeout' | 'aborted' | 'shutdown';

/** The outcome of a permission or question request (see SPEC G-21, P-4, P-6, P-7). */
export interface PermissionDecision {
  /** The approval, parsed fail-closed from the wire word with {@link parseApproval}; a question's `answered` is `deny` here: read `answers`. */
  decision: ApprovalDecision;
  /** The wire decision word as received (`approve_once`, `answered`, …); '' when the bridge decided. */
  raw: string;
  /** Question answers: chosen option labels, or the free text as one element. */
  answers: string[];
  /** The person's note; '' when none. */
  note: string;
  /** Mails that reached the asking session while the person was deciding. */
  freshMails: FreshMail[];
  source: DecisionSource;
  /** For a bridge-side denial (`timeout`, `aborted`, `shutdown`): why, for the log. */
  reason?: string;
}

/**
 * A `permission_decision` event as it may arrive. The protocol's `PermissionDecisionEvent` fits;
 * every field but `relay_key` is read leniently, because a malformed event must still wake the
 * waiting call (as a denial) instead of leaving it hanging.
 */
export interface PermissionDecisionInput {
  relay_key: string;
  decision?: unknown;
  answers?: unknown;
  note?: unknown;
  fresh_mails?: unknown;
}

/** Options of {@link PendingPermissions.wait}. */
export interface WaitOptions {
  /** Abort the wait (the turn was stopped): resolves as denied with source `aborted`. */
  signal?: AbortSignal;
  /** Give up after this many ms: resolves as denied with source `timeout`. @default no timeout */
  timeoutMs?: number;
}

/** A decision that woke no waiting call, and what became of it (every decision ends in a woken call or one of these). */
export interface UnclaimedDecision {
  relay_key: string;
  /** The wire decision word as received. */
  decision: string;
  /**
   * `kept`: arrived before its `wait()` (kept for {@link EARLY_DECISION_TTL_MS}); `expired`: no
   * call took it in time (its turn ended); `evicted`: more than {@link EARLY_DECISIONS_MAX} kept;
   * `closed`: the registry is closed (shutdown).
   */
  why: 'kept' | 'expired' | 'evicted' | 'closed';
}

/** Options of {@link PendingPermissions}. */
export interface PendingPermissionsOptions {
  /** Closing this signal closes the registry ({@link PendingPermissions.close}). */
  signal?: AbortSignal;
  /**
   * Told of every decision that wakes no call: kept for a later wait, expired unused, evicted,
   * dropped at shutdown (the bridge turns it into an event, so each decision ends in a reason).
   * @default ignored
   */
  onUnclaimed?: (info: UnclaimedDecision) => void;
  /** @default EARLY_DECISION_TTL_MS */
  earlyDecisionTtlMs?: number;
  /** Clock, in ms. @default Date.now */
  now?: () => number;
}

function parseFreshMails(value: unknown): FreshMail[] {
  if (!Array.isArray(value)) return [];
  const mails: FreshMail[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null) continue;
    const m = item as Record<string, unknown>;
    if (typeof m.subject !== 'string') continue;
    mails.push({
      mail_id: typeof m.mail_id === 'string' ? m.mail_id : '',
      from_name: typeof m.from_name === 'string' ? m.from_name : '',
      from_human: m.from_human === true,
      subject: m.subject,
    });
  }
  return mails;
}

/** Build the decision for an event; never throws, whatever the event holds. */
function toDecision(event: PermissionDecisionInput): PermissionDecision {
  const raw = typeof event.decision === 'string' ? event.decision : '';
  return {
    decision: parseApproval(raw),
    raw,
    answers: Array.isArray(event.answers)
      ? event.answers.filter((a): a is string => typeof a === 'string')
      : [],
    note: typeof event.note === 'string' ? event.note : '',
    freshMails: parseFreshMails(event.fresh_mails),
    source: 'person',
  };
}

function bridgeDenial(source: Exclude<DecisionSource, 'person'>, reason: string): PermissionDecision {
  return { decision: 'deny', raw: '', answers: [], note: '', freshMails: [], source, reason };
}

/** The denial for an aborted wait: a signal aborted with reason `'shutdown'` (B-15) is a shutdown. */
function abortDenial(signal: AbortSignal): PermissionDecision {
  return signal.reason === 'shutdown'
    ? bridgeDenial('shutdown', 'the bridge is shutting down')
    : bridgeDenial('aborted', 'the turn was stopped');
}

interface Waiter {
  settle(decision: PermissionDecision): void;
}

interface EarlyDecision {
  decision: PermissionDecision;
  at: number;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Calls waiting for a person's decision, keyed by relay key (see SPEC P-6, P-7).
 *
 * - {@link PendingPermissions.wait} never rejects: it resolves with the decision, or with a
 *   denial on timeout, abort or shutdown.
 * - {@link PendingPermissions.resolve} builds the complete decision (note and fresh mails
 *   included) before it wakes the waiter, and always wakes it — a malformed event or an unknown
 *   decision word is a denial, never a hang.
 * - A decision that arrives before `wait()` (the SSE event beat the request's answer) is kept
 *   for {@link EARLY_DECISION_TTL_MS} so it is not lost; one no call takes (its turn ended) is
 *   then dropped with an info line naming its `relay_key` (`log` option): every decision ends
 *   in a woken call or a logged reason.
 * - A wait whose signal aborts with reason `'shutdown'` (B-15) resolves with source `shutdown`,
 *   any other abort with source `aborted`.
 * - {@link PendingPermissions.denyAll} denies every pending wait; {@link PendingPermissions.close}
 *   does that and makes later waits resolve denied at once (shutdown, B-15).
 *
 * @example
 * const pending = new PendingPermissions({ signal: shutdown.signal });
 * sse.on('permission_decision', (e) => pending.resolve(e));
 * const d = await pending.wait(relayKey, { signal: turn.signal });
 * if (d.decision === 'deny') return { block: true, reason: denialText({ ...d, cause: d.source }) };
 */
export class PendingPermissions {
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #early = new Map<string, EarlyDecision>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #signal: AbortSignal | undefined;
  readonly #onUnclaimed: (info: UnclaimedDecision) => void;
  readonly #onAbort = (): void => this.close('shutdown');
  #closed = false;

  constructor(options: PendingPermissionsOptions = {}) {
    this.#ttlMs = options.earlyDecisionTtlMs ?? EARLY_DECISION_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#signal = options.signal;
    this.#onUnclaimed = options.onUnclaimed ?? (() => undefined);
    if (this.#signal?.aborted) this.#closed = true;
    else this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Number of relay keys with a waiting call. */
  get pending(): number {
    return this.#waiters.size;
  }

  /** Wait for the decision on `relayKey`. Never rejects. */
  wait(relayKey: string, options: WaitOptions = {}): Promise<PermissionDecision> {
    if (this.#closed) return Promise.resolve(bridgeDenial('shutdown', 'the bridge is shutting down'));
    this.#pruneEarly();
    const early = this.#early.get(relayKey);
    if (early !== undefined) {
      clearTimeout(early.timer);
      this.#early.delete(relayKey);
      return Promise.resolve(early.decision);
    }
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.resolve(abortDenial(signal));

    return new Promise<PermissionDecision>((resolvePromise) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => {
        if (signal) waiter.settle(abortDenial(signal));
      };
      const waiter: Waiter = {
        settle: (decision) => {
          const set = this.#waiters.get(relayKey);
          if (set === undefined || !set.delete(waiter)) return; // already settled
          if (set.size === 0) this.#waiters.delete(relayKey);
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolvePromise(decision);
        },
      };
      let set = this.#waiters.get(relayKey);
      if (set === undefined) {
        set = new Set();
        this.#waiters.set(relayKey, set);
      }
      set.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(
          () => waiter.settle(bridgeDenial('timeout', `no decision within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }
    });
  }

  /**
   * Deliver a `permission_decision` event. Returns true when it woke at least one waiting call;
   * false when it was kept for a later `wait()` (or dropped because the registry is closed).
   * A kept decision that no `wait()` takes within the TTL is dropped and reported to
   * `onUnclaimed` (its turn ended: stopped, timed out, or the bridge restarted).
   */
  resolve(event: PermissionDecisionInput): boolean {
    const decision = toDecision(event);
    const fields = { relay_key: event.relay_key, decision: decision.raw };
    if (this.#closed) {
      this.#onUnclaimed({ ...fields, why: 'closed' });
      return false;
    }
    const set = this.#waiters.get(event.relay_key);
    if (set === undefined || set.size === 0) {
      this.#pruneEarly();
      const previous = this.#early.get(event.relay_key);
      if (previous !== undefined) clearTimeout(previous.timer);
      this.#early.delete(event.relay_key); // re-insert: newest last
      const timer = setTimeout(() => this.#dropEarly(event.relay_key, 'expired'), this.#ttlMs);
      timer.unref?.();
      this.#early.set(event.relay_key, { decision, at: this.#now(), timer });
      this.#onUnclaimed({ ...fields, why: 'kept' });
      while (this.#early.size > EARLY_DECISIONS_MAX) {
        const oldest = this.#early.keys().next().value;
        if (oldest === undefined) break;
        this.#dropEarly(oldest, 'evicted');
      }
      return false;
    }
    for (const waiter of [...set]) waiter.settle(decision);
    return true;
  }

  /** Resolve every pending wait as denied (source `shutdown`) with `reason` for the log (see SPEC P-7). */
  denyAll(reason: string): void {
    for (const set of [...this.#waiters.values()]) {
      for (const waiter of [...set]) waiter.settle(bridgeDenial('shutdown', reason));
    }
  }

  /** Deny every pending wait and refuse new ones (they resolve denied at once). Idempotent. */
  close(reason = 'the bridge is shutting down'): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.denyAll(reason);
    for (const key of [...this.#early.keys()]) this.#dropEarly(key, 'closed');
  }

  #pruneEarly(): void {
    const cutoff = this.#now() - this.#ttlMs;
    for (const [key, entry] of this.#early) if (entry.at < cutoff) this.#dropEarly(key, 'expired');
  }

  /** Forget a kept decision, with its logged reason (every decision ends in one). */
  #dropEarly(relayKey: string, why: 'expired' | 'evicted' | 'closed'): void {
    const entry = this.#early.get(relayKey);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.#early.delete(relayKey);
    this.#onUnclaimed({ relay_key: relayKey, decision: entry.decision.raw, why });
  }
}

/** Input of {@link denialText}. */
export interface DenialTextInput {
  /** The person's note. */
  note?: string;
  /** Mails that arrived while the call waited. */
  freshMails?: ReadonlyArray<{ subject: string; from_name: string }>;
  /** Who denied: a person, or the bridge on timeout / abort / shutdown. @default 'person' */
  cause?: DecisionSource;
  /** @default 'en' */
  locale?: Locale;
}

/**
 * The denial text the model sees as the tool result (see SPEC P-6, P-7): who denied, the
 * person's note, and the subjects of mails that arrived while waiting, so the model can change
 * course instead of asking again. A shutdown denial instead says to stop for now: the mail runs
 * again after the restart, when asking again is right.
 *
 * @example denialText({ note: 'use the staging db', freshMails: [{ subject: 'wait', from_name: 'ann' }] })
 */
export function denialText(input: DenialTextInput): string {
  const { locale } = input;
  const cause = input.cause ?? 'person';
  const lines = [formatText(`permission.denied.${cause}` as const, {}, locale)];
  // A shutdown is no refusal: the mail runs again after the restart, and the person may approve then.
  const advice = cause === 'shutdown' ? 'permission.denied.advice_shutdown' : 'permission.denied.advice';
  const note = input.note?.trim();
  if (note) lines.push(formatText('permission.denied.note', { note }, locale));
  const mails = input.freshMails ?? [];
  if (mails.length > 0) {
    lines.push(formatText('permission.denied.fresh_mails', {}, locale));
    for (const m of mails) {
      lines.push(
        formatText('permission.denied.fresh_mail', { subject: m.subject, from_name: m.from_name }, locale),
      );
    }
  }
  lines.push(formatText(advice, {}, locale));
  return lines.join('\n');
}
