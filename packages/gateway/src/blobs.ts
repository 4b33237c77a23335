/**
 * Attachment bytes (SPEC G-36), behind one {@link BlobStore} interface: on disk under the data
 * directory (the default: uploads stream to a temporary name while they are hashed and counted,
 * then are renamed into place), or in PostgreSQL, chunked, when the store is there, so every
 * Gateway on the database serves every attachment. An hourly sweep deletes blobs (and never-sent
 * uploads) that nothing references and that are older than 48 h.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BLOB_SWEEP_AGE_MS } from './config.js';
import type { GatewayDb } from './db/database.js';
import type { Clock } from './ids.js';

const TEMP_PREFIX = 'tmp-';

/** A blob written by {@link BlobStore.write}. */
export interface WrittenBlob {
  key: string;
  sizeBytes: number;
  sha256: string;
}

/** Thrown by {@link BlobStore.write} when the stream was larger than allowed. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`upload larger than ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/** What one sweep removed. */
export interface SweepReport {
  /** Attachment rows of uploads never attached to a mail, older than the age limit. */
  attachmentsDeleted: number;
  /** Blob files no attachment references (and temp files), older than the age limit. */
  blobsDeleted: number;
}

/** Where attachment bytes live: {@link DirectoryBlobStore} or {@link PostgresBlobStore}. */
export interface BlobStore {
  /**
   * Stream `source` into blob `key`, hashing and counting; the blob exists only once complete.
   * @throws BlobTooLargeError past `maxBytes` (nothing is left behind)
   */
  write(key: string, source: Readable, maxBytes: number, isTruncated?: () => boolean): Promise<WrittenBlob>;
  /** A read stream of a blob (it errors when there is none). */
  read(key: string): Readable;
  /** Delete a blob (missing is fine). */
  remove(key: string): Promise<void>;
  /** Every stored blob (leftover partial ones too) with when it was written (ms), for the sweep. */
  list(): Promise<Array<{ key: string; writtenAt: number }>>;
}

/** A meter that hashes and counts what passes and fails past `maxBytes`. */
function meter(maxBytes: number): {
  transform: Transform;
  result: () => { sizeBytes: number; sha256: string };
} {
  const hash = createHash('sha256');
  let size = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) {
        done(new BlobTooLargeError(maxBytes));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { transform, result: () => ({ sizeBytes: size, sha256: hash.digest('hex') }) };
}

/** Blob files under `<dataDir>/blobs` (one Gateway per data directory). */
export class DirectoryBlobStore implements BlobStore {
  readonly dir: string;
  constructor(dataDir: string) {
    this.dir = join(dataDir, 'blobs');
    mkdirSync(this.dir, { recursive: true });
  }

  /** Path of a blob. */
  pathOf(key: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return join(this.dir, key);
  }

