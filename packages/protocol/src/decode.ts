import { type ParseError, parse as parseTolerant, printParseErrorCode } from 'jsonc-parser';
import { z } from 'zod';
import type { ErrorBody } from './common.js';

/**
 * Strict decoding with the error messages of SPEC G-10: every message names the field (as a
 * JSON path like `workspaces[0].path`), the expected JSON type and what was received, or the
 * byte offset of a JSON syntax error, and lists the fields the endpoint accepts. Messages
 * speak JSON (`string`, `array of objects`), never TypeScript or zod type names.
 */

/** Result of a decode: never throws. */
export type DecodeResult<T> = { ok: true; value: T } | { ok: false; error: DecodeErrorBody };

/** The 400 body for a request that could not be decoded (G-10). */
export interface DecodeErrorBody extends ErrorBody {
  error: 'invalid_request';
  detail: string;
  /** JSON path of the first field at fault, '' for the body itself. */
  field: string;
  /** Top-level fields the endpoint accepts. */
  accepted_fields: string[];
}

type AnySchema = z.ZodType;

/** True for a schema that takes any value (`z.unknown()`, a transform, a pipe starting with one). */
function takesAnything(schema: AnySchema): boolean {
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny || schema instanceof z.ZodTransform)
    return true;
  return schema instanceof z.ZodPipe && takesAnything(schema.in as AnySchema);
}

function unwrap(schema: AnySchema): AnySchema {
  let s: AnySchema = schema;
  for (let i = 0; i < 20; i++) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as AnySchema;
    else if (s instanceof z.ZodDefault || s instanceof z.ZodPrefault) s = s.unwrap() as AnySchema;
    // A normalising pipe (any value in, then checked) expects what its output schema takes.
    else if (s instanceof z.ZodPipe) s = (takesAnything(s.in as AnySchema) ? s.out : s.in) as AnySchema;
    else break;
  }
  return s;
}

function acceptsNull(schema: AnySchema): boolean {
  let s: AnySchema = schema;
  for (let i = 0; i < 20; i++) {
    if (s instanceof z.ZodNullable) return true;
    if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodPrefault)
      s = s.unwrap() as AnySchema;
    else return false;
  }
  return false;
}

function unwrapNullable(schema: AnySchema): AnySchema {
  let s: AnySchema = schema;
  while (
    s instanceof z.ZodNullable ||
    s instanceof z.ZodOptional ||
    s instanceof z.ZodDefault ||
    s instanceof z.ZodPrefault
  ) {
    s = s.unwrap() as AnySchema;
  }
  return s;
}

/**
 * Limits a schema puts on a value, in words: `≤500 characters`, `1–100 items`, `1–1000`.
 * Empty when there are none.
 */
export function describeLimits(schema: AnySchema): string {
  const s = unwrap(schema);
  const range = (min: number | null | undefined, max: number | null | undefined, unit: string) => {
    const lo = min ?? null;
    const hi = max ?? null;
    if (lo !== null && hi !== null) return `${lo}–${hi}${unit}`;
    if (hi !== null) return `≤${hi}${unit}`;
    if (lo !== null && lo > 0) return `≥${lo}${unit}`;
    return '';
  };
  if (s instanceof z.ZodString) return range(s.minLength, s.maxLength, ' characters');
  if (s instanceof z.ZodNumber) {
    const safe = (v: number | null) => (v !== null && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : null);
    return range(safe(s.minValue), safe(s.maxValue), '');
  }
  if (s instanceof z.ZodArray) {
    let min: number | null = null;
    let max: number | null = null;
    for (const c of (s._zod.def.checks ?? []) as Array<{
      _zod: { def: { check: string; minimum?: number; maximum?: number } };
    }>) {
      if (c._zod.def.check === 'min_length') min = c._zod.def.minimum ?? null;
      if (c._zod.def.check === 'max_length') max = c._zod.def.maximum ?? null;
    }
    return range(min, max, ' items');
  }
  return '';
}

const PLURAL: Record<string, string> = {
  object: 'objects',
  string: 'strings',
  number: 'numbers',
  integer: 'integers',
  boolean: 'booleans',
  array: 'arrays',
};

/** The JSON type a schema expects, in words: `string`, `array of objects`, `one of "a", "b"`. */
export function describeJsonType(schema: AnySchema): string {
  if (acceptsNull(schema)) return `${describeJsonType(unwrapNullable(schema))} or null`;
  const s = unwrap(schema);
  if (s instanceof z.ZodObject) return 'object';
  if (s instanceof z.ZodArray) {
    const inner = describeJsonType(s.element as AnySchema);
    return `array of ${PLURAL[inner] ?? inner}`;
  }
  if (s instanceof z.ZodString) return 'string';
  if (s instanceof z.ZodNumber) return s.format === 'safeint' || s.format === 'int32' ? 'integer' : 'number';
  if (s instanceof z.ZodBoolean) return 'boolean';
  if (s instanceof z.ZodEnum) return `one of ${s.options.map((o) => JSON.stringify(o)).join(', ')}`;
  if (s instanceof z.ZodLiteral) return [...s.values].map((v) => JSON.stringify(v)).join(' or ');
  if (s instanceof z.ZodUnion) return (s.options as AnySchema[]).map(describeJsonType).join(' or ');
  if (s instanceof z.ZodRecord) return 'object';
  return 'value';
}

