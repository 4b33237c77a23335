/**
 * Per-stream event log and live fan-out (SPEC G-22, G-42). Every event is written to the `events`
 * table inside the transaction of the change that caused it (so replay survives a restart and
 * nothing is announced that was rolled back), then published to every open SSE connection of the
 * stream after the commit. The log keeps the newest {@link EVENT_LOG_MAX_PER_STREAM} events per
 * stream.
 *
 * Ids of a stream are given in commit order (the counter row is locked until commit), so a
 * connection writes them strictly one after another: an event that is not the next id (it was
 * published by another Gateway on the same database, or this process's publishes came out of
 * order) makes the stream read the log after the connection's last id instead. Other Gateways
 * learn of new events through a {@link EventWakeups} (PostgreSQL: LISTEN/NOTIFY as a hint, with
 * polling as the fallback).
 */
import type { ServerResponse } from 'node:http';
import type { Transaction } from 'kysely';
import type { GatewayDb } from './db/database.js';
import type { Database } from './db/schema.js';
import type { Clock } from './ids.js';

/** Events kept per stream for `Last-Event-ID` replay. @default 1000 */
export const EVENT_LOG_MAX_PER_STREAM = 1_000;

/** Interval of SSE keep-alive comments, in ms. @default 15000 */
export const SSE_KEEPALIVE_MS = 15_000;

/** A stream name: one per agent, one per person. */
export type StreamName = `agent:${string}` | `user:${string}`;

/** The stream of an agent. */
export function agentStream(name: string): StreamName {
  return `agent:${name}`;
}

/** The stream of a person (by user id). */
export function userStream(userId: string): StreamName {
  return `user:${userId}`;
}

/** A stored event. */
export interface StoredEvent {
  stream: StreamName;
  id: number;
  type: string;
  /** JSON text of the payload. */
  data: string;
}

/** Events appended in a transaction, published by {@link EventHub.publish} after it commits. */
export type EventBatch = StoredEvent[];

type Trx = Transaction<Database> | GatewayDb;

interface Connection {
  res: ServerResponse;
  /** Highest event id written to this connection. */
  lastSent: number;
  /** Live events that arrived during the replay, flushed after it. */
  backlog: StoredEvent[] | null;
}

/**
 * How Gateways sharing one database wake each other: `notify` after this process committed
 * events of `streams`; `start` hands over the callback for events others committed (`'all'`:
 * look at every open stream). The SQLite store has none (one Gateway per data directory).
 */
export interface EventWakeups {
  start: (wake: (streams: readonly StreamName[] | 'all') => void) => void;
  notify: (streams: ReadonlySet<StreamName>) => void;
  close: () => Promise<void>;
}

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  db: GatewayDb;
  clock: Clock;
  /** @default EVENT_LOG_MAX_PER_STREAM */
  maxPerStream?: number;
  /** @default SSE_KEEPALIVE_MS */
  keepaliveMs?: number;
  /**
   * Checks each event before it is stored and throws to refuse it (the change rolls back); the
   * app passes `checkEvent` when `checkResponses` is on. @default no check
   */
  checkEvent?: (stream: StreamName, type: string, payload: unknown) => void;
  /** Wake-ups from and to other Gateways on the same database. @default none (SQLite) */
  wakeups?: EventWakeups;
  /**
   * With `wakeups`: how often every open stream checks the log for events a lost wake-up did not
   * announce, in ms; 0 never. @default EVENT_POLL_MS
   */
  pollMs?: number;
}

/** Fallback check of every open stream against the log, with wake-ups from other Gateways (ms). @default 1000 */
export const EVENT_POLL_MS = 1_000;

/** Events one catch-up read takes from the log at most (it reads again while more are there). */
const CATCH_UP_PAGE = 500;

