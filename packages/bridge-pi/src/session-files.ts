/**
 * pi session files on disk, read the cheap way: only each file's first line (the header
 * `{type:"session",id,cwd,timestamp}`), never the whole file (see SPEC §7 pi, G-25, B-4).
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fallbackDirName } from '@agentmail/bridge-kit';
import { HEARTBEAT_MAX_SESSIONS, type PlatformSession } from '@agentmail/protocol';

/** Most bytes read to find a header line. @default 65_536 */
export const HEADER_MAX_BYTES = 65_536;

/** The header of a pi session file. */
export interface PiSessionHeader {
  id: string;
  cwd: string;
  timestamp: string;
}

/** Read the first line of a file (at most {@link HEADER_MAX_BYTES}); '' when unreadable. */
export async function readFirstLine(path: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const buf = Buffer.alloc(HEADER_MAX_BYTES);
    const { bytesRead } = await handle.read(buf, 0, HEADER_MAX_BYTES, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    const nl = text.indexOf('\n');
    return nl === -1 ? text : text.slice(0, nl);
  } catch {
    return '';
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Parse a session header line; undefined when it is not one. */
export function parseHeader(line: string): PiSessionHeader | undefined {
  try {
    const h = JSON.parse(line) as Record<string, unknown>;
    if (h.type !== 'session' || typeof h.id !== 'string' || h.id === '') return undefined;
    return {
      id: h.id,
      cwd: typeof h.cwd === 'string' ? h.cwd : '',
      timestamp: typeof h.timestamp === 'string' ? h.timestamp : '',
    };
  } catch {
    return undefined;
  }
}

/** `.jsonl` files under pi's session root (`<root>/<cwd-folder>/<file>.jsonl`), with mtimes. */
async function sessionFiles(root: string): Promise<Array<{ path: string; mtimeMs: number }>> {
  const out: Array<{ path: string; mtimeMs: number }> = [];
  const dirs = await readdir(root, { withFileTypes: true });
  for (const d of dirs) {
    const candidates = d.isDirectory()
      ? (await readdir(join(root, d.name)).catch(() => [] as string[])).map((f) => join(root, d.name, f))
      : [join(root, d.name)];
    for (const path of candidates) {
      if (!path.endsWith('.jsonl')) continue;
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile()) out.push({ path, mtimeMs: info.mtimeMs });
    }
  }
  return out;
}

/**
 * The session snapshot of the heartbeat (see SPEC G-25, G-37): newest first, at most 200, from
 * the first lines of pi's own session files under `<agentDir>/sessions`. A missing folder is a
 * really empty list (`[]`); an unreadable one is `undefined` (omit the field).
 */
export async function listPiSessions(
  agentDir: string,
  max = HEARTBEAT_MAX_SESSIONS,
): Promise<PlatformSession[] | undefined> {
  const root = join(agentDir, 'sessions');
  let files: Array<{ path: string; mtimeMs: number }>;
  try {
    files = await sessionFiles(root);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? [] : undefined;
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const sessions: PlatformSession[] = [];
  for (const f of files) {
    if (sessions.length >= max) break;
    const header = parseHeader(await readFirstLine(f.path));
    if (!header) continue;
    sessions.push({
      platform_id: header.id,
      path: header.cwd,
      updated_at: new Date(f.mtimeMs).toISOString(),
    });
  }
  return sessions;
}

/** The file of pi session `id` under `<agentDir>/sessions` (first lines only), or undefined (B-4). */
export async function findPiSessionFile(agentDir: string, id: string): Promise<string | undefined> {
  let files: Array<{ path: string; mtimeMs: number }>;
  try {
    files = await sessionFiles(join(agentDir, 'sessions'));
  } catch {
    return undefined;
  }
  for (const f of files) if (parseHeader(await readFirstLine(f.path))?.id === id) return f.path;
  return undefined;
}

/** The pi session file of a Gateway mail session: `<dataDir>/sessions/<folded id>.jsonl` (B-4). */
export function mailSessionFile(dataDir: string, sessionId: string): string {
  return join(dataDir, 'sessions', `${fallbackDirName(sessionId)}.jsonl`);
}
