/**
 * Claude Code's sessions as its transcript files show them:
 * `<home>/.claude/projects/<cwd-slug>/<session id>.jsonl`, one JSON object per line. Only the first
 * lines of a file are read (SPEC G-25, G-37: a transcript grows with every turn; the heartbeat
 * must not parse whole files), except for a resumed session's model, which is read from the end.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlatformSession } from '@agentmail/protocol';

/** Bytes read from the start of a transcript for its id, working directory and title. @default 65_536 */
export const TRANSCRIPT_HEAD_BYTES = 65_536;
/** Bytes read from the end of a transcript for the session's model. @default 262_144 */
export const TRANSCRIPT_TAIL_BYTES = 262_144;
/** Characters of the first prompt kept as a session title. @default 80 */
export const TITLE_MAX_CHARS = 80;

// Claude Code session ids are UUIDs; anything else (from a mail, an adoption) never names a file.
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `id` has the shape of a Claude Code session id. */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}

/** The projects directory of a Claude Code home (`$HOME`). */
export function projectsDir(home: string): string {
  return join(home, '.claude', 'projects');
}

async function readSlice(file: string, fromEnd: boolean, bytes: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const length = Math.min(size, bytes);
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, fromEnd ? size - length : 0);
    return buf.toString('utf8');
  } finally {
    await fh.close();
  }
}

function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // a cut first/last line, or not JSON
    }
  }
  return out;
}

function promptText(entry: Record<string, unknown>): string | undefined {
  if (entry.type !== 'user') return undefined;
  const content = (entry.message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const text = content
    .filter((b): b is { type: string; text: string } => typeof b?.text === 'string' && b.type === 'text')
    .map((b) => b.text)
    .find((t) => !t.startsWith('<'));
  return text;
}

/** What the first lines of a transcript tell. */
export interface TranscriptHead {
  sessionId: string;
  cwd?: string;
  /** The first prompt, shortened. */
  title?: string;
}

/** Read the head of one transcript; undefined when it has no session id. */
export async function readTranscriptHead(file: string): Promise<TranscriptHead | undefined> {
  const entries = jsonLines(await readSlice(file, false, TRANSCRIPT_HEAD_BYTES));
  let sessionId: string | undefined;
  let cwd: string | undefined;
  let title: string | undefined;
  for (const e of entries) {
    if (e.isSidechain === true) continue;
    if (sessionId === undefined && typeof e.sessionId === 'string') sessionId = e.sessionId;
    if (cwd === undefined && typeof e.cwd === 'string') cwd = e.cwd;
    title ??= promptText(e)?.replace(/\s+/g, ' ').trim().slice(0, TITLE_MAX_CHARS);
    if (sessionId !== undefined && cwd !== undefined && title !== undefined) break;
  }
  if (sessionId === undefined) return undefined;
  return { sessionId, ...(cwd === undefined ? {} : { cwd }), ...(title ? { title } : {}) };
}

/** The model of the session's last real assistant message (a resumed session keeps it, B-8). */
export async function readSessionModel(file: string): Promise<string | undefined> {
  const entries = jsonLines(await readSlice(file, true, TRANSCRIPT_TAIL_BYTES));
  for (const e of entries.reverse()) {
    if (e.type !== 'assistant') continue;
    const model = (e.message as { model?: unknown } | undefined)?.model;
    if (typeof model === 'string' && model !== '<synthetic>') return model;
  }
  return undefined;
}

/** The transcript file of session `id` under `home`, or undefined (also for a malformed id). */
export async function findTranscript(home: string, id: string): Promise<string | undefined> {
  if (!isSessionId(id)) return undefined;
  const root = projectsDir(home);
  let dirs: string[];
  try {
    dirs = await readdir(root);
  } catch {
    return undefined;
  }
  for (const dir of dirs) {
    const file = join(root, dir, `${id}.jsonl`);
    if (
      await stat(file).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      return file;
  }
  return undefined;
}

/**
 * The person's Claude Code sessions, newest first, at most `max` (SPEC G-25, G-37): each from the
 * head of its transcript. Unreadable files are skipped.
 * @throws when the projects directory exists but cannot be listed (the heartbeat then omits sessions).
 */
export async function listSessions(home: string, max: number): Promise<PlatformSession[]> {
  const root = projectsDir(home);
  let dirs: string[];
  try {
    dirs = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: Array<{ file: string; mtimeMs: number }> = [];
  for (const dir of dirs) {
    const names = await readdir(join(root, dir)).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith('.jsonl') || !isSessionId(name.slice(0, -6))) continue;
      const file = join(root, dir, name);
      const s = await stat(file).catch(() => undefined);
      if (s?.isFile()) files.push({ file, mtimeMs: s.mtimeMs });
    }
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const sessions: PlatformSession[] = [];
  for (const { file, mtimeMs } of files) {
    if (sessions.length >= max) break;
    const head = await readTranscriptHead(file).catch(() => undefined);
    if (head?.cwd === undefined) continue;
    sessions.push({
      platform_id: head.sessionId,
      path: head.cwd,
      ...(head.title ? { title: head.title } : {}),
      updated_at: new Date(mtimeMs).toISOString(),
    });
  }
  return sessions;
}
