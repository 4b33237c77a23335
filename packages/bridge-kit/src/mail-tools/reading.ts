/** The reading tools (SPEC B-17): the inbox (marking read what it listed), a mail in pages, a thread. */
import { Id } from '@agentmail/protocol';
import {
  type Locale,
  MAIL_PAGE_CHARS,
  MAIL_PAGE_MAX_CHARS,
  messageOf,
  renderInbox,
  renderMail,
  renderThread,
} from '@agentmail/shared-policy';
import { z } from 'zod';
import { CHANGES_LOCAL, callOptions, defineTool, READ_ONLY, STRING, toolError } from './define.js';
import type { MailTool } from './types.js';

/** `read_inbox`. */
function readInboxTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'read_inbox',
      shape: {
        status: z.enum(['unread', 'all']).default('unread'),
        limit: z.number().int().min(1).max(100).default(5),
        session_id: Id.optional(),
      },
      docs: {
        status: { schema: { type: 'string', enum: ['unread', 'all'] }, text: 'tools.param.status' },
        limit: { schema: { type: 'integer', minimum: 1, maximum: 100 }, text: 'tools.param.limit' },
        session_id: { schema: STRING, text: 'tools.param.session_id' },
      },
      // Marks the listed mails read: not read-only, but nothing is lost (SPEC B-17).
      annotations: CHANGES_LOCAL,
      async run(args, ctx, lc) {
        const res = await ctx.client.inbox(
          {
            status: args.status,
            limit: args.limit,
            ...(args.session_id ? { session_id: args.session_id } : {}),
          },
          callOptions(ctx),
        );
        // B-17: mark read exactly the unread mails this call listed, never with status=all.
        const toMark =
          args.status === 'unread' ? res.mails.filter((m) => m.status === 'unread').map((m) => m.id) : [];
        let marked: string[] = [];
        let markError: string | undefined;
        if (toMark.length > 0) {
          try {
            await ctx.client.markRead(toMark, callOptions(ctx));
            marked = toMark;
          } catch (err) {
            markError = messageOf(err);
          }
        }
        const text = renderInbox(res, {
          status: args.status,
          marked,
          locale: lc,
          ...(markError === undefined ? {} : { markError }),
        });
        return { text, details: { ...res, marked } };
      },
    },
    locale,
  );
}

/** `read_mail`. */
function readMailTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'read_mail',
      shape: {
        mail_id: Id,
        offset: z.number().int().min(0).default(0),
        limit: z.number().int().min(1).max(MAIL_PAGE_MAX_CHARS).default(MAIL_PAGE_CHARS),
      },
      docs: {
        mail_id: { schema: STRING, text: 'tools.param.mail_id' },
        offset: { schema: { type: 'integer', minimum: 0 }, text: 'tools.param.body_offset' },
        limit: {
          schema: { type: 'integer', minimum: 1, maximum: MAIL_PAGE_MAX_CHARS },
          text: 'tools.param.body_limit',
        },
      },
      annotations: READ_ONLY,
      async run(args, ctx, lc) {
        const mail = await ctx.client.mail(args.mail_id, callOptions(ctx));
        // A long body comes in pages: one tool result never holds a whole 1 MB mail (B-17).
        return { text: renderMail(mail, lc, { offset: args.offset, limit: args.limit }), details: mail };
      },
    },
    locale,
  );
}

/** `read_thread`. */
function readThreadTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'read_thread',
      shape: { mail_id: Id.optional(), offset: z.number().int().min(0).optional() },
      docs: {
        mail_id: { schema: STRING, text: 'tools.param.thread_mail_id' },
        offset: { schema: { type: 'integer', minimum: 0 }, text: 'tools.param.offset' },
      },
      annotations: READ_ONLY,
      async run(args, ctx, lc) {
        const id = args.mail_id ?? ctx.mail?.mail_id;
        if (!id) return toolError('read_thread', 'tools.error.no_mail', lc);
        const thread = await ctx.client.thread(
          id,
          args.offset === undefined ? {} : { offset: args.offset },
          callOptions(ctx),
        );
        return { text: renderThread(thread, lc), details: thread };
      },
    },
    locale,
  );
}

/** `read_inbox`, `read_mail`, `read_thread`, with descriptions in `locale`. */
export function readingTools(locale: Locale): MailTool[] {
  return [readInboxTool(locale), readMailTool(locale), readThreadTool(locale)];
}
