import { formatDecodeError, Id, type RegisterRequest } from '@agentmail/protocol';
import {
  DEFAULT_LOCALE,
  ERROR_CODES,
  formatText,
  type Locale,
  MAIL_PAGE_CHARS,
  MAIL_PAGE_MAX_CHARS,
  messageOf,
  normalizeAttachmentIds,
  renderContacts,
  renderInbox,
  renderMail,
  renderParticipants,
  renderSuggestions,
  renderThread,
  sessionWords,
  type TextKey,
} from '@agentmail/shared-policy';
import { type GatewayClient, gatewayUrl, isPermanent, isTransient } from '@agentmail/shared-policy/client';
import { z } from 'zod';

/** The mail tools, in this order, on every platform (see SPEC B-17). */
export const MAIL_TOOL_NAMES = [
  'read_inbox',
  'read_mail',
  'read_thread',
  'send_mail',
  'forward_mail',
  'upload_attachment',
  'download_attachment',
  'suggest_address',
  'list_contacts',
  'session_participants',
  'connect_to_server',
] as const;

/** Name of a mail tool. */
export type MailToolName = (typeof MAIL_TOOL_NAMES)[number];

/** MCP-style behaviour hints (ZCode's plan mode needs them, see SPEC §7). */
export interface MailToolAnnotations {
  /** The tool changes nothing. */
  readOnlyHint: boolean;
  /** The tool may destroy or overwrite data (only meaningful when not read-only). */
  destructiveHint: boolean;
  /** Calling twice with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** The tool reaches parties outside this agent and its Gateway account (people, other agents, servers). */
  openWorldHint: boolean;
}

/** JSON Schema of one tool parameter (the subset the tools use). */
export interface JsonSchemaProperty {
  type: 'string' | 'integer' | 'array';
  description: string;
  enum?: readonly string[];
  items?: { type: 'string' };
  minimum?: number;
  maximum?: number;
}

/** JSON Schema of a tool's parameters: an object, no extra properties. */
export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, JsonSchemaProperty>;
  required: string[];
  additionalProperties: false;
}

/** What a tool run returns: the text the model reads, an error flag, and structured details. */
export interface MailToolResult {
  text: string;
  /** true when the call failed; `text` says why and what to do. */
  isError?: boolean;
  /** The Gateway answer (or error code/status/body) for hosts that show structured output. */
  details?: unknown;
}

/** The mail or session the current turn works on (from the `new_mail` event, G-20). */
export interface MailToolMailContext {
  mail_id?: string;
  /**
   * The recipient's session of the current turn; `send_mail` and `forward_mail` write from it
   * (`from_session_id`), so the mail spends that session's budget and joins its thread.
   */
  session_id?: string;
  reply_address?: string;
  self_address?: string;
}

/** What a bridge gives each tool run. */
export interface MailToolContext {
  /** The live Gateway client. */
  client: GatewayClient;
  /** The current mail/session, for defaults (read_thread, session_participants). */
  mail?: MailToolMailContext;
  /**
   * Records an explicit send target (to and each cc) so the auto relay does not mail the same
   * party twice (see SPEC B-10). A failure is reported in `details`, the send still counts.
   */
  recordExplicitSend?: (target: string) => void | Promise<void>;
  /**
   * Switches the live client and the SSE stream to a Gateway that already answered (see
   * SPEC B-18). Called only after {@link probeGateway} succeeded; if it throws, the bridge must
   * have kept the old configuration.
   */
  reconnect?: (config: { url: string; key: string; client: GatewayClient }) => void | Promise<void>;
  /** Name and platform to register with when probing a new Gateway. Without it a heartbeat probes. */
  identity?: RegisterRequest;
  /** Locale of the rendered text. @default the locale the tools were built with */
  locale?: Locale;
  /** Aborts the Gateway calls of the run. */
  signal?: AbortSignal;
}

/** One platform-neutral mail tool (see SPEC B-17). Bridges adapt it to their host's tool API. */
export interface MailTool {
  name: MailToolName;
  /** From the text catalogue (`tools.<name>.description`). */
  description: string;
  parameters: JsonSchemaObject;
  annotations: MailToolAnnotations;
  /**
   * Validate `args` and run the tool. Never throws: invalid arguments (`AM_TOOL_ARGS_INVALID`)
   * and failures come back as `{ isError: true, text }` naming the field or cause and the fix.
   */
  run(args: unknown, ctx: MailToolContext): Promise<MailToolResult>;
}

// ---- parameters ------------------------------------------------------------------------------

interface ParamDoc {
  schema: Omit<JsonSchemaProperty, 'description'>;
  text: TextKey;
}

const STRING = { type: 'string' } as const;
const STRING_LIST = { type: 'array', items: { type: 'string' } } as const;

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

const AttachmentIds = z.unknown().transform(normalizeAttachmentIds).pipe(z.array(Id).max(20));
const AddressList = z
  .unknown()
  .transform(normalizeAddressList)
  .pipe(z.array(z.string().min(1)).max(20));
const Address = z.string().trim().min(1);
const AbsolutePath = z.string().trim().min(1);

// ---- results ---------------------------------------------------------------------------------

