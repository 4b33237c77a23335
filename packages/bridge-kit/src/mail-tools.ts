/**
 * The mail tools (SPEC B-17): one table, built from the tool groups, the same names, parameters
 * and annotations on every platform; bridges adapt each tool to their host's tool API.
 */
import { DEFAULT_LOCALE, ERROR_CODES, formatText, type Locale } from '@agentmail/shared-policy';
import { askingTools } from './mail-tools/asking.js';
import { attachmentTools } from './mail-tools/attachments.js';
import { connectionTools } from './mail-tools/connection.js';
import { contactTools } from './mail-tools/contacts.js';
import { readingTools } from './mail-tools/reading.js';
import { sendingTools } from './mail-tools/sending.js';
import {
  ASK_PERSON_TOOL,
  MAIL_TOOL_NAMES,
  type MailTool,
  type MailToolContext,
  type MailToolResult,
} from './mail-tools/types.js';

export { type ProbeResult, probeGateway } from './mail-tools/connection.js';
export {
  ASK_PERSON_TOOL,
  type JsonSchemaObject,
  type JsonSchemaProperty,
  MAIL_TOOL_NAMES,
  type MailTool,
  type MailToolAnnotations,
  type MailToolContext,
  type MailToolMailContext,
  type MailToolName,
  type MailToolResult,
} from './mail-tools/types.js';

/** Options of {@link mailTools}. */
export interface MailToolsOptions {
  /**
   * Offer {@link ASK_PERSON_TOOL} (SPEC P-10). A host with a question seam of its own keeps that
   * one instead (DSH: `false`). @default true
   */
  askPerson?: boolean;
}

/**
 * The mail tools with descriptions in `locale` (see SPEC B-17): same names, parameters and
 * annotations on every platform and in every locale; only the words change. The 11 of
 * {@link MAIL_TOOL_NAMES}, then `ask_person` unless `options.askPerson` is false (P-10).
 * @example const tools = mailTools('zh-CN'); await tools[0].run({ status: 'unread' }, { client });
 */
export function mailTools(
  locale: Locale = DEFAULT_LOCALE,
  options: MailToolsOptions = {},
): readonly MailTool[] {
  // In MAIL_TOOL_NAMES order (a test pins it).
  return [
    ...readingTools(locale),
    ...sendingTools(locale),
    ...attachmentTools(locale),
    ...contactTools(locale),
    ...connectionTools(locale),
    ...(options.askPerson === false ? [] : askingTools(locale)),
  ];
}

/**
 * Run a mail tool by name (for hosts that dispatch by name).
 * Never throws: an unknown name is an error result listing the tool names.
 */
export async function runMailTool(
  name: string,
  args: unknown,
  ctx: MailToolContext,
  locale: Locale = DEFAULT_LOCALE,
): Promise<MailToolResult> {
  const tool = mailTools(locale).find((t) => t.name === name);
  if (!tool)
    return {
      text: formatText(
        'tools.error.local',
        {
          tool: name,
          message: `unknown tool; the mail tools are ${[...MAIL_TOOL_NAMES, ASK_PERSON_TOOL].join(', ')}`,
        },
        ctx.locale ?? locale,
      ),
      isError: true,
      details: { code: ERROR_CODES.TOOL_ARGS_INVALID },
    };
  return tool.run(args, ctx);
}