  /**
   * Stream `source` to a temp file, hashing and counting; rename to `key` when complete.
   * @throws BlobTooLargeError past `maxBytes` (the temp file is removed)
   */
  async write(
    key: string,
    source: Readable,
    maxBytes: number,
    isTruncated?: () => boolean,
  ): Promise<WrittenBlob> {
    const temp = join(this.dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    const m = meter(maxBytes);
    try {
      await pipeline(source, m.transform, createWriteStream(temp, { flags: 'wx' }));
      if (isTruncated?.()) throw new BlobTooLargeError(maxBytes);
      await rename(temp, this.pathOf(key));
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return { key, ...m.result() };
  }

  /** A read stream of a blob. */
  read(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  /** Delete a blob (missing is fine). */
  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async list(): Promise<Array<{ key: string; writtenAt: number }>> {
    const out: Array<{ key: string; writtenAt: number }> = [];
    for (const name of await readdir(this.dir)) {
      const info = await stat(join(this.dir, name)).catch(() => undefined);
      if (info?.isFile()) out.push({ key: name, writtenAt: info.mtimeMs });
    }
    return out;
  }
}

/** Bytes per stored chunk of a {@link PostgresBlobStore} blob. @default 256 KiB */
export const BLOB_CHUNK_BYTES = 256 * 1024;

/**
 * Blobs in PostgreSQL (`blob_chunks`, migration 0008): a blob is its chunks in order; the last
 * chunk is marked, so a blob whose upload broke off is never read as complete, and the sweep
 * removes its chunks. One store for every Gateway on the database.
 */
export class PostgresBlobStore implements BlobStore {
  constructor(private readonly db: GatewayDb) {}

  async write(
    key: string,
    source: Readable,
    maxBytes: number,
    isTruncated?: () => boolean,
  ): Promise<WrittenBlob> {
    const m = meter(maxBytes);
    const now = Date.now();
    let seq = 0;
    let pending: Buffer = Buffer.alloc(0);
    const put = async (data: Buffer, last: boolean): Promise<void> => {
      await this.db
        .insertInto('blob_chunks')
        .values({ blob_key: key, seq: seq++, data, last: last ? 1 : 0, created_at: now })
        .execute();
    };
    try {
      await pipeline(source, m.transform, async (chunks: AsyncIterable<Buffer>) => {
        for await (const chunk of chunks) {
          pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
          while (pending.length >= BLOB_CHUNK_BYTES) {
            await put(pending.subarray(0, BLOB_CHUNK_BYTES), false);
            pending = pending.subarray(BLOB_CHUNK_BYTES);
          }
        }
      });
      if (isTruncated?.()) throw new BlobTooLargeError(maxBytes);
      await put(pending, true);
    } catch (err) {
      await this.remove(key);
      throw err;
    }
    return { key, ...m.result() };
  }

  read(key: string): Readable {
    const db = this.db;
    return Readable.from(
      (async function* () {
        for (let seq = 0; ; seq++) {
          const row = await db
            .selectFrom('blob_chunks')
            .select(['data', 'last'])
            .where('blob_key', '=', key)
            .where('seq', '=', seq)
            .executeTakeFirst();
          if (!row)
            throw Object.assign(new Error(`blob ${key} is missing or incomplete`), { code: 'ENOENT' });
          yield Buffer.from(row.data);
          if (row.last === 1) return;
        }
      })(),
    );
  }

  async remove(key: string): Promise<void> {
    await this.db.deleteFrom('blob_chunks').where('blob_key', '=', key).execute();
  }

  async list(): Promise<Array<{ key: string; writtenAt: number }>> {
    const rows = await this.db
      .selectFrom('blob_chunks')
      .select(['blob_key', 'created_at'])
      .where('seq', '=', 0)
      .execute();
    return rows.map((r) => ({ key: r.blob_key, writtenAt: Number(r.created_at) }));
  }
}

/**
 * The blob sweep (SPEC G-36): deletes uploads never attached to a mail and older than `ageMs`,
 * then every blob file (or leftover temp file) that no attachment references and whose file is
 * older than `ageMs`. The server runs it hourly; tests call it with an injected clock.
 *
 * @param ageMs - minimum age @default BLOB_SWEEP_AGE_MS (48 h)
 */
export async function sweepBlobs(
  db: GatewayDb,
  blobs: BlobStore,
  clock: Clock,
  ageMs: number = BLOB_SWEEP_AGE_MS,
): Promise<SweepReport> {
  const cutoff = clock() - ageMs;
  const orphans = await db
    .selectFrom('attachments')
    .leftJoin('mail_attachments', 'mail_attachments.attachment_id', 'attachments.id')
    .select('attachments.id')
    .where('mail_attachments.mail_id', 'is', null)
    .where('attachments.created_at', '<', cutoff)
    .execute();
  let attachmentsDeleted = 0;
  if (orphans.length) {
    const r = await db
      .deleteFrom('attachments')
      .where(
        'id',
        'in',
        orphans.map((o) => o.id),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('mail_attachments')
              .select('mail_id')
              .whereRef('mail_attachments.attachment_id', '=', 'attachments.id'),
          ),
        ),
      )
      .executeTakeFirst();
    attachmentsDeleted = Number(r.numDeletedRows);
  }
  const referenced = new Set(
    (await db.selectFrom('attachments').select('blob_key').execute()).map((r) => r.blob_key),
  );
  let blobsDeleted = 0;
  for (const { key: name, writtenAt } of await blobs.list()) {
    if (referenced.has(name) || writtenAt >= cutoff) continue;
    // Re-check right before deleting: an upload may have been recorded meanwhile.
    const again = await db
      .selectFrom('attachments')
      .select('id')
      .where('blob_key', '=', name)
      .executeTakeFirst();
    if (again) continue;
    await blobs.remove(name);
    blobsDeleted++;
  }
  return { attachmentsDeleted, blobsDeleted };
}