/** Turn a failure into the tool's error result: temporary, permanent or local, from the status. */
function failure(tool: MailToolName, err: unknown, locale: Locale): MailToolResult {
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

function toolError(
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

// ---- probe (B-18) ----------------------------------------------------------------------------

/** Result of {@link probeGateway}: never throws. */
export type ProbeResult = { ok: true; client: GatewayClient; key: string } | { ok: false; error: unknown };

/**
 * Try a Gateway URL/key before switching to it (see SPEC B-18): builds a fresh client (same
 * timeouts, roots and dispatcher as `current`) and registers (when `identity` is given,
 * idempotent) or sends an empty heartbeat (updates only `last_seen`, clears nothing: G-25).
 * The current client is not touched. Never throws.
 *
 * @param config.key - omitted → the current key
 */
export async function probeGateway(
  current: GatewayClient,
  config: { url: string; key?: string | undefined },
  identity?: RegisterRequest,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  try {
    const key = config.key ?? current.key;
    const client = current.withConfig({ baseUrl: config.url, key });
    const options = signal ? { signal } : {};
    if (identity) await client.register(identity, options);
    else await client.heartbeat({}, options);
    return { ok: true, client, key };
  } catch (error) {
    return { ok: false, error };
  }
}

// ---- tool definitions ------------------------------------------------------------------------

interface ToolSpec<S extends z.ZodRawShape> {
  name: MailToolName;
  shape: S;
  docs: { [K in keyof S]: ParamDoc };
  annotations: MailToolAnnotations;
  run(args: z.output<z.ZodObject<S>>, ctx: MailToolContext, locale: Locale): Promise<MailToolResult>;
}

function build<S extends z.ZodRawShape>(spec: ToolSpec<S>, locale: Locale): MailTool {
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

const READ_ONLY: MailToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

async function recordSends(ctx: MailToolContext, targets: readonly string[]): Promise<string | undefined> {
  if (!ctx.recordExplicitSend) return undefined;
  try {
    for (const t of targets) await ctx.recordExplicitSend(t);
    return undefined;
  } catch (err) {
    return messageOf(err);
  }
}

/** `from_session_id` of a send: the turn's current session, when the context has one. */
function fromSession(ctx: MailToolContext): { from_session_id?: string } {
  const id = ctx.mail?.session_id;
  return id ? { from_session_id: id } : {};
}

function callOptions(ctx: MailToolContext): { signal?: AbortSignal } {
  return ctx.signal ? { signal: ctx.signal } : {};
}

/**
 * The mail tools with descriptions in `locale` (see SPEC B-17): same names, parameters and
 * annotations on every platform and in every locale; only the words change.
 * @example const tools = mailTools('zh-CN'); await tools[0].run({ status: 'unread' }, { client });
 */
export function mailTools(locale: Locale = DEFAULT_LOCALE): readonly MailTool[] {
  return [
    build(
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
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
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
    ),
    build(
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
    ),
    build(
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
    ),
    build(
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
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: true,
        },
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
    ),
    build(
      {
        name: 'forward_mail',
        shape: { mail_id: Id, to: Address, comment: z.string().max(100_000).optional() },
        docs: {
          mail_id: { schema: STRING, text: 'tools.param.mail_id' },
          to: { schema: STRING, text: 'tools.param.to' },
          comment: { schema: STRING, text: 'tools.param.comment' },
        },
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: true,
        },
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
    ),
    build(
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
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
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
    ),
    build(
      {
        name: 'download_attachment',
        shape: { attachment_id: Id, path: AbsolutePath },
        docs: {
          attachment_id: { schema: STRING, text: 'tools.param.attachment_id' },
          path: { schema: STRING, text: 'tools.param.download_path' },
        },
        // Writes a new file; never overwrites one (the client refuses existing files).
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
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
    ),
    build(
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
    ),
    build(
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
    ),
    build(
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
    ),
    build(
      {
        name: 'connect_to_server',
        shape: { url: z.string().trim().min(1), key: z.string().trim().min(1).optional() },
        docs: {
          url: { schema: STRING, text: 'tools.param.url' },
          key: { schema: STRING, text: 'tools.param.key' },
        },
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: true,
        },
        async run(args, ctx, lc) {
          const current = ctx.client.baseUrl;
          if (!ctx.reconnect) return toolError('connect_to_server', 'tools.connect.unsupported', lc);
          gatewayUrl(args.url, '/'); // AM_GATEWAY_URL_INVALID → a local error naming the URL
          const key = args.key ?? ctx.client.key;
          if (args.url === current && key === ctx.client.key)
            return { text: formatText('tools.connect.same', { url: args.url }, lc) };
          // B-18: try the new Gateway first; the live client is untouched until it answered.
          const probe = await probeGateway(ctx.client, { url: args.url, key }, ctx.identity, ctx.signal);
          if (!probe.ok)
            return {
              text: formatText(
                'tools.connect.failed',
                { url: args.url, message: messageOf(probe.error), current },
                lc,
              ),
              isError: true,
              details: failure('connect_to_server', probe.error, lc).details,
            };
          try {
            await ctx.reconnect({ url: args.url, key: probe.key, client: probe.client });
          } catch (err) {
            return {
              text: formatText(
                'tools.connect.switch_failed',
                { url: args.url, message: messageOf(err), current },
                lc,
              ),
              isError: true,
            };
          }
          return {
            text: formatText('tools.connect.done', { url: args.url }, lc),
            details: { url: args.url },
          };
        },
      },
      locale,
    ),
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
        { tool: name, message: `unknown tool; the mail tools are ${MAIL_TOOL_NAMES.join(', ')}` },
        ctx.locale ?? locale,
      ),
      isError: true,
      details: { code: ERROR_CODES.TOOL_ARGS_INVALID },
    };
  return tool.run(args, ctx);
}
