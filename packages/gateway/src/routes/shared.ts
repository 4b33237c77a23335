/**
 * Pieces shared by the route modules: uploads and downloads.
 */
import { type AttachmentInfo, UPLOAD_FIELD } from '@agentmail/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BlobTooLargeError } from '../blobs.js';
import type { Actor, GatewayContext } from '../context.js';
import { iso } from '../context.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { IdempotencyClaim } from '../idempotency.js';
import { newId } from '../ids.js';
import { canSeeAttachment } from '../mail-access.js';

const UPLOAD_HOW = `send multipart/form-data with one file in the field "${UPLOAD_FIELD}" (curl -F ${UPLOAD_FIELD}=@./report.pdf …)`;

/** Messages of the multipart parser (busboy) for a body that is not valid multipart. */
const MALFORMED_MULTIPART =
  /boundary not found|boundary required|unexpected end of (multipart data|form)|terminated early|malformed part header|needle cannot|unsupported content-type/i;

/**
 * The client-visible error of a failed upload: a malformed body (no boundary, truncated, a
 * prototype field name), too many parts or a second file are the client's fault and never
 * succeed on retry (400, no "retry later"); too large is a 413; anything else (the disk) is
 * rethrown as is.
 */
function uploadError(err: unknown, maxBytes: number): unknown {
  if (isGatewayError(err)) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof BlobTooLargeError || code === 'FST_REQ_FILE_TOO_LARGE')
    return new GatewayError('PAYLOAD_TOO_LARGE', `field "${UPLOAD_FIELD}": larger than ${maxBytes} bytes`, {
      suggestion: 'split the file or share it another way',
      extra: { field: UPLOAD_FIELD, max_bytes: maxBytes },
    });
  const bad = (what: string, cause: unknown) =>
    new GatewayError('BAD_REQUEST', what, { suggestion: UPLOAD_HOW, extra: { field: UPLOAD_FIELD }, cause });
  switch (code) {
    case 'FST_FILES_LIMIT':
      return bad(`field "${UPLOAD_FIELD}": one file per upload`, err);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return bad('the multipart body has too many parts', err);
    case 'FST_MP_PREMATURE_CLOSE':
      return bad('the request ended before the multipart body was complete', err);
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return bad(`the multipart body is malformed: ${message}`, err);
    default:
      break;
  }
  if (code === undefined && MALFORMED_MULTIPART.test(message))
    return bad(`the multipart body is malformed: ${message.replace(/^Multipart: /, '')}`, err);
  return err;
}

/**
 * Receive one multipart file in the field `file`, streamed to disk under the size limit
 * (≤25 MB). Other text fields are ignored; a file in another field or a second file is refused
 * (never silently dropped), and a malformed body is a 400 — nothing is kept of a refused upload.
 * @throws GatewayError `AM_GW_UNSUPPORTED_MEDIA_TYPE` (415, not multipart), `AM_GW_BAD_REQUEST`
 *   (400: no file, a file in another field, two files, a malformed or truncated body),
 *   `AM_GW_PAYLOAD_TOO_LARGE` (413)
 */
export async function receiveUpload(
  ctx: GatewayContext,
  req: FastifyRequest,
  actor: Actor,
): Promise<AttachmentInfo> {
  if (!req.isMultipart())
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      `uploads are multipart/form-data with one field "${UPLOAD_FIELD}"`,
      {
        suggestion: `curl -F ${UPLOAD_FIELD}=@./report.pdf …`,
      },
    );
  const maxBytes = ctx.config.attachmentMaxBytes;
  const now = ctx.config.clock();
  const id = newId('a', now);
  let stored:
    | { written: Awaited<ReturnType<GatewayContext['blobs']['write']>>; filename: string; mimetype: string }
    | undefined;
  try {
    // Two files allowed by the parser so that a second one is seen, and refused.
    for await (const part of req.files({ limits: { fileSize: maxBytes, files: 2 } })) {
      if (part.fieldname !== UPLOAD_FIELD || stored !== undefined) {
        part.file.resume();
        throw new GatewayError(
          'BAD_REQUEST',
          stored === undefined
            ? `field "${part.fieldname}": the file must be in the field "${UPLOAD_FIELD}"`
            : `field "${part.fieldname}": one file per upload; a second file was sent`,
          { suggestion: UPLOAD_HOW, extra: { field: part.fieldname } },
        );
      }
      const written = await ctx.blobs.write(id, part.file, maxBytes, () => part.file.truncated);
      stored = { written, filename: part.filename, mimetype: part.mimetype };
    }
  } catch (err) {
    if (stored) await ctx.blobs.remove(stored.written.key);
    throw uploadError(err, maxBytes);
  }
  if (!stored)
    throw new GatewayError('BAD_REQUEST', `field "${UPLOAD_FIELD}": missing`, {
      suggestion: `send the file in the multipart field "${UPLOAD_FIELD}"`,
      extra: { field: UPLOAD_FIELD },
    });
  const { written } = stored;
  const row = {
    id,
    uploader_name: actor.name,
    uploader_human: actor.kind === 'user' ? 1 : 0,
    filename: stored.filename || 'file',
    content_type: stored.mimetype || 'application/octet-stream',
    size_bytes: written.sizeBytes,
    sha256: written.sha256,
    blob_key: written.key,
    created_at: now,
  };
  try {
    await ctx.db.insertInto('attachments').values(row).execute();
  } catch (err) {
    await ctx.blobs.remove(written.key);
    throw err;
  }
  return {
    id,
    filename: row.filename,
    content_type: row.content_type,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    created_at: iso(now),
  };
}

/**
 * Stream an attachment the actor can see (`canSeeAttachment`): its own upload, or one of a mail
 * it sent or received.
 * @throws GatewayError `AM_GW_NOT_FOUND`
 */
export async function sendAttachment(
  ctx: GatewayContext,
  reply: FastifyReply,
  actor: Actor,
  id: string,
): Promise<FastifyReply> {
  const a = await ctx.db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirst();
  const visible = a !== undefined && (await canSeeAttachment(ctx.db, actor, id));
  if (!a || !visible)
    throw new GatewayError('UNKNOWN_ATTACHMENT', `attachment "${id}" not found`, {
      suggestion: 'use an attachment id listed in a mail you can read',
    });
  const encoded = encodeURIComponent(a.filename);
  return (
    reply
      .header('content-type', a.content_type)
      .header('content-length', String(a.size_bytes))
      .header('x-content-sha256', a.sha256)
      // Uploaded bytes are untrusted (SPEC H-1): opened in the browser, they run in a sandbox with
      // no script and no access to the Gateway's origin, and are downloaded rather than shown.
      .header('content-security-policy', "sandbox; default-src 'none'; frame-ancestors 'none'")
      .header(
        'content-disposition',
        `attachment; filename="${a.filename.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encoded}`,
      )
      .send(ctx.blobs.read(a.blob_key))
  );
}

/**
 * The answer of an idempotent endpoint, marked `Idempotent-Replayed: true` when it is the stored
 * answer of an earlier request with the same `Idempotency-Key` (SPEC G-41).
 */
export function replayed<T>(reply: FastifyReply, claim: IdempotencyClaim | undefined, answer: T): T {
  if (claim?.replayed) reply.header('idempotent-replayed', 'true');
  return answer;
}
