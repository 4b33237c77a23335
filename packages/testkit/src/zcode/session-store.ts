/**
 * The stand-in's session store, laid out like ZCode's: one SQLite file,
 * `~/.zcode/cli/db/db.sqlite` (config `storage.sessionDbPath`), opencode-lineage tables — `session`
 * (`id` = `sess_…`, `directory` = the absolute working directory, `title`, `time_created`,
 * `time_updated`, epoch ms) and `message` (`data` JSON with `role`, `providerID`, `modelID`).
 * Source: a third-party integration plan that read a real CLI 0.16.5 database (columns and
 * `message.data` fields as listed there); research/zcode.md §3 (`--resume <sess_…>`).
 * Simplification: the real store keeps a message's parts in a `part` table; here they are in
 * `message.data.parts` (readers of sessions and models look only at `session` and
 * `message.data.{role,providerID,modelID}`).
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

/** One part of a stored message (Anthropic-shaped content blocks). */
export type StoredPart =
  | { type: 'text'; text: string }
  | { type: 'tool'; callID: string; tool: string; input: unknown; output: string; isError: boolean };

/** A stored message. */
export interface StoredMessage {
  role: 'user' | 'assistant';
  providerID?: string;
  modelID?: string;
  parts: StoredPart[];
}

/** A stored session's row. */
export interface StoredSession {
  id: string;
  directory: string;
  title: string;
  timeCreated: number;
  timeUpdated: number;
}

/** The default database path under `home`. */
export function sessionDbPath(home: string): string {
  return join(home, '.zcode', 'cli', 'db', 'db.sqlite');
}

/** The store of one CLI process. */
export class SessionStore {
  readonly #db: Database.Database;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.#db = new Database(file);
    // WAL: a driver reads the sessions while a run writes them.
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS session (
        id TEXT PRIMARY KEY, directory TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',
        time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS message (
        id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS message_session ON message (session_id, time_created);`);
  }

  /** The session `id`, or undefined. */
  session(id: string): StoredSession | undefined {
    const row = this.#db
      .prepare('SELECT id, directory, title, time_created, time_updated FROM session WHERE id = ?')
      .get(id) as
      | { id: string; directory: string; title: string; time_created: number; time_updated: number }
      | undefined;
    return (
      row && {
        id: row.id,
        directory: row.directory,
        title: row.title,
        timeCreated: row.time_created,
        timeUpdated: row.time_updated,
      }
    );
  }

  /** The most recently updated session in `directory` (`--continue`). */
  latest(directory: string): StoredSession | undefined {
    const row = this.#db
      .prepare('SELECT id FROM session WHERE directory = ? ORDER BY time_updated DESC LIMIT 1')
      .get(directory) as { id: string } | undefined;
    return row ? this.session(row.id) : undefined;
  }

  /** Create a session. */
  create(session: StoredSession): void {
    this.#db
      .prepare(
        'INSERT INTO session (id, directory, title, time_created, time_updated) VALUES (?, ?, ?, ?, ?)',
      )
      .run(session.id, session.directory, session.title, session.timeCreated, session.timeUpdated);
  }

  /** The session's messages, oldest first. */
  messages(sessionId: string): StoredMessage[] {
    const rows = this.#db
      .prepare('SELECT data FROM message WHERE session_id = ? ORDER BY time_created, rowid')
      .all(sessionId) as Array<{ data: string }>;
    return rows.map((r) => JSON.parse(r.data) as StoredMessage);
  }

  /** Append a message and touch the session. */
  append(sessionId: string, id: string, message: StoredMessage): void {
    const now = Date.now();
    this.#db.transaction(() => {
      this.#db
        .prepare('INSERT INTO message (id, session_id, time_created, data) VALUES (?, ?, ?, ?)')
        .run(id, sessionId, now, JSON.stringify(message));
      this.#db.prepare('UPDATE session SET time_updated = ? WHERE id = ?').run(now, sessionId);
    })();
  }

  close(): void {
    this.#db.close();
  }
}
