/**
 * Wake-ups between Gateways on one PostgreSQL database (SPEC G-42): the events table is the log;
 * NOTIFY only says "streams X, Y have new events", coalesced to at most one notification per
 * turn of the event loop per Gateway and sent after the commit (never inside the transaction, so
 * committing mail does not take NOTIFY's global lock). One dedicated connection per Gateway
 * LISTENs (not from the pool, and not through a transaction-mode pooler such as PgBouncer, which
 * breaks LISTEN); it reconnects after a loss and then wakes every open stream. The hub's polling
 * covers a notification lost meanwhile.
 */

import { sql } from 'kysely';
import type pg from 'pg';
import type { EventWakeups, StreamName } from '../event-hub.js';
import type { GatewayDb } from './database.js';

/** The NOTIFY channel of the Gateways. */
export const EVENTS_CHANNEL = 'agentmail_events';

/** A payload longer than this says "every stream" instead (NOTIFY takes under 8000 bytes). */
const MAX_PAYLOAD = 7_000;

/** Wait before the listener connects again after losing its connection, in ms. */
const RECONNECT_MS = 500;

/** Options of {@link postgresWakeups}. */
export interface PostgresWakeupsOptions {
  /** The database URL (the listener's own connection). */
  url: string;
  /** The store: notifications go out through its pool. */
  db: GatewayDb;
  /** Told when the listener lost its connection or could not connect (it keeps trying). */
  onError?: (err: unknown) => void;
}

/**
 * LISTEN/NOTIFY wake-ups for an {@link EventHub}. The payload is a JSON array of stream names,
 * or `"*"` when they do not fit; a malformed payload wakes every stream.
 */
export function postgresWakeups(options: PostgresWakeupsOptions): EventWakeups {
  const { url, db } = options;
  let pending: Set<StreamName> | undefined;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let wake: (streams: readonly StreamName[] | 'all') => void = () => {};

  const flush = (): void => {
    const streams = pending;
    pending = undefined;
    if (!streams || closed) return;
    let payload = JSON.stringify([...streams]);
    if (payload.length > MAX_PAYLOAD) payload = '"*"';
    sql`select pg_notify(${EVENTS_CHANNEL}, ${payload})`.execute(db).catch(() => {
      // The other Gateways' polling finds these events.
    });
  };

  const listen = async (): Promise<void> => {
    if (closed) return;
    const { Client } = (await import('pg')).default;
    if (closed) return;
    const c = new Client({ connectionString: url });
    client = c;
    const lost = (err: unknown): void => {
      if (client !== c) return;
      client = undefined;
      c.removeAllListeners('notification');
      void c.end().catch(() => {});
      if (closed) return;
      options.onError?.(err);
      retry = setTimeout(() => void listen(), RECONNECT_MS);
      retry.unref();
    };
    c.on('error', lost);
    c.on('end', () => lost(new Error('the listener connection ended')));
    c.on('notification', (n) => {
      if (n.channel !== EVENTS_CHANNEL) return;
      try {
        const streams = JSON.parse(n.payload ?? '') as unknown;
        if (Array.isArray(streams) && streams.every((s) => typeof s === 'string'))
          wake(streams as StreamName[]);
        else wake('all');
      } catch {
        wake('all');
      }
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${EVENTS_CHANNEL}`);
      // Anything committed while not listening is in the log: look at every open stream.
      wake('all');
    } catch (err) {
      lost(err);
    }
  };

  return {
    start(onWake) {
      wake = onWake;
      void listen();
    },
    notify(streams) {
      if (closed) return;
      if (!pending) {
        pending = new Set();
        setImmediate(flush);
      }
      for (const s of streams) pending.add(s);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
