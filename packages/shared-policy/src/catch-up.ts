import type { PermissionMode } from '@agentmail/protocol';
import { AgentMailError } from './errors.js';
import { normalizePermissionMode } from './permission-mode.js';

/** Mails delivered by one catch-up pass (see SPEC B-20). @default 5 */
export const CATCH_UP_MAX_PER_PASS = 5;
/** Unread mails listed to find the oldest (the Gateway's inbox page limit). @default 100 */
export const CATCH_UP_FETCH_LIMIT = 100;
/** Mail ids remembered by {@link SeenMails}. @default 1000 */
export const SEEN_MAILS_CAPACITY = 1000;

/**
 * The mail ids a bridge has already taken for delivery, shared by the SSE path and catch-up so
 * a mail is delivered once (see SPEC B-20). A bounded LRU: past `capacity`, the id used least
 * recently is forgotten.
 */
export class SeenMails {
  readonly capacity: number;
  readonly #ids = new Set<string>();

  /** @throws AgentMailError `AM_OPTION_OUT_OF_RANGE` when `capacity` is not an integer ≥ 1. */
  constructor(capacity: number = SEEN_MAILS_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new AgentMailError(
        'AM_OPTION_OUT_OF_RANGE',
        `SeenMails "capacity" must be an integer >= 1 (got ${capacity})`,
      );
    }
    this.capacity = capacity;
  }

  /** Number of ids remembered. */
  get size(): number {
    return this.#ids.size;
  }

  /** True when `id` was claimed and not yet forgotten. */
  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /**
   * Forget `id`: its turn did not settle the mail (a relay or failure mail that could not be
   * sent), so a later catch-up pass may deliver it again (B-20: nothing is lost).
   */
  release(id: string): void {
    this.#ids.delete(id);
  }

  /**
   * Take `id` for delivery: true the first time (deliver it), false when it was already taken
   * (skip it). Either way `id` becomes the most recently used.
   */
  claim(id: string): boolean {
    const known = this.#ids.delete(id);
    this.#ids.add(id);
    while (this.#ids.size > this.capacity) {
      const oldest = this.#ids.values().next().value;
      if (oldest === undefined) break;
      this.#ids.delete(oldest);
    }
    return !known;
  }
}

/**
 * The fields catch-up reads from an inbox item. The protocol's `MailSummary` fits: `created_at`
 * is an ISO timestamp (a number is taken as ms since the epoch), `is_permission` marks
 * permission and question mails, `permission_mode` is normalised (P-2).
 */
export interface CatchUpMail {
  id: string;
  created_at: string | number;
  is_permission?: boolean;
  permission_mode?: string | null;
}

/** How a catch-up mail is delivered: always a backlog delivery, with the mail's own mode. */
export interface BacklogDelivery {
  backlog: true;
  permissionMode: PermissionMode;
}

/** Why catch-up did not deliver a listed mail. */
export interface CatchUpSkip {
  id: string;
  reason: 'seen' | 'permission' | 'over_limit';
}

/** A pure catch-up plan: what to deliver, in order, and what to skip. */
export interface CatchUpPlan<M extends CatchUpMail> {
  deliver: M[];
  skipped: CatchUpSkip[];
}

function createdAtMs(value: string | number): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY; // unparseable: last
}

/**
 * Plan one catch-up pass (see SPEC B-20): oldest first, permission mails and already-seen ids
 * skipped, at most `maxPerPass` mails. Pure: does not claim ids.
 */
export function planCatchUp<M extends CatchUpMail>(
  mails: readonly M[],
  seen: SeenMails,
  maxPerPass: number = CATCH_UP_MAX_PER_PASS,
): CatchUpPlan<M> {
  const ordered = [...mails].sort((a, b) => createdAtMs(a.created_at) - createdAtMs(b.created_at));
  const deliver: M[] = [];
  const skipped: CatchUpSkip[] = [];
  for (const mail of ordered) {
    if (mail.is_permission === true) skipped.push({ id: mail.id, reason: 'permission' });
    else if (seen.has(mail.id)) skipped.push({ id: mail.id, reason: 'seen' });
    else if (deliver.length >= maxPerPass) skipped.push({ id: mail.id, reason: 'over_limit' });
    else deliver.push(mail);
  }
  return { deliver, skipped };
}

/** Options of {@link CatchUp}. */
export interface CatchUpOptions<M extends CatchUpMail> {
  /** List unread mails (`GET /mail/inbox?status=unread&limit=`); any order. */
  listUnread: (limit: number) => Promise<readonly M[]>;
  /** Run a turn on one mail; catch-up awaits it before the next (serial). */
  deliver: (mail: M, delivery: BacklogDelivery) => Promise<void> | void;
  /** The de-duplication set shared with the SSE path. */
  seen: SeenMails;
  /** @default CATCH_UP_MAX_PER_PASS */
  maxPerPass?: number;
  /** @default CATCH_UP_FETCH_LIMIT */
  fetchLimit?: number;
}

