/**
 * The data directory: checked before anything is created in it, and held by one Gateway at a
 * time through a lock file. Both run before the store is opened, so a bad directory fails fast
 * with a message that names it, and a second Gateway on the same directory is refused instead of
 * sharing the SQLite file and the blobs with the first.
 */
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** Name of the lock file inside the data directory. @default 'gateway.lock' */
export const LOCK_FILE_NAME = 'gateway.lock';

/**
 * Directories that are kernel views, never storage: a data directory under them is refused
 * (creating one can loop forever in Node's recursive mkdir on /proc). @default ['/proc', '/sys']
 */
export const VIRTUAL_FS_ROOTS: readonly string[] = ['/proc', '/sys'];

/** A lock file younger than this whose content can not be read is taken as being written now, in ms. @default 10 000 */
export const LOCK_UNREADABLE_GRACE_MS = 10_000;

/** Codes of the data-directory errors (startup only, never an HTTP answer); listed in docs/errors.md. */
export const DATA_DIR_ERRORS = {
  INVALID: 'AM_GW_DATA_DIR_INVALID',
  LOCKED: 'AM_GW_DATA_DIR_LOCKED',
} as const;

/** A code of {@link DATA_DIR_ERRORS}. */
export type DataDirErrorCode = (typeof DATA_DIR_ERRORS)[keyof typeof DATA_DIR_ERRORS];

/**
 * The data directory can not be used: `AM_GW_DATA_DIR_INVALID` (not creatable, not writable, a
 * file, under /proc or /sys) or `AM_GW_DATA_DIR_LOCKED` (another Gateway holds it; `pid` says
 * which process). The message names the directory; `suggestion` says what to do.
 */
