import { z } from 'zod';
import { describeJsonType, describeLimits } from './decode.js';
import { ENDPOINT_IDS, endpoint } from './endpoints.js';

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
    '| field | JSON type | required | limits |',
    '|---|---|---|---|',
    ...fieldRows(schema),
    '',
  ].join('\n');
}

const AUTH_WORDS = {
  agent: 'agent key',
  person: 'user token or web session',
  admin: 'admin user token or web session',
  none: 'none',
} as const;

/**
 * Markdown reference of every endpoint, generated from {@link ENDPOINTS} in table order: method,
 * path, id (the key clients call it by), auth, and the fields of its path parameters, query, body,
 * answer and events.
 */
export function renderEndpointReference(): string {
  const out: string[] = [];
  for (const id of ENDPOINT_IDS) {
    const e = endpoint(id);
    out.push(
      `### \`${e.method} ${e.path}\``,
      '',
      `${e.summary} Id: \`${id}\`. Auth: ${AUTH_WORDS[e.auth]}.`,
      '',
    );
    if (e.params) out.push(table('Path parameters', e.params));
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
    if (e.transport === 'json' || e.transport === 'multipart') out.push(table('Answer', e.response));
    if (e.transport === 'sse') {
      out.push('Answer: a `text/event-stream`; each frame has `id`, `event` and JSON `data`:', '');
      for (const [type, schema] of Object.entries(e.events)) out.push(table(`Event \`${type}\``, schema));
    }
  }
  return out.join('\n').trimEnd();
}