function frame(event: StoredEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${event.data}\n\n`;
}

/**
 * The SSE hub: appends events to the persistent per-stream log and fans them out to every open
 * connection of the stream. `close()` ends all connections.
 */
export class EventHub {
  private readonly db: GatewayDb;
  private readonly clock: Clock;
  private readonly maxPerStream: number;
  private readonly keepaliveMs: number;
  private readonly checkEvent: EventHubOptions['checkEvent'];
  private readonly connections = new Map<StreamName, Set<Connection>>();
  private keepalive: NodeJS.Timeout | undefined;
  private readonly wakeups: EventWakeups | undefined;
  private poll: NodeJS.Timeout | undefined;
  /** Streams reading the log now, and those to read once more when that read is done. */
  private readonly reading = new Set<StreamName>();
  private readonly readAgain = new Set<StreamName>();
  private closed = false;

  constructor(options: EventHubOptions) {
    this.db = options.db;
    this.clock = options.clock;
    this.maxPerStream = options.maxPerStream ?? EVENT_LOG_MAX_PER_STREAM;
    this.keepaliveMs = options.keepaliveMs ?? SSE_KEEPALIVE_MS;
    this.checkEvent = options.checkEvent;
    this.wakeups = options.wakeups;
    if (this.wakeups) {
      this.wakeups.start((streams) => {
        for (const s of streams === 'all' ? [...this.connections.keys()] : streams) this.catchUp(s);
      });
      const pollMs = options.pollMs ?? EVENT_POLL_MS;
      if (pollMs > 0) {
        this.poll = setInterval(() => this.pollStreams(), pollMs);
        this.poll.unref();
      }
    }
  }

  /**
   * Append an event inside `trx` and remember it in `batch` for publishing after the commit.
   * Ids increase per stream (a counter row bumped in the same transaction).
   * @throws whatever `checkEvent` throws (`AM_GW_RESPONSE_INVALID` with `checkResponses`), before anything is written
   */
  async append(
    trx: Trx,
    batch: EventBatch,
    stream: StreamName,
    type: string,
    payload: unknown,
  ): Promise<StoredEvent> {
    this.checkEvent?.(stream, type, payload);
    const row = await trx
      .insertInto('stream_cursors')
      .values({ stream, last_id: 1 })
      .onConflict((oc) =>
        oc.column('stream').doUpdateSet((eb) => ({ last_id: eb('stream_cursors.last_id', '+', 1) })),
      )
      .returning('last_id')
      .executeTakeFirstOrThrow();
    const id = Number(row.last_id);
    const event: StoredEvent = { stream, id, type, data: JSON.stringify(payload) };
    await trx
      .insertInto('events')
      .values({ stream, event_id: id, type, data: event.data, created_at: this.clock() })
      .execute();
    if (id > this.maxPerStream) {
      await trx
        .deleteFrom('events')
        .where('stream', '=', stream)
        .where('event_id', '<=', id - this.maxPerStream)
        .execute();
    }
    batch.push(event);
    return event;
  }

  /**
   * Write committed events to every open connection of their streams, and tell the other
   * Gateways on the database (when there are wake-ups).
   */
  publish(batch: EventBatch): void {
    const streams = new Set<StreamName>();
    for (const event of batch) {
      streams.add(event.stream);
      const conns = this.connections.get(event.stream);
      if (!conns) continue;
      for (const conn of conns) this.deliver(conn, event);
    }
    if (streams.size > 0) this.wakeups?.notify(streams);
  }

  /** Write `event` if it is the connection's next one; a gap reads the log instead. */
  private deliver(conn: Connection, event: StoredEvent): void {
    if (conn.backlog) {
      conn.backlog.push(event);
      return;
    }
    if (event.id <= conn.lastSent) return;
    if (event.id !== conn.lastSent + 1) {
      this.catchUp(event.stream);
      return;
    }
    conn.lastSent = event.id;
    conn.res.write(frame(event));
  }

  /**
   * Read the log of `stream` after the oldest last id of its live connections and write what
   * each has not had, in id order. One read per stream at a time; a call during a read makes it
   * read once more after. Every id at or below one the read returns is committed (ids are given
   * in commit order), so a connection never skips an event it could still get.
   */
  private catchUp(stream: StreamName): void {
    if (this.closed) return;
    if (this.reading.has(stream)) {
      this.readAgain.add(stream);
      return;
    }
    this.reading.add(stream);
    void this.readLog(stream).finally(() => {
      this.reading.delete(stream);
      if (this.readAgain.delete(stream)) this.catchUp(stream);
    });
  }

  private async readLog(stream: StreamName): Promise<void> {
    for (;;) {
      const live = [...(this.connections.get(stream) ?? [])].filter((c) => c.backlog === null);
      if (live.length === 0 || this.closed) return;
      const after = Math.min(...live.map((c) => c.lastSent));
      let rows: Array<{ event_id: number; type: string; data: string }>;
      try {
        rows = await this.db
          .selectFrom('events')
          .select(['event_id', 'type', 'data'])
          .where('stream', '=', stream)
          .where('event_id', '>', after)
          .orderBy('event_id')
          .limit(CATCH_UP_PAGE)
          .execute();
      } catch {
        return; // the store is closing or unreachable: the next wake-up or poll reads again
      }
      for (const r of rows) {
        const event: StoredEvent = { stream, id: Number(r.event_id), type: r.type, data: r.data };
        for (const conn of live) {
          if (conn.backlog !== null || event.id <= conn.lastSent) continue;
          conn.lastSent = event.id;
          conn.res.write(frame(event));
        }
      }
      if (rows.length < CATCH_UP_PAGE) return;
    }
  }

  /** The fallback for a lost wake-up: every open stream whose log is ahead of a connection reads it. */
  private pollStreams(): void {
    const streams = [...this.connections.keys()];
    if (streams.length === 0 || this.closed) return;
    this.db
      .selectFrom('stream_cursors')
      .select(['stream', 'last_id'])
      .where('stream', 'in', streams)
      .execute()
      .then(
        (rows) => {
          for (const r of rows) {
            const stream = r.stream as StreamName;
            const conns = this.connections.get(stream);
            if (conns && [...conns].some((c) => c.backlog === null && c.lastSent < Number(r.last_id)))
              this.catchUp(stream);
          }
        },
        () => {}, // unreachable store: the next poll tries again
      );
  }

  /** Number of open connections of a stream (for tests and metrics). */
  connectionCount(stream: StreamName): number {
    return this.connections.get(stream)?.size ?? 0;
  }

  /**
   * Serve one SSE connection on a hijacked response: headers, replay of every stored event after
   * `lastEventId` (when given), then live events until the client goes away.
   *
   * @param lastEventId - the `Last-Event-ID` header; undefined = live events only
   */
  async serve(stream: StreamName, res: ServerResponse, lastEventId: number | undefined): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Register first and buffer live events while replaying, so nothing falls between the
    // replay query and the live subscription; `lastSent` drops the overlap.
    const conn: Connection = { res, lastSent: lastEventId ?? 0, backlog: [] };
    let set = this.connections.get(stream);
    if (!set) {
      set = new Set();
      this.connections.set(stream, set);
    }
    set.add(conn);
    res.on('close', () => {
      const s = this.connections.get(stream);
      s?.delete(conn);
      if (s?.size === 0) this.connections.delete(stream);
    });
    res.write(': connected\n\n');
    if (lastEventId === undefined) {
      // Live only: start after the newest stored id.
      const cur = await this.db
        .selectFrom('stream_cursors')
        .select('last_id')
        .where('stream', '=', stream)
        .executeTakeFirst();
      conn.lastSent = Math.max(conn.lastSent, Number(cur?.last_id ?? 0));
    } else {
      const rows = await this.db
        .selectFrom('events')
        .select(['event_id', 'type', 'data'])
        .where('stream', '=', stream)
        .where('event_id', '>', lastEventId)
        .orderBy('event_id')
        .execute();
      for (const r of rows) {
        const event: StoredEvent = { stream, id: Number(r.event_id), type: r.type, data: r.data };
        if (event.id > conn.lastSent) {
          conn.lastSent = event.id;
          res.write(frame(event));
        }
      }
    }
    const backlog = conn.backlog ?? [];
    conn.backlog = null;
    if (lastEventId === undefined) {
      // Every event buffered here was published after this connection registered, so it is live
      // for it, even when the cursor read above already counted it (it committed in between):
      // comparing it with that cursor would drop it (G-22).
      for (const event of backlog) {
        conn.lastSent = Math.max(conn.lastSent, event.id);
        res.write(frame(event));
      }
    } else for (const event of backlog) this.deliver(conn, event);
    this.ensureKeepalive();
  }

  private ensureKeepalive(): void {
    if (this.keepalive) return;
    this.keepalive = setInterval(() => {
      for (const set of this.connections.values()) for (const conn of set) conn.res.write(': ping\n\n');
    }, this.keepaliveMs);
    this.keepalive.unref();
  }

  /** End every open connection (server shutdown); stop the wake-ups. */
  close(): void {
    this.closed = true;
    if (this.keepalive) clearInterval(this.keepalive);
    this.keepalive = undefined;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    for (const set of this.connections.values()) for (const conn of set) conn.res.end();
    this.connections.clear();
  }
}

/** Parse a `Last-Event-ID` header; anything but a non-negative integer means "none". */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}
