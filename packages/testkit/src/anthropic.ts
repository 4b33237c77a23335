/**
 * The Anthropic Messages side of the scripted model (`POST /v1/messages`, as Claude Code calls
 * it): the request is read into the same {@link ChatRequestBody} view the OpenAI side records (so
 * one scenario matches both wires), and the chosen {@link ScenarioReply} is written in the
 * Messages wire by aimock's own Anthropic handler (`handleMessages`, given one fixture that
 * holds the reply). Only what aimock cannot express is written here: a stream that stalls after
 * `message_start` (hang) and one that ends without `message_delta`/`message_stop`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Fixture, handleMessages, Journal, Logger, writeErrorResponse } from '@copilotkit/aimock';
import { z } from 'zod';
import { defaultError } from './reply-writer.js';
import type { ChatRequestBody, ChatRequestMessage } from './request.js';
import type { ScenarioReply } from './scenario.js';

/** The request paths of the Messages API (Claude Code adds `?beta=true`, which is not part of the path). */
export const ANTHROPIC_MESSAGES_PATHS: readonly string[] = ['/v1/messages', '/messages'];

const block = z.looseObject({ type: z.string() });

/**
 * zod schema of a `POST /v1/messages` body: `messages` is required, every other key is kept
 * (hosts send `system` as blocks, `thinking`, `metadata`, `context_management`, …).
 */
export const anthropicRequestBodySchema = z.looseObject({
  model: z.string().optional(),
  system: z.union([z.string(), z.array(block)]).optional(),
  messages: z.array(
    z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(block)]).optional() }),
  ),
  stream: z.boolean().nullish(),
  tools: z.array(z.looseObject({ name: z.string().optional() })).nullish(),
});

/** A Messages request body as sent by the host (unknown keys kept). */
export type AnthropicRequestBody = z.infer<typeof anthropicRequestBodySchema>;

type Block = z.infer<typeof block>;

function textOf(content: string | Block[] | undefined): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

/**
 * The chat view of a Messages request, so scenarios match on the same fields for both wires:
 * `system` and any `role: "system"` entries → one leading `system` message; a user message's `tool_result` blocks → `tool` messages (its
 * other text — Claude Code's `<system-reminder>` blocks — is appended to the last of them, so the
 * last `user` message stays the prompt, as on the OpenAI wire); `tool_use` blocks → `tool_calls`.
 */
export function chatViewOfMessages(body: AnthropicRequestBody): ChatRequestBody {
  const messages: ChatRequestMessage[] = [];
  // Claude Code also puts `role: "system"` entries among the messages (after the prompt): they
  // join the one leading system message, so the last message is still the prompt.
  const system = [
    textOf(body.system),
    ...body.messages.filter((m) => m.role === 'system').map((m) => textOf(m.content)),
  ]
    .filter((t) => t !== '')
    .join('\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const m of body.messages) {
    if (m.role === 'system') continue;
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    if (m.role === 'assistant') {
      const calls = blocks.filter((b) => b.type === 'tool_use');
      messages.push({
        role: 'assistant',
        content: textOf(blocks) || null,
        ...(calls.length === 0
          ? {}
          : {
              tool_calls: calls.map((c) => ({
                id: String(c.id ?? ''),
                type: 'function',
                function: { name: String(c.name ?? ''), arguments: JSON.stringify(c.input ?? {}) },
              })),
            }),
      });
      continue;
    }
    const results = blocks.filter((b) => b.type === 'tool_result');
    if (results.length === 0) {
      messages.push({ role: m.role, content: textOf(blocks) });
      continue;
    }
    const extra = textOf(blocks);
    results.forEach((r, i) => {
      const text = textOf(r.content as string | Block[] | undefined);
      messages.push({
        role: 'tool',
        tool_call_id: String(r.tool_use_id ?? ''),
        content: i === results.length - 1 && extra !== '' ? `${text}\n${extra}` : text,
      });
    });
  }
  return {
    ...(body.model === undefined ? {} : { model: body.model }),
    messages,
    stream: body.stream ?? null,
    tools: (body.tools ?? []).map((t) => ({ type: 'function', function: { name: String(t.name ?? '') } })),
  };
}