/** Outcome of {@link CatchUp.afterHeartbeat} and {@link CatchUp.again}. */
export type CatchUpResult<M extends CatchUpMail> =
  | { status: 'waiting' }
  | { status: 'already_ran' }
  | { status: 'list_failed'; error: unknown }
  | {
      status: 'ran';
      delivered: M[];
      skipped: CatchUpSkip[];
      failed: Array<{ mail: M; error: unknown }>;
    };

/**
 * Delivers the mail that arrived while the bridge was offline, once, after the first successful
 * heartbeat (see SPEC B-20, G-39), and once more after each {@link CatchUp.again} (an event
 * stream that reopened without a `Last-Event-ID`, so the Gateway replayed nothing).
 *
 * Each mail is claimed in the shared {@link SeenMails} right before its delivery (a mail the SSE
 * path delivered meanwhile is skipped) and delivered with `{ backlog: true, permissionMode }`.
 * A failing `deliver` is recorded and the pass goes on. If listing the inbox fails, the pass did
 * not happen: the next successful heartbeat tries again. Passes never overlap. Never throws.
 *
 * @example
 * const catchUp = new CatchUp({ listUnread, deliver, seen });
 * heartbeat.onResult((ok) => catchUp.afterHeartbeat(ok).then(logResult));
 * sse.onOpen(({ lastEventId }) => { if (lastEventId === undefined) void catchUp.again().then(logResult); });
 */
export class CatchUp<M extends CatchUpMail> {
  readonly #options: CatchUpOptions<M>;
  /** A pass is due: the start pass, one asked for by again(), or one whose listing failed. */
  #owed = true;
  /** A pass has begun once (the B-20 start gate: the first successful heartbeat). */
  #begun = false;
  #running: Promise<CatchUpResult<M>> | undefined;

  constructor(options: CatchUpOptions<M>) {
    this.#options = options;
  }

  /**
   * Call after every heartbeat: runs the due pass when `ok` (the start pass on the first
   * successful heartbeat, or a pass whose listing failed); otherwise `already_ran` (nothing due,
   * or a pass is running) or `waiting`.
   */
  async afterHeartbeat(ok: boolean): Promise<CatchUpResult<M>> {
    if (!this.#owed || this.#running) return { status: 'already_ran' };
    if (!ok) return { status: 'waiting' };
    return this.#start();
  }

  /**
   * Owe one more pass, run after the next successful heartbeat: a mail was left unread on purpose
   * (its reply or failure mail could not be sent) and must be delivered again (B-20).
   */
  owe(): void {
    this.#owed = true;
  }

  /**
   * Ask for one more pass: call when the event stream (re)opened without a `Last-Event-ID`, so a
   * mail created while it was down is on neither the stream nor any earlier listing (see SPEC
   * B-20, G-22). Before the start pass has begun this only returns `waiting` (the start pass
   * covers it); while a pass runs it waits for it, then runs one (requests made meanwhile share
   * that one pass: `already_ran`). A failed listing stays due for the next successful heartbeat.
   */
  async again(): Promise<CatchUpResult<M>> {
    this.#owed = true;
    if (!this.#begun) return { status: 'waiting' };
    while (this.#running) await this.#running;
    if (!this.#owed) return { status: 'already_ran' };
    return this.#start();
  }

  #start(): Promise<CatchUpResult<M>> {
    const run = this.#pass().finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    return run;
  }

  async #pass(): Promise<CatchUpResult<M>> {
    this.#owed = false;
    this.#begun = true;
    const { listUnread, deliver, seen } = this.#options;
    let listed: readonly M[];
    try {
      listed = await listUnread(this.#options.fetchLimit ?? CATCH_UP_FETCH_LIMIT);
    } catch (error) {
      this.#owed = true;
      return { status: 'list_failed', error };
    }
    const plan = planCatchUp(listed, seen, this.#options.maxPerPass ?? CATCH_UP_MAX_PER_PASS);
    const delivered: M[] = [];
    const failed: Array<{ mail: M; error: unknown }> = [];
    const skipped = [...plan.skipped];
    for (const mail of plan.deliver) {
      if (!seen.claim(mail.id)) {
        skipped.push({ id: mail.id, reason: 'seen' });
        continue;
      }
      try {
        await deliver(mail, { backlog: true, permissionMode: normalizePermissionMode(mail.permission_mode) });
        delivered.push(mail);
      } catch (error) {
        failed.push({ mail, error });
      }
    }
    return { status: 'ran', delivered, skipped, failed };
  }
}
