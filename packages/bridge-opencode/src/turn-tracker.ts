/**
 * Turns opencode bus events into exactly one outcome per turn (SPEC B-7, SPEC §7 opencode).
 *
 * `promptAsync` returns 204 at once; the turn's result arrives later on the bus. What opencode
 * 1.18.33 really sends (recorded in test/fixtures/events.ts):
 * - success: `session.status busy` … `session.status idle`, `session.idle`;
 * - provider error (400): busy, `session.error`, idle, `session.idle`, then the assistant
 *   `message.updated` carrying `info.error`, then a **second** idle + `session.idle`;
 * - unknown model: busy, `session.error` (UnknownError), idle, `session.idle`, then a **second
 *   `session.error`** (with a stack trace) after the idle;
 * - abort: `session.error` MessageAbortedError when the model request was in flight, but an
 *   abort can also end a turn with only the assistant `info.error` (no `session.error`);
 * - permission rejected without a message: the tool part errors, `permission.replied reject`,
 *   and the loop stops: idle without any error (with a message the loop goes on: a new
 *   `step-start` follows);
 * - 5xx / rate limits: `session.status retry` (attempt n, message, next) between busy states.
 *
 * Rules: a turn counts as started at its first busy/retry status after {@link TurnTracker.begin};
 * errors and idles before that belong to the previous turn and are ignored; the first error
 * wins; the first `session.idle` after the start settles the turn; anything later is ignored.
 */

/** How one turn ended. `cause` is opencode's own words. */
export type TurnOutcome =
  | { ok: true }
  | {
      ok: false;
      /** `error`: provider/opencode error; `aborted`: the turn was aborted; `permission_rejected`: a person rejected a tool call and the loop stopped. */
      kind: 'error' | 'aborted' | 'permission_rejected';
      cause: string;
      /** opencode's error name (`APIError`, `UnknownError`, `MessageAbortedError`, …), when there was one. */
      errorName?: string;
    };

/** A bus event as the plugin's `event` hook and `GET /event` deliver it (v2 shapes at run time). */
export interface OpencodeBusEvent {
  type: string;
  properties?: unknown;
}

interface ErrorInfo {
  name?: string;
  data?: { message?: unknown; statusCode?: unknown };
}

interface TurnState {
  began: number;
  started: boolean;
  error: ErrorInfo | undefined;
  /** Set by `permission.replied reject`, cleared when the loop goes on (`step-start`). */
  rejected: boolean;
  rejectionText: string | undefined;
  resolve: (outcome: TurnOutcome) => void;
}

/** `Name (HTTP n): message`, or the name alone. */
export function describeOpencodeError(error: ErrorInfo): string {
  const name = typeof error.name === 'string' ? error.name : 'Error';
  const status = typeof error.data?.statusCode === 'number' ? ` (HTTP ${error.data.statusCode})` : '';
  const message = typeof error.data?.message === 'string' ? error.data.message : '';
  return message === '' ? `${name}${status}` : `${name}${status}: ${message}`;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * Matches opencode bus events to the turns the bridge started. Feed every event to
 * {@link TurnTracker.onEvent}; call {@link TurnTracker.begin} **before** `promptAsync`.
 *
 * @example
 * const outcome = tracker.begin(sessionId);
 * await promptAsync(client, { sessionId, text, model });
 * const result = await outcome; // { ok: true } | { ok: false, kind, cause }
 */
export class TurnTracker {
  readonly #turns = new Map<string, TurnState>();
  readonly #now: () => number;

  /** @param now clock in ms (assistant messages older than a turn's begin are not its own). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Sessions with a turn in flight. */
  get pending(): number {
    return this.#turns.size;
  }

  /**
   * Starts waiting for the next turn of `sessionId`; resolves once with its outcome.
   * @throws Error when a turn of that session is already pending (turns of a session are serial, SPEC B-13).
   */
  begin(sessionId: string): Promise<TurnOutcome> {
    if (this.#turns.has(sessionId))
      throw new Error(`opencode session ${sessionId} already has a turn in flight`);
    return new Promise<TurnOutcome>((resolve) => {
      this.#turns.set(sessionId, {
        began: this.#now(),
        started: false,
        error: undefined,
        rejected: false,
        rejectionText: undefined,
        resolve,
      });
    });
  }

  /**
   * Settles a pending turn now (e.g. `promptAsync` itself failed, timeout, shutdown); no-op when none.
   * @param outcome @default `{ ok: false, kind: 'error', cause: 'turn cancelled' }`
   */
  cancel(
    sessionId: string,
    outcome: TurnOutcome = { ok: false, kind: 'error', cause: 'turn cancelled' },
  ): void {
    const turn = this.#turns.get(sessionId);
    if (turn === undefined) return;
    this.#turns.delete(sessionId);
    turn.resolve(outcome);
  }

  /** Feeds one bus event (any type; unrelated events are ignored). */
  onEvent(event: OpencodeBusEvent): void {
    const p = asRecord(event.properties);
    switch (event.type) {
      case 'session.status': {
        const turn = this.#turn(p.sessionID);
        const type = asRecord(p.status).type;
        if (turn !== undefined && (type === 'busy' || type === 'retry')) turn.started = true;
        return;
      }
      case 'session.error': {
        const turn = this.#turn(p.sessionID);
        if (turn?.started === true) turn.error ??= asRecord(p.error) as ErrorInfo;
        return;
      }
      case 'message.updated': {
        const info = asRecord(p.info);
        const turn = this.#turn(info.sessionID);
        const created = asRecord(info.time).created;
        if (
          turn?.started === true &&
          info.role === 'assistant' &&
          info.error !== undefined &&
          (typeof created !== 'number' || created >= turn.began)
        )
          turn.error ??= asRecord(info.error) as ErrorInfo;
        return;
      }
      case 'message.part.updated': {
        const part = asRecord(p.part);
        const turn = this.#turn(part.sessionID);
        if (turn === undefined || !turn.started) return;
        if (part.type === 'step-start') turn.rejected = false;
        const state = asRecord(part.state);
        if (part.type === 'tool' && state.status === 'error' && typeof state.error === 'string')
          turn.rejectionText = state.error;
        return;
      }
      case 'permission.replied': {
        const turn = this.#turn(p.sessionID);
        if (turn?.started === true && p.reply === 'reject') turn.rejected = true;
        return;
      }
      case 'session.idle': {
        const sessionId = p.sessionID;
        const turn = this.#turn(sessionId);
        if (turn === undefined || !turn.started || typeof sessionId !== 'string') return;
        this.#turns.delete(sessionId);
        turn.resolve(outcomeOf(turn));
        return;
      }
      default:
        return;
    }
  }

  #turn(sessionId: unknown): TurnState | undefined {
    return typeof sessionId === 'string' ? this.#turns.get(sessionId) : undefined;
  }
}

function outcomeOf(turn: TurnState): TurnOutcome {
  const error = turn.error;
  if (error !== undefined) {
    const aborted = error.name === 'MessageAbortedError';
    return {
      ok: false,
      kind: aborted ? 'aborted' : 'error',
      cause: describeOpencodeError(error),
      ...(typeof error.name === 'string' ? { errorName: error.name } : {}),
    };
  }
  if (turn.rejected)
    return {
      ok: false,
      kind: 'permission_rejected',
      cause: turn.rejectionText ?? 'The user rejected permission to use this specific tool call.',
    };
  return { ok: true };
}