export class DataDirError extends Error {
  /** Stable code, see {@link DATA_DIR_ERRORS}. */
  readonly code: DataDirErrorCode;
  /** What to do about it. */
  readonly suggestion: string;
  /** The process holding the lock (`AM_GW_DATA_DIR_LOCKED`). */
  readonly pid: number | undefined;
  constructor(
    code: DataDirErrorCode,
    message: string,
    fields: { suggestion: string; pid?: number; cause?: unknown },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'DataDirError';
    this.code = code;
    this.suggestion = fields.suggestion;
    this.pid = fields.pid;
  }
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

const CHOOSE_ANOTHER = 'choose another directory with --data-dir (or AGENTMAIL_DATA_DIR)';

function invalid(message: string, suggestion: string, cause?: unknown): DataDirError {
  return new DataDirError(DATA_DIR_ERRORS.INVALID, message, {
    suggestion,
    ...(cause === undefined ? {} : { cause }),
  });
}

function virtualRoot(path: string): string | undefined {
  return VIRTUAL_FS_ROOTS.find((root) => path === root || path.startsWith(`${root}/`));
}

/**
 * Check and create the data directory, one level at a time, and return its absolute path.
 * Refuses a directory under /proc or /sys (also through a symbolic link), a path through a file,
 * a directory that can not be created, and one that is not writable — each fails at once with
 * a message naming the directory, never by looping or by a half-created tree.
 *
 * @throws DataDirError `AM_GW_DATA_DIR_INVALID`
 * @example const dir = prepareDataDir('./.data'); // '/home/me/.data', created when missing
 */
export function prepareDataDir(dataDir: string): string {
  const abs = resolve(dataDir);
  const refuseVirtual = (path: string, shown: string) => {
    const root = virtualRoot(path);
    if (root !== undefined)
      throw invalid(
        `data directory "${shown}" is under ${root}, a kernel view, not storage`,
        `${CHOOSE_ANOTHER}, e.g. ~/.local/share/agentmail`,
      );
  };
  refuseVirtual(abs, abs);
  // The nearest existing ancestor: everything below it is created here, level by level.
  const missing: string[] = [];
  let existing = abs;
  for (;;) {
    try {
      const st = statSync(existing);
      if (!st.isDirectory())
        throw invalid(
          `data directory "${abs}": "${existing}" exists and is not a directory`,
          `${CHOOSE_ANOTHER}, or move the file "${existing}" away`,
        );
      break;
    } catch (err) {
      if (err instanceof DataDirError) throw err;
      // ENOTDIR: a level above is a file; walking up finds it and names it.
      if (codeOf(err) !== 'ENOENT' && codeOf(err) !== 'ENOTDIR')
        throw invalid(
          `data directory "${abs}": can not inspect "${existing}" (${codeOf(err) || (err as Error).message})`,
          `make "${existing}" readable, or ${CHOOSE_ANOTHER}`,
          err,
        );
      missing.unshift(existing);
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  refuseVirtual(realpathSync(existing), abs);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (err) {
      if (codeOf(err) === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw invalid(
        `data directory "${abs}": can not create "${dir}" (${codeOf(err) || (err as Error).message})`,
        `create it yourself with write access for this user, or ${CHOOSE_ANOTHER}`,
        err,
      );
    }
  }
  try {
    accessSync(abs, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw invalid(
      `data directory "${abs}" is not writable (${codeOf(err) || (err as Error).message})`,
      `give this user write access to "${abs}", or ${CHOOSE_ANOTHER}`,
      err,
    );
  }
  return abs;
}

/** The content of a lock file. */
interface LockInfo {
  pid: number;
  hostname: string;
  token: string;
  started_at: string;
}

function readLock(path: string): LockInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string' && typeof v.token === 'string')
      return { pid: v.pid, hostname: v.hostname, token: v.token, started_at: String(v.started_at ?? '') };
  } catch {
    // missing, half written or not ours: the caller decides
  }
  return undefined;
}

/** True when a process with this pid exists (EPERM: it exists, under another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return codeOf(err) === 'EPERM';
  }
}

/** A held data-directory lock. */
export interface DataDirLock {
  /** The lock file. */
  readonly path: string;
  /** Remove the lock file if it is still ours; safe to call twice. */
  release(): void;
}

/**
 * Take the exclusive lock of a data directory: create `gateway.lock` with `O_EXCL`, holding this
 * process's pid, host name and a random token. A lock left by a process that no longer exists on
 * this host is stale and taken over; a live holder (this process included: two Gateways in one
 * process conflict just the same) is refused.
 *
 * @throws DataDirError `AM_GW_DATA_DIR_LOCKED` naming the holder's pid and host
 * @example const lock = acquireDataDirLock(dir); … lock.release();
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE_NAME);
  const me: LockInfo = {
    pid: process.pid,
    hostname: hostname(),
    token: `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    started_at: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (err) {
      if (codeOf(err) !== 'EEXIST')
        throw invalid(
          `data directory "${dataDir}": can not create the lock file (${codeOf(err) || (err as Error).message})`,
          `give this user write access to "${dataDir}", or ${CHOOSE_ANOTHER}`,
          err,
        );
      const holder = readLock(path);
      if (holder === undefined) {
        // Being written by a Gateway starting right now, or garbage left long ago.
        let ageMs = Number.POSITIVE_INFINITY;
        try {
          ageMs = Date.now() - statSync(path).mtimeMs;
        } catch {
          continue; // gone meanwhile: try again
        }
        if (ageMs < LOCK_UNREADABLE_GRACE_MS)
          throw new DataDirError(
            DATA_DIR_ERRORS.LOCKED,
            `data directory "${dataDir}" is being opened by another Gateway right now`,
            { suggestion: `wait for it, or ${CHOOSE_ANOTHER}` },
          );
      } else if (holder.hostname !== me.hostname || processAlive(holder.pid)) {
        const where = holder.hostname === me.hostname ? '' : ` on host "${holder.hostname}"`;
        throw new DataDirError(
          DATA_DIR_ERRORS.LOCKED,
          `data directory "${dataDir}" is in use by another Gateway (pid ${holder.pid}${where}, since ${holder.started_at || 'unknown'})`,
          {
            pid: holder.pid,
            suggestion:
              holder.hostname === me.hostname
                ? `stop that Gateway (kill ${holder.pid}) or ${CHOOSE_ANOTHER}; if pid ${holder.pid} is no Gateway, delete ${path}`
                : `stop the Gateway on "${holder.hostname}"; if none runs there, delete ${path}`,
          },
        );
      }
      // Stale: its process is gone. Remove it and try again.
      try {
        unlinkSync(path);
      } catch (e) {
        if (codeOf(e) !== 'ENOENT') throw e;
      }
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    let released = false;
    return {
      path,
      release: () => {
        if (released) return;
        released = true;
        if (readLock(path)?.token !== me.token) return; // taken over meanwhile: not ours to remove
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      },
    };
  }
  throw new DataDirError(
    DATA_DIR_ERRORS.LOCKED,
    `data directory "${dataDir}": could not take the lock file ${path}`,
    { suggestion: `retry; if it persists, make sure no Gateway runs and delete ${path}` },
  );
}
