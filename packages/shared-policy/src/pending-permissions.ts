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

/** Options of {@link PendingPermissions}. */
export interface PendingPermissionsOptions {
  /** Closing this signal closes the registry ({@link PendingPermissions.close}). */
  signal?: AbortSignal;
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

interface Waiter {
  settle(decision: PermissionDecision): void;
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
 *   for {@link EARLY_DECISION_TTL_MS} so it is not lost.
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
  readonly #early = new Map<string, { decision: PermissionDecision; at: number }>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.close('shutdown');
  #closed = false;

  constructor(options: PendingPermissionsOptions = {}) {
    this.#ttlMs = options.earlyDecisionTtlMs ?? EARLY_DECISION_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#signal = options.signal;
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
      this.#early.delete(relayKey);
      return Promise.resolve(early.decision);
    }
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.resolve(bridgeDenial('aborted', 'the turn was stopped'));

    return new Promise<PermissionDecision>((resolvePromise) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => waiter.settle(bridgeDenial('aborted', 'the turn was stopped'));
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
   */
  resolve(event: PermissionDecisionInput): boolean {
    if (this.#closed) return false;
    const decision = toDecision(event);
    const set = this.#waiters.get(event.relay_key);
    if (set === undefined || set.size === 0) {
      this.#pruneEarly();
      this.#early.set(event.relay_key, { decision, at: this.#now() });
      while (this.#early.size > EARLY_DECISIONS_MAX) {
        const oldest = this.#early.keys().next().value;
        if (oldest === undefined) break;
        this.#early.delete(oldest);
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
    this.#early.clear();
  }

  #pruneEarly(): void {
    const cutoff = this.#now() - this.#ttlMs;
    for (const [key, entry] of this.#early) if (entry.at < cutoff) this.#early.delete(key);
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
 * The denial text the model sees as the tool result (see SPEC P-6): who denied, the person's
 * note, and the subjects of mails that arrived while waiting, so the model can change course
 * instead of asking again.
 *
 * @example denialText({ note: 'use the staging db', freshMails: [{ subject: 'wait', from_name: 'ann' }] })
 */
export function denialText(input: DenialTextInput): string {
  const { locale } = input;
  const cause = input.cause ?? 'person';
  const lines = [formatText(`permission.denied.${cause}` as const, {}, locale)];
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
  lines.push(formatText('permission.denied.advice', {}, locale));
  return lines.join('\n');
}
