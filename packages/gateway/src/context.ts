/**
 * The state every route shares: the store, the event hub, the blob store and the resolved
 * configuration.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Selectable, Transaction } from 'kysely';
import type { BlobStore } from './blobs.js';
import type { ResolvedConfig } from './config.js';
import type { GatewayDb } from './db/database.js';
import type { Database, SessionsTable } from './db/schema.js';
import type { EventHub } from './event-hub.js';

/** Shared state of one Gateway instance. */
export interface GatewayContext {
  db: GatewayDb;
  hub: EventHub;
  blobs: BlobStore;
  config: ResolvedConfig;
  /** The app's pino logger (for what is skipped or recovered outside a request). */
  log: FastifyBaseLogger;
  /** Test seam: called inside the send transaction after the mail row exists (SPEC G-35). */
  afterMailCreated?: (mailId: string) => void | Promise<void>;
}

/** A transaction or the database itself. */
export type Db = Transaction<Database> | GatewayDb;

/** A session row. */
export type SessionRow = Selectable<SessionsTable>;

/** Who is acting: an agent (by its bound name) or a person. */
export type Actor = { kind: 'agent'; name: string } | { kind: 'user'; id: string; name: string };

/** ISO 8601 of a millisecond timestamp. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
