/**
 * How a mail tool is defined: its zod shape is the one source of its validation and of its JSON
 * Schema (a field is required exactly when the schema refuses "absent"), its texts come from the
 * catalogue, and every failure becomes the tool's error result (SPEC B-17). Shared by the tool
 * groups (reading, sending, attachments, contacts, connection).
 */
import { formatDecodeError, Id } from '@agentmail/protocol';
import {
  ERROR_CODES,
  formatText,
  type Locale,
  messageOf,
  normalizeAttachmentIds,
  type TextKey,
} from '@agentmail/shared-policy';
import { isPermanent, isTransient } from '@agentmail/shared-policy/client';
import { z } from 'zod';
import type {
  JsonSchemaProperty,
  MailTool,
  MailToolAnnotations,
  MailToolContext,
  MailToolName,
  MailToolResult,
} from './types.js';

/** A parameter's JSON Schema (without its description) and the catalogue key of its description. */
export interface ParamDoc {
  schema: Omit<JsonSchemaProperty, 'description'>;
  text: TextKey;
}

/** JSON Schema of a string parameter. */
export const STRING = { type: 'string' } as const;
/** JSON Schema of a list-of-strings parameter. */
export const STRING_LIST = { type: 'array', items: { type: 'string' } } as const;

/**
 * Addresses as a model writes them: an array, a JSON-array string, or one string with commas.
 * Not split on spaces: a path may contain one.
 */
function normalizeAddressList(input: unknown): string[] {
  let items: unknown[] = [];
  if (Array.isArray(input)) items = input;
  else if (typeof input === 'string') {
    const t = input.trim();
    if (t.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(t);
        if (Array.isArray(parsed)) items = parsed;
      } catch {
        items = [t];
      }
    } else items = t.split(/[,，;]/);
  }
  return [
    ...new Set(
      items
        .filter((x): x is string => typeof x === 'string')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ];
}

/** Attachment ids as a model writes them (B-16), normalised; at most 20. */
export const AttachmentIds = z.unknown().transform(normalizeAttachmentIds).pipe(z.array(Id).max(20));
/** Addresses as a model writes them ({@link normalizeAddressList}); at most 20. */
export const AddressList = z
  .unknown()
  .transform(normalizeAddressList)
  .pipe(z.array(z.string().min(1)).max(20));
/** One address, trimmed. */
export const Address = z.string().trim().min(1);
/** A file path (the client checks it is absolute and inside the allowed roots). */
export const AbsolutePath = z.string().trim().min(1);

/** Turn a failure into the tool's error result: temporary, permanent or local, from the status. */
export function failure(tool: MailToolName, err: unknown, locale: Locale): MailToolResult {
  const key: TextKey = isTransient(err)
    ? 'tools.error.transient'
    : isPermanent(err)
      ? 'tools.error.permanent'
      : 'tools.error.local';
  const e = err as { code?: unknown; status?: unknown; body?: unknown };
  return {
    text: formatText(key, { tool, message: messageOf(err) }, locale),
    isError: true,
    details: { code: e?.code, status: e?.status, body: e?.body },
  };
}

/** A tool error from a catalogue text (a missing context: no mail, no session, no reconnect). */
export function toolError(
  tool: MailToolName,
  key: TextKey,
  locale: Locale,
  params: Record<string, string> = {},
): MailToolResult {
  return {
    text: formatText(key, { tool, ...params }, locale),
    isError: true,
    details: { code: ERROR_CODES.TOOL_CONTEXT_MISSING },
  };
}

/** Host quirks: arguments as a JSON string, or `null` for an omitted optional field. */
function prepareArgs(args: unknown): unknown {
  let value = args;
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return value; // reported as "expected object" by the schema
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

/** One tool as its group writes it: the zod shape, the parameter docs, the annotations and the run. */
export interface ToolSpec<S extends z.ZodRawShape> {
  name: MailToolName;
  shape: S;
  docs: { [K in keyof S]: ParamDoc };
  annotations: MailToolAnnotations;
  /** The call waits for a person ({@link MailTool.waitsForPerson}). */
  waitsForPerson?: true;
  run(args: z.output<z.ZodObject<S>>, ctx: MailToolContext, locale: Locale): Promise<MailToolResult>;
}

/**
 * A {@link MailTool} from its spec, with texts in `locale`: the JSON Schema from the shape (required
 * exactly when the shape refuses "absent"), arguments checked (`AM_TOOL_ARGS_INVALID` naming the
 * field), and a failed run as the tool's error result ({@link failure}). The tool never throws.
 */
export function defineTool<S extends z.ZodRawShape>(spec: ToolSpec<S>, locale: Locale): MailTool {
  const schema = z.strictObject(spec.shape);
  const properties: Record<string, JsonSchemaProperty> = {};
  const required: string[] = [];
  for (const key of Object.keys(spec.shape)) {
    const doc = spec.docs[key as keyof S];
    properties[key] = { ...doc.schema, description: formatText(doc.text, {}, locale) };
    // Required exactly when the zod schema refuses "absent": one source for both.
    if (!(spec.shape[key] as z.ZodType).safeParse(undefined).success) required.push(key);
  }
  return {
    name: spec.name,
    description: formatText(`tools.${spec.name}.description`, {}, locale),
    parameters: { type: 'object', properties, required, additionalProperties: false },
    annotations: spec.annotations,
    ...(spec.waitsForPerson ? { waitsForPerson: true as const } : {}),
    async run(args, ctx) {
      const lc = ctx.locale ?? locale;
      const input = prepareArgs(args);
      const parsed = schema.safeParse(input);
      if (!parsed.success) {
        const body = formatDecodeError(parsed.error, schema, input);
        return {
          text: formatText('tools.error.args', { tool: spec.name, detail: body.detail }, lc),
          isError: true,
          details: {
            code: ERROR_CODES.TOOL_ARGS_INVALID,
            field: body.field,
            accepted_fields: body.accepted_fields,
          },
        };
      }
      try {
        return await spec.run(parsed.data, ctx, lc);
      } catch (err) {
        return failure(spec.name, err, lc);
      }
    },
  };
}

/** Annotations of a tool that changes nothing. */
export const READ_ONLY: MailToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Annotations of a tool that changes state here (marks mails read, stores or writes a file), nothing lost. */
export const CHANGES_LOCAL: MailToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/** Annotations of a tool that mails someone (each call another mail). */
export const SENDS_MAIL: MailToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/** Record the targets the model mailed itself (B-10); the error text when that failed, else undefined. */
export async function recordSends(
  ctx: MailToolContext,
  targets: readonly string[],
): Promise<string | undefined> {
  if (!ctx.recordExplicitSend) return undefined;
  try {
    for (const t of targets) await ctx.recordExplicitSend(t);
    return undefined;
  } catch (err) {
    return messageOf(err);
  }
}

/** `from_session_id` of a send: the turn's current session, when the context has one. */
export function fromSession(ctx: MailToolContext): { from_session_id?: string } {
  const id = ctx.mail?.session_id;
  return id ? { from_session_id: id } : {};
}

/** The Gateway call options of a run: its abort signal, when it has one. */
export function callOptions(ctx: MailToolContext): { signal?: AbortSignal } {
  return ctx.signal ? { signal: ctx.signal } : {};
}
