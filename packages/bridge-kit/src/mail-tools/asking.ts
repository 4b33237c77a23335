/**
 * The question tool (SPEC P-10): `ask_person`, for hosts without a question seam of their own. One
 * call is one question mail (P-9: options by label, free text never an approve/deny pair); the
 * turn's seam (`MailToolContext.ask`) waits for the answer within the turn's budget and answers
 * "declined" on shutdown (P-7).
 */
import {
  ERROR_CODES,
  formatText,
  type Locale,
  QUESTION_MAX_OPTIONS,
  type QuestionAnswer,
} from '@agentmail/shared-policy';
import { z } from 'zod';
import { defineTool, STRING, STRING_LIST, toolError } from './define.js';
import { ASK_PERSON_TOOL, type MailTool } from './types.js';

/**
 * Option labels as a model writes them: an array (of labels, or of `{ label }` objects as
 * `ask_user_question`-style tools take them), or a JSON-array string; one other string is one label.
 */
function normalizeOptions(input: unknown): unknown {
  let items: unknown = input;
  if (typeof items === 'string') {
    const t = items.trim();
    if (t === '') return [];
    try {
      items = t.startsWith('[') ? JSON.parse(t) : [t];
    } catch {
      items = [t];
    }
  }
  if (!Array.isArray(items)) return items; // refused by the schema, naming the field
  const labels = items.map((x) =>
    typeof x === 'object' && x !== null && 'label' in x ? (x as { label: unknown }).label : x,
  );
  return [...new Set(labels.map((l) => (typeof l === 'string' ? l.trim() : l)))].filter((l) => l !== '');
}

/** A label the person can type back as shown: no control characters, no line breaks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const Options = z
  .unknown()
  .transform(normalizeOptions)
  .pipe(
    z
      .array(
        z
          .string()
          .min(1)
          .max(200)
          .refine((l) => !CONTROL.test(l), 'a label may not hold control characters or line breaks'),
      )
      .max(QUESTION_MAX_OPTIONS),
  );

/** A flag as a model writes it: a boolean, or the strings "true"/"false". */
const Flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);

/** The text the model reads for the answer to one question. */
function answerText(a: QuestionAnswer | undefined, locale: Locale): string {
  const labels = a?.selected ?? [];
  const text = a?.text?.trim() ?? '';
  if (labels.length > 0 && text !== '')
    return formatText('tools.ask_person.chose_and_wrote', { labels: labels.join(', '), text }, locale);
  if (labels.length > 0) return formatText('tools.ask_person.chose', { labels: labels.join(', ') }, locale);
  return formatText('tools.ask_person.wrote', { text }, locale);
}

/** `ask_person` (SPEC P-10), with its description in `locale`. */
export function askingTools(locale: Locale): MailTool[] {
  return [
    defineTool(
      {
        name: ASK_PERSON_TOOL,
        shape: {
          // With 50 labels of 200 characters the question mail stays within the Gateway's 20,000.
          question: z.string().trim().min(1, 'the question is empty').max(4_000),
          options: Options.optional(),
          multi_select: Flag.optional(),
        },
        docs: {
          question: { schema: STRING, text: 'tools.param.question' },
          options: { schema: STRING_LIST, text: 'tools.param.options' },
          multi_select: { schema: { type: 'boolean' }, text: 'tools.param.multi_select' },
        },
        // Reaches the person (another party), changes nothing here; asking twice is two questions.
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: true,
        },
        waitsForPerson: true,
        async run(args, ctx, lc) {
          if (!ctx.ask) return toolError(ASK_PERSON_TOOL, 'tools.ask_person.no_turn', lc);
          const options = args.options ?? [];
          const outcome = await ctx.ask(
            [
              {
                question: args.question,
                ...(options.length > 0 ? { options: options.map((label) => ({ label })) } : {}),
                ...(args.multi_select === true && options.length > 0 ? { multiSelect: true } : {}),
              },
            ],
            ctx.signal,
          );
          if (!outcome.ok)
            return { text: outcome.error, isError: true, details: { code: ERROR_CODES.QUESTION_UNANSWERED } };
          const [answer] = outcome.answers.answers;
          return { text: answerText(answer, lc), details: { answer } };
        },
      },
      locale,
    ),
  ];
}
