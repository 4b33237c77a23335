/** The attachment tools (SPEC B-16, B-17): upload a file, download one to a new file (never overwriting). */
import { Id } from '@agentmail/protocol';
import { formatText, type Locale } from '@agentmail/shared-policy';
import { z } from 'zod';
import { AbsolutePath, CHANGES_LOCAL, callOptions, defineTool, STRING } from './define.js';
import type { MailTool } from './types.js';

/** `upload_attachment`. */
function uploadAttachmentTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'upload_attachment',
      shape: {
        path: AbsolutePath,
        filename: z.string().trim().min(1).max(255).optional(),
        content_type: z.string().trim().min(1).max(200).optional(),
      },
      docs: {
        path: { schema: STRING, text: 'tools.param.upload_path' },
        filename: { schema: STRING, text: 'tools.param.filename' },
        content_type: { schema: STRING, text: 'tools.param.content_type' },
      },
      annotations: CHANGES_LOCAL,
      async run(args, ctx, lc) {
        const info = await ctx.client.uploadAttachment(args.path, {
          ...callOptions(ctx),
          ...(args.filename ? { filename: args.filename } : {}),
          ...(args.content_type ? { contentType: args.content_type } : {}),
        });
        return {
          text: formatText(
            'tools.upload.done',
            { filename: info.filename, size: info.size_bytes, id: info.id },
            lc,
          ),
          details: info,
        };
      },
    },
    locale,
  );
}

/** `download_attachment`. */
function downloadAttachmentTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'download_attachment',
      shape: { attachment_id: Id, path: AbsolutePath },
      docs: {
        attachment_id: { schema: STRING, text: 'tools.param.attachment_id' },
        path: { schema: STRING, text: 'tools.param.download_path' },
      },
      // Writes a new file; never overwrites one (the client refuses existing files).
      annotations: CHANGES_LOCAL,
      async run(args, ctx, lc) {
        const res = await ctx.client.downloadAttachment(args.attachment_id, args.path, callOptions(ctx));
        return {
          text: formatText(
            'tools.download.done',
            { id: args.attachment_id, path: res.path, size: res.size_bytes },
            lc,
          ),
          details: res,
        };
      },
    },
    locale,
  );
}

/** `upload_attachment`, `download_attachment`, with descriptions in `locale`. */
export function attachmentTools(locale: Locale): MailTool[] {
  return [uploadAttachmentTool(locale), downloadAttachmentTool(locale)];
}
