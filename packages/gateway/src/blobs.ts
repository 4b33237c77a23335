/**
 * Attachment bytes on disk (SPEC G-36): uploads stream to a temporary name while they are hashed
 * and counted, then are renamed into place; an hourly sweep deletes blobs (and never-sent
 * uploads) that nothing references and that are older than 48 h.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
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

/** Blob files under `<dataDir>/blobs`. */
export class BlobStore {
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
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
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
    try {
      await pipeline(source, meter, createWriteStream(temp, { flags: 'wx' }));
      if (isTruncated?.()) throw new BlobTooLargeError(maxBytes);
      await rename(temp, this.pathOf(key));
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return { key, sizeBytes: size, sha256: hash.digest('hex') };
  }

  /** A read stream of a blob. */
  read(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  /** Delete a blob (missing is fine). */
  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
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
  for (const name of await readdir(blobs.dir)) {
    if (referenced.has(name)) continue;
    const path = join(blobs.dir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || info.mtimeMs >= cutoff) continue;
    // Re-check right before deleting: an upload may have been recorded meanwhile.
    const again = await db
      .selectFrom('attachments')
      .select('id')
      .where('blob_key', '=', name)
      .executeTakeFirst();
    if (again) continue;
    await rm(path, { force: true });
    blobsDeleted++;
  }
  return { attachmentsDeleted, blobsDeleted };
}
