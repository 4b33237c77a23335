/**
 * One outcome per mail (see SPEC B-7, B-9, B-10): the relay of a turn and the runtime's timeout
 * failure mail must never both happen. The turn "commits" its relay through the gate; the runtime
 * "abandons" a turn whose work did not settle within the grace period. Whichever comes first wins:
 * an abandoned turn cannot commit, and the runtime waits for a commit under way before it
 * decides whether to send its failure mail.
 */

/** How an abandon ended: no commit happened (send the failure mail), or one did (do not). */
export type AbandonResult = { committed: false } | { committed: true; ok: boolean };

/**
 * The commit gate of one turn attempt (in-process side).
 *
 * @example
 * const sent = await gate.commit(() => client.send(relay)); // undefined: abandoned, not sent
 * // runtime, after the grace period:
 * const r = await gate.abandon(30_000); if (!r.committed) await sendTimeoutFailureMail();
 */
export class TurnGate {
  #abandoned = false;
  #committing: Promise<boolean> | undefined;
  #committed: boolean | undefined;

  /** True once {@link abandon} ran: the turn's outcome is the runtime's. */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /**
   * Run `fn` (the relay send) unless the turn was abandoned; resolves `undefined` when it was.
   * The runtime's {@link abandon} waits for `fn` to settle. Rejects with `fn`'s error.
   */
  async commit<T>(fn: () => Promise<T>): Promise<T | undefined> {
    if (this.#abandoned) return undefined;
    let ok = false;
    let done!: (ok: boolean) => void;
    this.#committing = new Promise<boolean>((resolve) => {
      done = resolve;
    });
    try {
      const value = await fn();
      ok = true;
      return value;
    } finally {
      this.#committed = ok;
      done(ok);
    }
  }

  /**
   * Give the turn up: no commit may start after this. A commit under way is awaited (at most
   * `waitMs`; past that it counts as committed, since its request may have reached the Gateway).
   */
  async abandon(waitMs: number): Promise<AbandonResult> {
    this.#abandoned = true;
    if (this.#committed !== undefined) return { committed: true, ok: this.#committed };
    if (this.#committing === undefined) return { committed: false };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ok = await Promise.race([
      this.#committing,
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), waitMs);
      }),
    ]);
    clearTimeout(timer);
    return { committed: true, ok };
  }
}

/** A commit function as a turn sees it (in-process: {@link TurnGate.commit}; a worker: an IPC round trip). */
export type CommitFn = <T>(fn: () => Promise<T>) => Promise<T | undefined>;