/** An Anthropic error body `{ type: "error", error: { type, message } }`. */
export function anthropicErrorBody(message: string, type: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

// Anthropic's error types where they differ from OpenAI's.
const ANTHROPIC_ERROR_TYPES: Readonly<Record<string, string>> = {
  server_error: 'api_error',
  insufficient_quota: 'billing_error',
};

/** The aimock fixture response of a text, tool-call or error reply. */
function fixtureResponse(reply: ScenarioReply, seq: number): Fixture['response'] | undefined {
  switch (reply.type) {
    case 'text':
      return {
        content: reply.text,
        ...(reply.finishReason === undefined ? {} : { finishReason: reply.finishReason }),
      };
    case 'tool_calls': {
      const toolCalls = reply.calls.map((call, index) => ({
        id: call.id ?? `toolu_${seq}_${index}`,
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
      }));
      const finish = reply.finishReason === undefined ? {} : { finishReason: reply.finishReason };
      return reply.text === undefined
        ? { toolCalls, ...finish }
        : { content: reply.text, toolCalls, ...finish };
    }
    case 'error': {
      const defaults = defaultError(reply.status);
      const type = reply.errorType ?? defaults.type;
      return {
        status: reply.status,
        error: { message: reply.message ?? defaults.message, type: ANTHROPIC_ERROR_TYPES[type] ?? type },
      };
    }
    default:
      return undefined;
  }
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
};

function sse(res: ServerResponse, event: Record<string, unknown> & { type: string }): void {
  res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** `message_start` and a text block's start and deltas: the head of a streamed answer. */
function writeTextHead(res: ServerResponse, text: string, model: string, seq: number, chunk: number): void {
  res.writeHead(200, SSE_HEADERS);
  sse(res, {
    type: 'message_start',
    message: {
      id: `msg_scripted_${seq}`,
      type: 'message',
      role: 'assistant',
      content: [],
      model,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 0 },
    },
  });
  if (text === '') return;
  sse(res, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  for (let i = 0; i < text.length; i += chunk)
    sse(res, {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: text.slice(i, i + chunk) },
    });
}

/** What {@link writeAnthropicReply} needs about the request. */
export interface AnthropicReplyContext {
  seq: number;
  /** The request body as received (aimock's handler parses it again). */
  raw: string;
  body: AnthropicRequestBody;
  chunkSizeChars: number;
}

const quiet = new Logger('silent');

/**
 * Writes `reply` in the Messages wire (streamed when the request asked for it). `onStatus` gets
 * the HTTP status once decided (never for a hang that sends nothing). A hang leaves `res` open:
 * the client or the server's close ends it.
 */
export async function writeAnthropicReply(
  reply: ScenarioReply,
  context: AnthropicReplyContext,
  req: IncomingMessage,
  res: ServerResponse,
  onStatus: (status: number) => void,
): Promise<void> {
  const model = context.body.model ?? 'scripted-model';
  const stream = context.body.stream === true;
  if (reply.type === 'hang') {
    if (stream) {
      onStatus(200);
      writeTextHead(res, reply.text ?? '', model, context.seq, context.chunkSizeChars);
    }
    return;
  }
  if (reply.type === 'no_finish_reason') {
    onStatus(200);
    if (!stream) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          id: `msg_scripted_${context.seq}`,
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: reply.text }],
          model,
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
      return;
    }
    writeTextHead(res, reply.text, model, context.seq, context.chunkSizeChars);
    sse(res, { type: 'content_block_stop', index: 0 });
    res.end();
    return;
  }
  const response = fixtureResponse(reply, context.seq);
  if (response === undefined) {
    onStatus(500);
    writeErrorResponse(res, 500, anthropicErrorBody('unknown scripted reply', 'api_error'));
    return;
  }
  const status = reply.type === 'error' ? reply.status : 200;
  onStatus(status);
  if (reply.type === 'error')
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  // aimock's handler writes the whole Messages wire (SSE events or the JSON message, error
  // envelopes) from one fixture that matches everything.
  const fixture: Fixture = { match: {}, response, chunkSize: context.chunkSizeChars };
  await handleMessages(
    req,
    res,
    context.raw,
    [fixture],
    new Journal(),
    { latency: 0, chunkSize: context.chunkSizeChars, replaySpeed: 1, logger: quiet },
    () => undefined,
  );
}