/** The JSON type of a received value, in words. */
export function jsonTypeOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function schemaAt(schema: AnySchema, path: readonly PropertyKey[]): AnySchema | undefined {
  let s: AnySchema | undefined = schema;
  for (const key of path) {
    if (!s) return undefined;
    const u = unwrap(s);
    if (u instanceof z.ZodObject) s = (u.shape as Record<string, AnySchema>)[String(key)];
    else if (u instanceof z.ZodArray) s = u.element as AnySchema;
    else if (u instanceof z.ZodRecord) s = u.valueType as AnySchema;
    else if (u instanceof z.ZodUnion) {
      const opts = u.options as AnySchema[];
      s = opts.map((o) => schemaAt(o, [key])).find((x) => x !== undefined);
    } else return undefined;
  }
  return s;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** Format a JSON path: `workspaces[0].path`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** Top-level field names an object schema accepts (empty for non-objects). */
export function acceptedFields(schema: AnySchema): string[] {
  const s = unwrap(schema);
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

function describeIssue(issue: z.core.$ZodIssue, schema: AnySchema, input: unknown): string {
  const field = formatPath(issue.path);
  const where = field === '' ? 'body' : `field "${field}"`;
  switch (issue.code) {
    case 'invalid_type': {
      const target = schemaAt(schema, issue.path);
      const expected = target ? describeJsonType(target) : jsonTypeName(issue.expected);
      const got = valueAt(input, issue.path);
      if (got === undefined) return `${where}: required, expected ${expected}`;
      return `${where}: expected ${expected}, got ${jsonTypeOf(got)}`;
    }
    case 'unrecognized_keys': {
      const names = issue.keys.map((k) => `"${formatPath([...issue.path, k])}"`).join(', ');
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${names}`;
    }
    case 'invalid_value': {
      const got = valueAt(input, issue.path);
      const expected = issue.values.map((v) => JSON.stringify(v)).join(', ');
      return `${where}: expected one of ${expected}, got ${JSON.stringify(got) ?? 'nothing'}`;
    }
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const word = issue.code === 'too_small' ? 'at least' : 'at most';
      const unit =
        issue.origin === 'string'
          ? ' characters'
          : issue.origin === 'array' || issue.origin === 'set'
            ? ' items'
            : '';
      return `${where}: must be ${word} ${String(bound)}${unit}`;
    }
    case 'invalid_format':
      return `${where}: must be ${issue.format === 'regex' ? `of the form ${issue.message.replace(/^Invalid string: must match pattern .*$/, 'the documented pattern')}` : `a valid ${issue.format}`}`;
    case 'invalid_union': {
      const target = schemaAt(schema, issue.path);
      const got = valueAt(input, issue.path);
      return `${where}: expected ${target ? describeJsonType(target) : 'a different value'}, got ${jsonTypeOf(got)}`;
    }
    default:
      return `${where}: ${issue.message}`;
  }
}

function jsonTypeName(zodName: string): string {
  if (zodName === 'int') return 'integer';
  if (zodName === 'array' || zodName === 'object' || zodName === 'string' || zodName === 'boolean')
    return zodName;
  if (zodName === 'number') return 'number';
  return 'value';
}

/** JSON path of the field an issue is about; for unknown fields, the first unknown field. */
function issueField(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
    return formatPath([...issue.path, issue.keys[0]]);
  }
  return formatPath(issue.path);
}

/**
 * Turn a zod error into the G-10 400 body.
 *
 * @param error - the error of `schema.safeParse(input)`
 * @param schema - the schema that failed, used to describe expected JSON types and list fields
 * @param input - the decoded JSON that failed, used to report what was received
 * @example formatDecodeError(r.error, RegisterRequest, body).detail
 *   // 'field "name": expected string, got integer. Accepted fields: name, platform, version.'
 */
export function formatDecodeError(error: z.ZodError, schema: AnySchema, input: unknown): DecodeErrorBody {
  const issues = error.issues.slice(0, 5);
  const parts = issues.map((i) => describeIssue(i, schema, input));
  const accepted = acceptedFields(schema);
  const more =
    error.issues.length > issues.length ? ` (and ${error.issues.length - issues.length} more)` : '';
  const acceptedText = accepted.length ? ` Accepted fields: ${accepted.join(', ')}.` : '';
  return {
    error: 'invalid_request',
    detail: `${parts.join('; ')}${more}.${acceptedText}`,
    field: issues[0] ? issueField(issues[0]) : '',
    accepted_fields: accepted,
  };
}

function emptyBodyError(schema: AnySchema): DecodeErrorBody {
  const accepted = acceptedFields(schema);
  return {
    error: 'invalid_request',
    detail: `empty body: expected a JSON ${describeJsonType(schema)}.${accepted.length ? ` Accepted fields: ${accepted.join(', ')}.` : ''}`,
    field: '',
    accepted_fields: accepted,
  };
}

/**
 * Validate already-parsed JSON against a schema. Never throws.
 * `undefined` input (no body) gives the "empty body" error.
 */
export function decode<S extends AnySchema>(schema: S, input: unknown): DecodeResult<z.output<S>> {
  if (input === undefined) return { ok: false, error: emptyBodyError(schema) };
  const r = schema.safeParse(input);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, error: formatDecodeError(r.error, schema, input) };
}

/**
 * Parse a raw JSON body and validate it. Syntax errors and truncated JSON give the byte offset
 * (UTF-8) of the fault; an empty body says so. Never throws.
 */
export function decodeJson<S extends AnySchema>(
  schema: S,
  raw: string | Uint8Array,
): DecodeResult<z.output<S>> {
  const text = typeof raw === 'string' ? raw : new TextDecoder().decode(raw);
  if (text.trim() === '') return { ok: false, error: emptyBodyError(schema) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: jsonSyntaxError(schema, text, err) };
  }
  return decode(schema, value);
}

/**
 * Where a JSON text first goes wrong, in UTF-16 code units, and whether it simply ends early.
 * Node's JSON.parse does not always say where (`Unexpected token 'x', "{"to": x}" is not valid
 * JSON`), so the offset comes from jsonc-parser's scanner in strict JSON mode; Node's
 * `position N` is the fallback.
 */
function locateSyntaxError(text: string, err: unknown): { charOffset: number; truncated: boolean } {
  const errors: ParseError[] = [];
  try {
    parseTolerant(text, errors, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false,
    });
  } catch {
    // jsonc-parser recurses per nesting level: thousands of `[` overflow its stack. Node's own
    // message is the fallback below.
    errors.length = 0;
  }
  const first = errors[0];
  if (first) {
    const truncated =
      first.offset >= text.length || printParseErrorCode(first.error).startsWith('UnexpectedEndOf');
    return { charOffset: truncated ? text.length : first.offset, truncated };
  }
  const message = err instanceof Error ? err.message : String(err);
  const m = /position (\d+)/.exec(message);
  if (m) return { charOffset: Number(m[1]), truncated: Number(m[1]) >= text.length };
  return { charOffset: text.length, truncated: /end of (JSON )?(data|input)/i.test(message) };
}

/** The G-10 body for a JSON syntax error in `text` (offset in UTF-8 bytes). */
export function jsonSyntaxError(schema: AnySchema, text: string, err: unknown): DecodeErrorBody {
  const { charOffset, truncated } = locateSyntaxError(text, err);
  const byteOffset = Buffer.byteLength(text.slice(0, charOffset), 'utf8');
  const accepted = acceptedFields(schema);
  return {
    error: 'invalid_request',
    detail: `${truncated ? 'truncated JSON' : 'JSON syntax error'} at byte offset ${byteOffset}: expected a JSON ${describeJsonType(schema)}.${accepted.length ? ` Accepted fields: ${accepted.join(', ')}.` : ''}`,
    field: '',
    accepted_fields: accepted,
  };
}

function isLoose(schema: z.ZodObject): boolean {
  const catchall = schema._zod.def.catchall;
  return catchall !== undefined && !(catchall instanceof z.ZodNever);
}

/**
 * JSON paths (`mails[0].snippet_html`) of the object fields in `value` that `schema` does not
 * declare, for checking answers strictly in tests: answer schemas strip unknown fields (so an
 * older client survives a newer Gateway), which would otherwise hide a field the Gateway sends
 * but the contract does not describe. Loose objects (`z.looseObject`) and records accept any
 * field. Walks unions through the first option that accepts the value. Never throws.
 *
 * @example undeclaredFields(MarkReadResponse, { updated: 1, extra: true }) // ['extra']
 */
export function undeclaredFields(schema: AnySchema, value: unknown): string[] {
  const out: string[] = [];
  const walk = (s: AnySchema, v: unknown, path: PropertyKey[]): void => {
    const u = unwrap(s);
    if (v === null || typeof v !== 'object') return;
    if (u instanceof z.ZodArray) {
      if (Array.isArray(v))
        for (const [i, item] of v.entries()) walk(u.element as AnySchema, item, [...path, i]);
      return;
    }
    if (u instanceof z.ZodRecord) {
      for (const [k, item] of Object.entries(v)) walk(u.valueType as AnySchema, item, [...path, k]);
      return;
    }
    if (u instanceof z.ZodUnion) {
      const option = (u.options as AnySchema[]).find((o) => o.safeParse(v).success);
      if (option) walk(option, v, path);
      return;
    }
    if (!(u instanceof z.ZodObject) || Array.isArray(v)) return;
    const shape = u.shape as Record<string, AnySchema>;
    for (const [k, item] of Object.entries(v)) {
      const field = shape[k];
      if (field) walk(field, item, [...path, k]);
      else if (!isLoose(u)) out.push(formatPath([...path, k]));
    }
  };
  walk(schema, value, []);
  return out;
}
