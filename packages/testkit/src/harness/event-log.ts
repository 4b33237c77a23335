/**
 * An append-only list of received events with event-driven waits: a wait looks at the events
 * already received, then at each new one, until a check returns a value or time runs out.
 */
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';

/**
 * Check of {@link EventLog.waitFor}: a value ends the wait, `undefined` goes on to the next
 * event. May be async (e.g. to fetch the mail an event names).
 */
export type EventCheck<E, T> = (event: E) => T | undefined | Promise<T | undefined>;

interface Wake {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Wake {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Events in arrival order plus waits on them; `label` and `describe` make timeout messages readable. */
export class EventLog<E> {
  readonly #label: string;
  readonly #describe: (event: E) => string;
  readonly #events: E[] = [];
  readonly #problems: string[] = [];
  #wake: Wake = deferred();
  #closed = false;

  constructor(label: string, describe: (event: E) => string) {
    this.#label = label;
    this.#describe = describe;
  }

  /** Every event so far, oldest first. */
  all(): readonly E[] {
    return [...this.#events];
  }

  /** Appends an event and wakes the waits. */
  push(event: E): void {
    this.#events.push(event);
    this.#notify();
  }

  /** Records a problem of the source (shown in timeout messages). */
  problem(text: string): void {
    this.#problems.push(text);
  }

  /** Ends every wait with `AM_TESTKIT_STACK_CLOSED`. */
  close(): void {
    this.#closed = true;
    this.#notify();
  }

  /**
   * Runs `check` on every event in order, the ones already received first, and resolves with the
   * first value it returns. Checks run one at a time. Event-driven, no polling.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` after `timeoutMs` (the message says what was
   *   awaited and lists the events seen); `AM_TESTKIT_STACK_CLOSED` when closed first.
   */
  async waitFor<T>(check: EventCheck<E, T>, timeoutMs: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TestkitError(
              TESTKIT_ERROR_CODES.WAIT_TIMEOUT,
              `${this.#label}: ${what} did not arrive within ${timeoutMs} ms; events seen: ${this.summary()}`,
            ),
          ),
        timeoutMs,
      );
    });
    timeout.catch(() => {});
    try {
      let index = 0;
      for (;;) {
        while (index < this.#events.length) {
          const event = this.#events[index++] as E;
          const value = await Promise.race([check(event), timeout]);
          if (value !== undefined) return value;
        }
        if (this.#closed)
          throw new TestkitError(
            TESTKIT_ERROR_CODES.STACK_CLOSED,
            `${this.#label}: closed while waiting for ${what}.`,
          );
        await Promise.race([this.#wake.promise, timeout]);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** The events (one per line) and problems seen, for messages. */
  summary(): string {
    const seen = this.#events.map(this.#describe);
    const problems = this.#problems.length === 0 ? '' : `; problems: ${this.#problems.join('; ')}`;
    return `${seen.length === 0 ? 'none' : `\n  ${seen.join('\n  ')}`}${problems}`;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = deferred();
    wake.resolve();
  }
}
