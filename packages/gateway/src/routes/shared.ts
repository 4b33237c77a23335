/**
 * Pieces shared by the route modules: the typed instance, id params, uploads and downloads.
 */
import { type AttachmentInfo, Id } from '@agentmail/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { BlobTooLargeError } from '../blobs.js';
import type { Actor, GatewayContext } from '../context.js';
import { iso } from '../context.js';
import { GatewayError } from '../errors.js';
import { newId } from '../ids.js';

/** `{id}` path parameter. */
export const IdParams = z.strictObject({ id: Id });

/** Typed instance helper. */
export function typed(app: FastifyInstance) {
  return app.withTypeProvider<ZodTypeProvider>();
}

/**
 * Receive one multipart file (field `file`), streamed to disk under the size limit (≤25 MB).
 * @throws GatewayError `AM_GW_BAD_REQUEST` (no file), `AM_GW_PAYLOAD_TOO_LARGE` (413)
 */
export async function receiveUpload(
  ctx: GatewayContext,
  req: FastifyRequest,
  actor: Actor,
): Promise<AttachmentInfo> {
  if (!req.isMultipart())
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      'uploads are multipart/form-data with one field "file"',
      {
        suggestion: 'curl -F file=@./report.pdf …',
      },
    );
  const file = await req.file({ limits: { fileSize: ctx.config.attachmentMaxBytes, files: 1 } });
  if (!file)
    throw new GatewayError('BAD_REQUEST', 'field "file": missing', {
      suggestion: 'send the file in the multipart field "file"',
      extra: { field: 'file' },
    });
  const now = ctx.config.clock();
  const id = newId('a', now);
  let written: Awaited<ReturnType<GatewayContext['blobs']['write']>>;
  try {
    written = await ctx.blobs.write(id, file.file, ctx.config.attachmentMaxBytes, () => file.file.truncated);
  } catch (err) {
    if (err instanceof BlobTooLargeError || (err as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE')
      throw new GatewayError(
        'PAYLOAD_TOO_LARGE',
        `field "file": larger than ${ctx.config.attachmentMaxBytes} bytes`,
        {
          suggestion: 'split the file or share it another way',
          extra: { max_bytes: ctx.config.attachmentMaxBytes },
        },
      );
    throw err;
  }
  const row = {
    id,
    uploader_name: actor.name,
    uploader_human: actor.kind === 'user' ? 1 : 0,
    filename: file.filename || 'file',
    content_type: file.mimetype || 'application/octet-stream',
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
 * Stream an attachment the actor can see: its own upload, or one of a mail it sent or received.
 * @throws GatewayError `AM_GW_NOT_FOUND`
 */
export async function sendAttachment(
  ctx: GatewayContext,
  reply: FastifyReply,
  actor: Actor,
  id: string,
): Promise<FastifyReply> {
  const a = await ctx.db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirst();
  let visible =
    a !== undefined && a.uploader_name === actor.name && (a.uploader_human === 1) === (actor.kind === 'user');
  if (a && !visible) {
    const human = actor.kind === 'user' ? 1 : 0;
    const seen = await ctx.db
      .selectFrom('mail_attachments')
      .innerJoin('mails', 'mails.id', 'mail_attachments.mail_id')
      .leftJoin('deliveries', 'deliveries.mail_id', 'mails.id')
      .select('mails.id')
      .where('mail_attachments.attachment_id', '=', id)
      .where((eb) =>
        eb.or([
          eb.and([eb('mails.from_name', '=', actor.name), eb('mails.from_human', '=', human)]),
          eb.and([
            eb('deliveries.recipient_name', '=', actor.name),
            eb('deliveries.recipient_human', '=', human),
          ]),
        ]),
      )
      .executeTakeFirst();
    visible = seen !== undefined;
  }
  if (!a || !visible)
    throw new GatewayError('UNKNOWN_ATTACHMENT', `attachment "${id}" not found`, {
      suggestion: 'use an attachment id listed in a mail you can read',
    });
  const encoded = encodeURIComponent(a.filename);
  return reply
    .header('content-type', a.content_type)
    .header('content-length', String(a.size_bytes))
    .header('x-content-sha256', a.sha256)
    .header(
      'content-disposition',
      `attachment; filename="${a.filename.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encoded}`,
    )
    .send(ctx.blobs.read(a.blob_key));
}
