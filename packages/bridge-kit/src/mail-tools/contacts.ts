/** The address tools (SPEC B-17): address suggestions, the contact list, a session's participants. */
import { Id } from '@agentmail/protocol';
import {
  ERROR_CODES,
  formatText,
  type Locale,
  renderContacts,
  renderParticipants,
  renderSuggestions,
} from '@agentmail/shared-policy';
import { z } from 'zod';
import { callOptions, defineTool, READ_ONLY, STRING, toolError } from './define.js';
import type { MailTool } from './types.js';

/** `suggest_address`. */
function suggestAddressTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'suggest_address',
      shape: { name: z.string().trim().min(1).optional(), path: z.string().trim().min(1).optional() },
      docs: {
        name: { schema: STRING, text: 'tools.param.name' },
        path: { schema: STRING, text: 'tools.param.path' },
      },
      annotations: READ_ONLY,
      async run(args, ctx, lc) {
        if (!args.name && !args.path)
          return {
            text: formatText('tools.error.need_name_or_path', {}, lc),
            isError: true,
            details: { code: ERROR_CODES.TOOL_ARGS_INVALID, field: 'name' },
          };
        const res = await ctx.client.suggest(
          { ...(args.name ? { name: args.name } : {}), ...(args.path ? { path: args.path } : {}) },
          callOptions(ctx),
        );
        return { text: renderSuggestions(res, lc), details: res };
      },
    },
    locale,
  );
}

/** `list_contacts`. */
function listContactsTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'list_contacts',
      shape: {},
      docs: {},
      annotations: READ_ONLY,
      async run(_args, ctx, lc) {
        const res = await ctx.client.contacts(callOptions(ctx));
        return { text: renderContacts(res, lc), details: res };
      },
    },
    locale,
  );
}

/** `session_participants`. */
function sessionParticipantsTool(locale: Locale): MailTool {
  return defineTool(
    {
      name: 'session_participants',
      shape: { session_id: Id.optional() },
      docs: { session_id: { schema: STRING, text: 'tools.param.participants_session_id' } },
      annotations: READ_ONLY,
      async run(args, ctx, lc) {
        const id = args.session_id ?? ctx.mail?.session_id;
        if (!id) return toolError('session_participants', 'tools.error.no_session', lc);
        const res = await ctx.client.participants(id, callOptions(ctx));
        return { text: renderParticipants(res, lc), details: res };
      },
    },
    locale,
  );
}

/** `suggest_address`, `list_contacts`, `session_participants`, with descriptions in `locale`. */
export function contactTools(locale: Locale): MailTool[] {
  return [suggestAddressTool(locale), listContactsTool(locale), sessionParticipantsTool(locale)];
}
