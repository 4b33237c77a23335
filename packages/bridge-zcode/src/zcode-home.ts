/**
 * What the driver reads of ZCode's own files, never writing them:
 * - `~/.zcode/cli/config.json`: the model catalogue (`provider.<id>.models.<model>` →
 *   `<id>/<model>`, kingsword09/zcode-cli `docs/CONFIGURATION.md`) and `storage.sessionDbPath`;
 * - the session database (default `~/.zcode/cli/db/db.sqlite`: opencode-lineage tables `session`
 *   with `id` `sess_…`, `directory`, `title`, `time_updated`, and `message.data` with `role`,
 *   `providerID`, `modelID`, as a third-party integration read it on CLI 0.16.5), opened read-only.
 * Only a few columns are read: a store that grows with every turn is never parsed whole (G-25).
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { PlatformSession } from '@agentmail/protocol';
import Database from 'better-sqlite3';
import { isZcodeSessionId } from './stream-json.js';

/** `~/.zcode/cli/config.json` of `home`. */
export function zcodeConfigPath(home: string): string {
  return join(home, '.zcode', 'cli', 'config.json');
}

function readConfig(home: string): Record<string, unknown> | undefined {
  const file = zcodeConfigPath(home);
  if (!existsSync(file)) return undefined;
  const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${file} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** ZCode's session database under `home` (its `storage.sessionDbPath` when set). */
export function zcodeDbPath(home: string): string {
  const storage = readConfig(home)?.storage as { sessionDbPath?: unknown } | undefined;
  const configured = storage?.sessionDbPath;
  return typeof configured === 'string' && isAbsolute(configured)
    ? configured
    : join(home, '.zcode', 'cli', 'db', 'db.sqlite');
}

/**
 * The models ZCode is configured with: `<provider id>/<model id>` keys (SPEC G-26 splits at the
 * first `/`), with the model's display name. `[]` when there is no config file.
 * @throws when the config file cannot be read or parsed (the heartbeat then omits the catalogue).
 */
export function readZcodeModels(home: string): Array<{ key: string; name: string }> {
  const provider = readConfig(home)?.provider;
  if (typeof provider !== 'object' || provider === null) return [];
  const out: Array<{ key: string; name: string }> = [];
  for (const [id, p] of Object.entries(provider as Record<string, unknown>)) {
    const models = (p as { models?: unknown } | null)?.models;
    if (typeof models !== 'object' || models === null) continue;
    for (const [model, m] of Object.entries(models as Record<string, unknown>)) {
      const name = (m as { name?: unknown } | null)?.name;
      out.push({ key: `${id}/${model}`, name: typeof name === 'string' && name ? name : model });
    }
  }
  return out;
}

function withDb<T>(home: string, read: (db: Database.Database) => T, whenMissing: T): T {
  const file = zcodeDbPath(home);
  if (!existsSync(file)) return whenMissing;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 2000');
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * ZCode's sessions, newest first, at most `max` (SPEC G-25, G-37). `[]` when there is no database.
 * @throws when the database exists but cannot be read (the heartbeat then omits sessions).
 */
export function readZcodeSessions(home: string, max: number): PlatformSession[] {
  return withDb(
    home,
    (db) =>
      (
        db
          .prepare(
            'SELECT id, directory, title, time_updated FROM session ORDER BY time_updated DESC LIMIT ?',
          )
          .all(max) as Array<{ id: string; directory: string; title: string | null; time_updated: number }>
      )
        .filter(
          (r) => isZcodeSessionId(r.id) && typeof r.directory === 'string' && r.directory.startsWith('/'),
        )
        .map((r) => ({
          platform_id: r.id,
          path: r.directory,
          ...(r.title ? { title: r.title.slice(0, 200) } : {}),
          updated_at: new Date(r.time_updated).toISOString(),
        })),
    [],
  );
}

/** The session `id`'s working directory, or undefined when there is no such session. */
export function findZcodeSession(home: string, id: string): { cwd: string } | undefined {
  if (!isZcodeSessionId(id)) return undefined;
  return withDb(
    home,
    (db) => {
      const row = db.prepare('SELECT directory FROM session WHERE id = ?').get(id) as
        | { directory: string }
        | undefined;
      return row ? { cwd: row.directory } : undefined;
    },
    undefined,
  );
}

/** The `provider/model` of the session's last assistant message (a resumed session keeps it, B-8). */
export function readSessionModel(home: string, id: string): string | undefined {
  if (!isZcodeSessionId(id)) return undefined;
  return withDb(
    home,
    (db) => {
      const rows = db
        .prepare(
          'SELECT data FROM message WHERE session_id = ? ORDER BY time_created DESC, rowid DESC LIMIT 20',
        )
        .all(id) as Array<{ data: string }>;
      for (const r of rows) {
        try {
          const d = JSON.parse(r.data) as { role?: unknown; providerID?: unknown; modelID?: unknown };
          if (d.role === 'assistant' && typeof d.providerID === 'string' && typeof d.modelID === 'string')
            return `${d.providerID}/${d.modelID}`;
        } catch {
          // not JSON: skip
        }
      }
      return undefined;
    },
    undefined,
  );
}
