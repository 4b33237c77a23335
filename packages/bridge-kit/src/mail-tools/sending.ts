/** The sending tools (SPEC B-10, B-16, B-17): send and forward from the turn's session, recording what the model sent itself. */
import { Id } from '@agentmail/protocol';
import { formatText, type Locale, sessionWords } from '@agentmail/shared-policy';
import { z } from 'zod';
import {
  Address,
  AddressList,
  AttachmentIds,
  callOptions,
  defineTool,
  fromSession,
  recordSends,
  SENDS_MAIL,
  STRING,
  STRING_LIST,
} from './define.js';
import type { MailTool } from './types.js';

/** `send_mail`. */
function sendMailTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'send_mail',
      shape: {
        to: Address,
        subject: z.string().max(500).default(''),
        body: z.string().max(1_000_000),
        cc: AddressList.optional(),
        reply_to: Id.optional(),
        session_alias: z.string().trim().min(1).max(80).optional(),
        attachment_ids: AttachmentIds.optional(),
        max_rounds: z.number().int().min(1).max(1000).optional(),
      },
      docs: {
        to: { schema: STRING, text: 'tools.param.to' },
        subject: { schema: STRING, text: 'tools.param.subject' },
        body: { schema: STRING, text: 'tools.param.body' },
        cc: { schema: STRING_LIST, text: 'tools.param.cc' },
        reply_to: { schema: STRING, text: 'tools.param.reply_to' },
        session_alias: { schema: STRING, text: 'tools.param.session_alias' },
        attachment_ids: { schema: STRING_LIST, text: 'tools.param.attachment_ids' },
        max_rounds: {
          schema: { type: 'integer', minimum: 1, maximum: 1000 },
          text: 'tools.param.max_rounds',
        },
      },
      annotations: SENDS_MAIL,
      async run(args, ctx, lc) {
        const res = await ctx.client.send(
          {
            to: args.to,
            subject: args.subject,
            body: args.body,
            ...(args.cc?.length ? { cc: args.cc } : {}),
            ...(args.reply_to ? { reply_to: args.reply_to } : {}),
            ...(args.session_alias ? { session_alias: args.session_alias } : {}),
            // B-16: normalised above; an empty list is left out (the Gateway stays strict).
            ...(args.attachment_ids?.length ? { attachment_ids: args.attachment_ids } : {}),
            ...(args.max_rounds === undefined ? {} : { max_rounds: args.max_rounds }),
            ...fromSession(ctx),
          },
          callOptions(ctx),
        );
        if (res.status === 'duplicate_relay')
          return { text: formatText('tools.send.duplicate', { mail_id: res.mail_id }, lc), details: res };
        // B-10: the model mailed these parties itself; the auto relay must not repeat it.
        const recordError = await recordSends(ctx, [args.to, ...(args.cc ?? [])]);
        const text = formatText(
          'tools.send.done',
          {
            mail_id: res.mail_id,
            address: res.address,
            session: sessionWords(res.session_alias, lc),
            session_id: res.session_id,
            rounds_left: res.rounds_left ?? formatText('tools.send.free', {}, lc),
          },
          lc,
        );
        return { text, details: recordError === undefined ? res : { ...res, record_error: recordError } };
      },
    },
    locale,
  );
}

/** `forward_mail`. */
function forwardMailTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'forward_mail',
      shape: { mail_id: Id, to: Address, comment: z.string().max(100_000).optional() },
      docs: {
        mail_id: { schema: STRING, text: 'tools.param.mail_id' },
        to: { schema: STRING, text: 'tools.param.to' },
        comment: { schema: STRING, text: 'tools.param.comment' },
      },
      annotations: SENDS_MAIL,
      async run(args, ctx, lc) {
        const res = await ctx.client.forward(
          args.mail_id,
          {
            to: args.to,
            ...(args.comment === undefined ? {} : { comment: args.comment }),
            ...fromSession(ctx),
          },
          callOptions(ctx),
        );
        if (res.status === 'duplicate_relay')
          return { text: formatText('tools.send.duplicate', { mail_id: res.mail_id }, lc), details: res };
        const recordError = await recordSends(ctx, [args.to]);
        const text = formatText(
          'tools.forward.done',
          {
            source_id: args.mail_id,
            mail_id: res.mail_id,
            address: res.address,
            session: sessionWords(res.session_alias, lc),
          },
          lc,
        );
        return { text, details: recordError === undefined ? res : { ...res, record_error: recordError } };
      },
    },
    locale,
  );
}

/** `send_mail`, `forward_mail`, with descriptions in `locale`. */
export function sendingTools(locale: Locale): MailTool[] {
  return [sendMailTool(locale), forwardMailTool(locale)];
}
