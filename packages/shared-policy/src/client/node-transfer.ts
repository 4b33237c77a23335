/**
 * The Node side of the Gateway client: its transport on undici's `request` (an undici dispatcher
 * works, no port is refused), an upload streamed from a file path, and a download streamed to a
 * file inside allowed roots. Kept out of api-client.ts, which stays browser-safe.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { lstat, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ATTACHMENT_MAX_BYTES } from '@agentmail/protocol';
import { type Dispatcher, FormData, request } from 'undici';
import { AgentMailError, ERROR_CODES } from '../errors.js';
import type { ApiDownload } from './api-client.js';
import type { HttpTransport, UploadFile } from './http-transport.js';

/**
 * The Node transport of `ApiClient`: undici's `request` (the package's, so a `dispatcher` of the
 * same package works; fetch would refuse "bad ports"), a multipart body as undici's `FormData`
 * (a file-backed Blob streams from disk), redirects not followed. Every Node caller
 * (GatewayClient, the CLI, the testkit) passes it as `transport`.
 */
export const undiciTransport: HttpTransport = async (req) => {
  let body: string | FormData | undefined;
  if (typeof req.body === 'object') {
    body = new FormData();
    body.append(req.body.field, req.body.file.blob, req.body.file.filename);
  } else body = req.body;
  const res = await request(req.url, {
    method: req.method as Dispatcher.HttpMethod,
    headers: req.headers,
    signal: req.signal,
    ...(body === undefined ? {} : { body }),
    ...(req.dispatcher === undefined ? {} : { dispatcher: req.dispatcher as Dispatcher }),
  });
  return {
    status: res.statusCode,
    header: (name) => {
      const value = res.headers[name];
      return Array.isArray(value) ? value[0] : value;
    },
    text: () => res.body.text(),
    chunks: () => res.body as AsyncIterable<Uint8Array>,
    cancel: async () => {
      await res.body.dump().catch(() => {});
    },
  };
};

/** Options of {@link fileUpload}. */
export interface FileUploadOptions {
  /** File name stored with the attachment. @default the file's base name */
  filename?: string;
  /** MIME type. @default 'application/octet-stream' */
  contentType?: string;
}

/**
 * A file on disk as an {@link UploadFile}: a file-backed Blob, never read into memory whole.
 * @param filePath - absolute path of a regular file of at most {@link ATTACHMENT_MAX_BYTES}
 * @throws AgentMailError `AM_GATEWAY_PATH_RELATIVE` for a relative path,
 *   `AM_GATEWAY_FILE_UNREADABLE` when it is not a readable regular file,
 *   `AM_GATEWAY_UPLOAD_TOO_LARGE` above {@link ATTACHMENT_MAX_BYTES}.
 */
export async function fileUpload(filePath: string, options: FileUploadOptions = {}): Promise<UploadFile> {
  if (!isAbsolute(filePath))
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_PATH_RELATIVE,
      `upload path ${JSON.stringify(filePath)} is relative; give the absolute path of the file`,
    );
  let size: number;
  try {
    const info = await stat(filePath);
    if (!info.isFile()) throw new Error('not a regular file');
    size = info.size;
  } catch (err) {
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_FILE_UNREADABLE,
      `upload path ${JSON.stringify(filePath)} is not a readable file (${err instanceof Error ? err.message : String(err)}); check the path`,
      { cause: err },
    );
  }
  if (size > ATTACHMENT_MAX_BYTES)
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_UPLOAD_TOO_LARGE,
      `upload ${JSON.stringify(filePath)} is ${size} bytes, above the limit of ${ATTACHMENT_MAX_BYTES} bytes; compress or split it`,
    );
  const blob = await openAsBlob(filePath, { type: options.contentType ?? 'application/octet-stream' });
  return { blob, filename: options.filename ?? basename(filePath) };
}

/** A checked download target: the real directory, and the file path (or the directory itself). */
export interface DownloadTarget {
  dir: string;
  file: string;
  /** The target named a directory: the file name comes from the answer. */
  isDir: boolean;
}

function isInside(dir: string, root: string): boolean {
  return dir === root || dir.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Resolve and check a download target before anything is requested: absolute, its directory
 * exists, and its real path (symlinks resolved) lies inside one of `allowedRoots`.
 * @param target - absolute file path, or an existing directory (or a path ending in `/`)
 * @throws AgentMailError `AM_GATEWAY_PATH_RELATIVE`, `AM_GATEWAY_DOWNLOAD_DIR_MISSING`,
 *   `AM_GATEWAY_PATH_OUTSIDE_ROOT` (also when `allowedRoots` is empty), each naming the path and the fix.
 */
export async function checkDownloadTarget(
  target: string,
  allowedRoots: readonly string[],
): Promise<DownloadTarget> {
  const fix = allowedRoots.length
    ? `give an absolute path inside one of: ${allowedRoots.join(', ')}`
    : 'no download directory is allowed: configure allowedRoots on the Gateway client';
  if (!isAbsolute(target))
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_PATH_RELATIVE,
      `download path ${JSON.stringify(target)} is relative; ${fix}`,
    );
  const full = resolve(target);
  let isDir = false;
  try {
    isDir = (await stat(full)).isDirectory();
  } catch {
    isDir = false;
  }
  isDir ||= target.endsWith('/') || target.endsWith(sep);
  const dirPath = isDir ? full : dirname(full);
  let dir: string;
  try {
    dir = await realpath(dirPath);
  } catch {
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_DOWNLOAD_DIR_MISSING,
      `download directory ${JSON.stringify(dirPath)} does not exist; create it first or choose an existing directory (${fix})`,
    );
  }
  // Compare real paths: a symlink inside a root must not lead the write outside it.
  const roots = await Promise.all(allowedRoots.map((r) => realpath(r).catch(() => r)));
  if (!roots.some((root) => isInside(dir, root)))
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_PATH_OUTSIDE_ROOT,
      `download path ${JSON.stringify(target)} is outside the allowed directories; ${fix}`,
    );
  return { dir, file: isDir ? dir : join(dir, basename(full)), isDir };
}

/** Result of {@link saveDownload}. */
export interface DownloadResult {
  /** Absolute path of the written file. */
  path: string;
  size_bytes: number;
  /** File name the Gateway gave (Content-Disposition), '' when none. */
  filename: string;
  content_type: string;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stream a download into its checked target: under a temporary name in the same directory, then
 * renamed, so a failed download leaves no file. Into a directory, the file takes the Gateway's
 * file name (else `attachment-<id>`).
 * @throws AgentMailError `AM_GATEWAY_FILE_EXISTS` (without `overwrite`; nothing is written),
 *   the download's own errors (`AM_GATEWAY_NETWORK`, the caller's abort), and file-system errors.
 */
export async function saveDownload(
  download: ApiDownload,
  target: DownloadTarget,
  options: { id: string; overwrite?: boolean | undefined },
): Promise<DownloadResult> {
  const file = target.isDir
    ? join(target.dir, download.filename || `attachment-${options.id.replace(/[^\w.-]/g, '_')}`)
    : target.file;
  if (!options.overwrite && (await exists(file))) {
    await download.cancel();
    throw new AgentMailError(
      ERROR_CODES.GATEWAY_FILE_EXISTS,
      `download target ${JSON.stringify(file)} already exists; choose another path or allow overwriting`,
    );
  }
  const temp = join(target.dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.part`);
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.from(download.chunks()), count, createWriteStream(temp, { flags: 'wx' }));
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  return { path: file, size_bytes: size, filename: download.filename, content_type: download.contentType };
}
