/**
 * Collects opencode bus events from `GET /event` (the same events the plugin's `event` hook
 * gets) for tests: everything is kept in order, and `waitFor` resolves on the first event (past
 * or future) that matches, or rejects after a timeout.
 */
import type { OpencodeClient } from '@opencode-ai/sdk';

/** A bus event as delivered at run time (v2 shapes: `{ id, type, properties }`). */
export interface BusEvent {
  id?: string;
  type: string;
  properties: Record<string, unknown>;
}

interface Waiter {
  from: number;
  match: (event: BusEvent) => boolean;
  resolve: (event: BusEvent) => void;
}

/** Live event collector; call {@link EventCollector.close} when done. */
export class EventCollector {
  readonly events: BusEvent[] = [];
  readonly #abort = new AbortController();
  readonly #waiters = new Set<Waiter>();
  readonly #listeners = new Set<(event: BusEvent) => void>();

  private constructor() {}

  /** Subscribes and resolves once the stream delivered `server.connected`. */
  static async open(client: OpencodeClient, timeoutMs = 10_000): Promise<EventCollector> {
    const collector = new EventCollector();
    const { stream } = await client.event.subscribe({ signal: collector.#abort.signal });
    void (async () => {
      try {
        for await (const raw of stream) collector.#push(raw as BusEvent);
      } catch {
        // closed
      }
    })();
    await collector.waitFor((e) => e.type === 'server.connected', timeoutMs);
    return collector;
  }

  #push(event: BusEvent): void {
    this.events.push(event);
    for (const listener of this.#listeners) listener(event);
    for (const waiter of this.#waiters) {
      if (waiter.match(event)) {
        this.#waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  }

  /** Calls `listener` for every later event; returns the unsubscribe function. */
  onEvent(listener: (event: BusEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Index of the next event, to pass as `from` to {@link EventCollector.waitFor}. */
  mark(): number {
    return this.events.length;
  }

  /** The first event at index ≥ `from` that matches, waiting up to `timeoutMs`. */
  waitFor(match: (event: BusEvent) => boolean, timeoutMs: number, from = 0): Promise<BusEvent> {
    const past = this.events.slice(from).find(match);
    if (past !== undefined) return Promise.resolve(past);
    return new Promise<BusEvent>((resolve, reject) => {
      const waiter: Waiter = {
        from,
        match,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        const seen = this.events.slice(from).map((e) => e.type);
        reject(
          new Error(`no matching opencode event within ${timeoutMs} ms; seen since mark: ${seen.join(', ')}`),
        );
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Events of one session since `from` (by `properties.sessionID`, `info.sessionID` or `part.sessionID`). */
  forSession(sessionId: string, from = 0): BusEvent[] {
    return this.events.slice(from).filter((e) => eventSessionId(e) === sessionId);
  }

  close(): void {
    this.#abort.abort();
    for (const waiter of this.#waiters) this.#waiters.delete(waiter);
  }
}

/** The session an event belongs to, if any. */
export function eventSessionId(event: BusEvent): string | undefined {
  const p = event.properties as {
    sessionID?: unknown;
    info?: { sessionID?: unknown; id?: unknown };
    part?: { sessionID?: unknown };
  };
  if (typeof p.sessionID === 'string') return p.sessionID;
  if (typeof p.info?.sessionID === 'string') return p.info.sessionID;
  if (typeof p.part?.sessionID === 'string') return p.part.sessionID;
  if (event.type.startsWith('session.') && typeof p.info?.id === 'string') return p.info.id;
  return undefined;
}
