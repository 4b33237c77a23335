import { z } from 'zod';
import { API_PREFIX } from './common.js';
import { describeJsonType, describeLimits } from './decode.js';
import { ENDPOINTS } from './endpoints.js';
import { ROUTES } from './routes.js';

function fieldRows(schema: z.ZodType): string[] {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodPipe) s = s.in as z.ZodType;
  if (!(s instanceof z.ZodObject)) {
    if (s instanceof z.ZodDiscriminatedUnion || s instanceof z.ZodUnion) {
      return (s.options as z.ZodType[]).flatMap((o, i) => [`| *variant ${i + 1}* | | | |`, ...fieldRows(o)]);
    }
    return [`| *(${describeJsonType(s)})* | | | |`];
  }
  return Object.entries(s.shape as Record<string, z.ZodType>).map(([name, f]) => {
    const optional = f.safeParse(undefined).success;
    return `| \`${name}\` | ${describeJsonType(f)} | ${optional ? 'no' : 'yes'} | ${describeLimits(f)} |`;
  });
}

function isStrict(schema: z.ZodType): boolean {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodPipe) s = s.in as z.ZodType;
  return s instanceof z.ZodObject && s._zod.def.catchall instanceof z.ZodNever;
}

function table(title: string, schema: z.ZodType): string {
  return [
    `${title}:`,
    '',
    '| field | JSON type | required |',
    '|---|---|---|',
    ...fieldRows(schema),
    '',
  ].join('\n');
}

/** Markdown reference of every endpoint, generated from {@link ENDPOINTS}. */
export function renderEndpointReference(): string {
  const out: string[] = [];
  for (const e of ENDPOINTS) {
    out.push(`### \`${e.method} ${API_PREFIX}${ROUTES[e.route]}\``, '', `${e.summary} Auth: ${e.auth}.`, '');
    if (e.query) out.push(table('Query', e.query));
    if (e.body)
      out.push(
        table(
          isStrict(e.body) ? 'Body (JSON, strict)' : 'Body (JSON, lenient: unknown fields ignored)',
          e.body,
        ),
      );
    if (e.transport === 'multipart') out.push('Body: `multipart/form-data`, one file in field `file`.', '');
    if (e.transport === 'bytes') out.push('Answer: the file bytes with its content type and filename.', '');
    if (e.response) out.push(table('Answer', e.response));
    if (e.events)
      for (const [type, schema] of Object.entries(e.events)) out.push(table(`Event \`${type}\``, schema));
  }
  return out.join('\n').trimEnd();
}
