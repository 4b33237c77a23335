/**
 * The turns running now, found by the host's hooks (by platform session id) and by out-of-process
 * tool and hook processes (by their per-turn token, SPEC B-21). A turn carries its own permission
 * seam: {@link ActiveTurn.decide} is the whole P-1..P-8 flow bound to this mail.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import type { Locale, Question } from '@agentmail/shared-policy';
import type { MailToolContext } from './mail-tools.js';
import type { GuardedCall, PermissionOutcome } from './permission-flow.js';
import type { QuestionOutcome } from './question-flow.js';
import type { TurnRpcEnv } from './rpc/wire.js';

/** A tool call a host's hook saw, as the turn's permission seam takes it. */
export type GuardedCallInput = Omit<GuardedCall, 'cwd' | 'platformSessionId'> & {
  /** @default the turn's working directory */
  cwd?: string;
  /** @default the platform session the turn is attached to */
  platformSessionId?: string;
};

/** A running mail turn (one delivery attempt of one mail). */
export interface ActiveTurn {
  /** `<mail id>#<delivery attempt>`: the explicit-send record's key (B-10). */
  readonly turnId: string;
  readonly mail: NewMailEvent;
  readonly cwd: string;
  readonly locale: Locale;
  /** Aborted on timeout or shutdown. */
  readonly signal: AbortSignal;
  readonly toolContext: MailToolContext;
  /** The platform sessions this turn runs in (attached by the kit when known). */
  readonly platformSessionIds: ReadonlySet<string>;
  /**
   * Decide a guarded call of this mail-driven turn (P-1..P-8): mode, "always" grants, asking the
   * person by mail and waiting (woken on decision; denied on timeout, abort, shutdown), fail
   * closed on every failure (no local UI to yield to). Never throws. `options.signal`: the host's
   * own cancellation of this call (e.g. DSH's `exec.signal`); the wait ends, denied, when it aborts.
   */
  decide(call: GuardedCallInput, options?: { signal?: AbortSignal }): Promise<PermissionOutcome>;
  /**
   * Ask the person the questions of one `ask_user_question`-style call by mail and wait (P-9).
   * Never throws: a failure is `{ ok: false, error }`, the text to answer the model with at once.
   * The answer is waited for until the bridge's question timeout (`AGENTMAIL_QUESTION_TIMEOUT_MS`,
   * default half the turn timeout), the turn's end or `call.signal` (the host's own cancellation).
   */
  ask(
    questions: readonly Question[],
    call?: { toolCallId?: string; platformSessionId?: string; signal?: AbortSignal; tool?: string },
  ): Promise<QuestionOutcome>;
  /** Record that the model mailed `targets` itself (B-10: the auto relay then skips them). */
  recordSend(targets: readonly string[]): Promise<void>;
  /**
   * With the kit's turn RPC on (`createBridge({ rpc: true })`): the variables a host process of
   * this turn (an MCP tool server, a hook) needs to reach the bridge (B-21). Valid while the turn runs.
   */
  rpcEnv?: TurnRpcEnv;
}

/**
 * The registry of running turns. A host hook finds the turn of a platform session with
 * {@link TurnRegistry.byPlatformSession}; a session a person opened has none (keep the host's own
 * prompts there, P-5).
 */
export class TurnRegistry {
  readonly #turns = new Set<ActiveTurn & { platformSessionIds: Set<string> }>();

  /** Register a running turn; returns its removal. */
  add(turn: ActiveTurn & { platformSessionIds: Set<string> }): () => void {
    this.#turns.add(turn);
    return () => {
      this.#turns.delete(turn);
    };
  }

  /** Attach a platform session id to a running turn (its hooks then find the turn). */
  attach(turn: ActiveTurn, platformSessionId: string): void {
    for (const t of this.#turns)
      if (t === turn && platformSessionId !== '') t.platformSessionIds.add(platformSessionId);
  }

  /** The mail-driven turn running in platform session `id`, if any. */
  byPlatformSession(id: string): ActiveTurn | undefined {
    if (id === '') return undefined;
    for (const t of this.#turns) if (t.platformSessionIds.has(id)) return t;
    return undefined;
  }

  /** Turns running now. */
  get size(): number {
    return this.#turns.size;
  }

  /** Every running turn. */
  list(): ActiveTurn[] {
    return [...this.#turns];
  }
}
