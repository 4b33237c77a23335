/**
 * The file-system side of the turn RPC's socket: a private directory, a path the kernel accepts,
 * and a stale socket of a crashed bridge told apart from a live one.
 *
 * Why a path socket in a 0700 directory: the directory's permissions are what keeps other users
 * out (SPEC B-21: a channel only the bridge's user can open); the socket's own 0600 is a second
 * lock. Linux abstract sockets have no file permissions at all, so any local user could connect.
 *
 * @module
 */
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { isAbsolute } from 'node:path';
import { TurnRpcError } from './wire.js';

/**
 * Longest socket path the kernel takes, in UTF-8 bytes: `sun_path` holds 108 bytes on Linux and
 * 104 on macOS, including the terminating NUL. A longer path would be refused (or, worse,
 * silently cut by some runtimes), so it is checked before listening.
 */
export const UNIX_SOCKET_PATH_MAX_BYTES = process.platform === 'darwin' ? 103 : 107;

/**
 * Check that the kernel takes `path` as a socket path ({@link UNIX_SOCKET_PATH_MAX_BYTES}).
 * @throws TurnRpcError `AM_RPC_SOCKET_PATH_TOO_LONG` naming the path, its length and the fix.
 */
export function checkSocketPathLength(path: string): void {
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > UNIX_SOCKET_PATH_MAX_BYTES) {
    throw new TurnRpcError(
      'AM_RPC_SOCKET_PATH_TOO_LONG',
      `the bridge socket path "${path}" is ${bytes} bytes; Unix sockets allow at most ${UNIX_SOCKET_PATH_MAX_BYTES}. Give the bridge a shorter data directory (e.g. under $XDG_RUNTIME_DIR or /run/agentmail)`,
    );
  }
}

/**
 * Create `dir` (0700) or make an existing one 0700, after checking it is a real directory of
 * this user.
 * @throws TurnRpcError `AM_RPC_SOCKET_DIR_INVALID` when `dir` is relative, cannot be created, is
 *   not a directory (a file or a symlink) or belongs to another user.
 */
export async function prepareSocketDir(dir: string): Promise<void> {
  const invalid = (why: string, cause?: unknown): TurnRpcError =>
    new TurnRpcError(
      'AM_RPC_SOCKET_DIR_INVALID',
      `the bridge socket directory "${dir}" ${why}`,
      cause === undefined ? {} : { cause },
    );
  if (!isAbsolute(dir)) throw invalid('must be an absolute path: host processes run in other directories');
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw invalid(
      `cannot be created (${(cause as Error).message}); make its parent writable by the bridge user`,
      cause,
    );
  }
  const st = await lstat(dir);
  // A symlink could point anywhere another user prepared; the bridge creates this directory itself.
  if (!st.isDirectory())
    throw invalid('is not a directory (a file or a symlink); remove it or choose another data directory');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw invalid(
      `belongs to uid ${st.uid}, not to the bridge user (uid ${uid}); choose a data directory of the bridge user`,
    );
  }
  if ((st.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

/**
 * What is at `path` when a listen failed with EADDRINUSE: a stale socket (nothing listens; it is
 * removed so the caller can listen again) or a live one (refused).
 * @throws TurnRpcError `AM_RPC_SOCKET_IN_USE` when a server answers on `path`;
 *   `AM_RPC_SOCKET_DIR_INVALID` when `path` is not a socket (never deleted here).
 */
export async function removeStaleSocket(path: string): Promise<void> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch {
    return; // gone meanwhile: free
  }
  if (!st.isSocket()) {
    throw new TurnRpcError(
      'AM_RPC_SOCKET_DIR_INVALID',
      `"${path}" exists and is not a socket; it is not removed. Move it away or choose another data directory`,
    );
  }
  if (await somebodyListens(path)) {
    throw new TurnRpcError(
      'AM_RPC_SOCKET_IN_USE',
      `another bridge is running and listening on "${path}"; stop it first, or give this bridge its own data directory`,
    );
  }
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/** True when a connect to `path` succeeds (a live server); refused or missing means nobody listens. */
function somebodyListens(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    const done = (live: boolean): void => {
      probe.destroy();
      resolve(live);
    };
    probe.once('connect', () => done(true));
    probe.once('error', (err: NodeJS.ErrnoException) => {
      // EAGAIN: a live server whose backlog is full; anything but "refused"/"missing" counts as live.
      done(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT');
    });
  });
}
