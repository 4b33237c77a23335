import type { ServerResponse } from 'node:http';
import {
  buildContentWithToolCallsChunks,
  buildContentWithToolCallsCompletion,
  buildTextChunks,
  buildTextCompletion,
  buildToolCallChunks,
  buildToolCallCompletion,
  type ResponseOverrides,
  type SSEChunk,
  type ToolCall,
  writeErrorResponse,
  writeSSEStream,
} from '@copilotkit/aimock';
import { type ChatRequestBody, contentText } from './request.js';
import type { ScenarioReply, UsageOverride } from './scenario.js';

// Turns a ScenarioReply into the OpenAI chat-completions wire. Every chunk and completion shape
// comes from aimock's builders; only what they cannot express is done here: dropping the
// finish chunk (no_finish_reason), ending without `[DONE]`, and stalling (hang).

/** Model id used when a request names none, and the default `/v1/models` catalogue. */
export const DEFAULT_MODEL_ID = 'scripted-model';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
};

/** What {@link writeReply} needs to know about the request. */
export interface ReplyContext {
  /** Request sequence number, for default tool call ids. */
  seq: number;
  body: ChatRequestBody;
  chunkSizeChars: number;
}

/** An OpenAI-style error body `{ error: { message, type, param: null, code } }`. */
export function errorBody(message: string, type: string, code: string | null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** The neutral error type and message of a scripted `status` (OpenAI names; the Anthropic side maps them). */
export function defaultError(status: number): { type: string; message: string } {
  // 4xx messages avoid words like "server_error", "overloaded" or status numbers: opencode retries
  // any error whose body matches them, which would turn a 400 into five slow retries.
  if (status === 400) return { type: 'invalid_request_error', message: 'Scripted invalid request.' };
  if (status === 401) return { type: 'authentication_error', message: 'Scripted authentication failure.' };
  if (status === 402) return { type: 'insufficient_quota', message: 'Scripted: insufficient credits.' };
  if (status === 429) return { type: 'rate_limit_error', message: 'Scripted rate limit.' };
  if (status >= 500) return { type: 'server_error', message: 'Scripted upstream failure.' };
  return { type: 'invalid_request_error', message: 'Scripted error.' };
}

function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function writeJson(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
}

async function writeStream(
  res: ServerResponse,
  chunks: SSEChunk[],
  usageChunk: SSEChunk | undefined,
): Promise<void> {
  // Stop writing once the client is gone; writes to a destroyed socket must not throw.
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  res.on('error', () => gone.abort());
  const options = usageChunk === undefined ? { signal: gone.signal } : { signal: gone.signal, usageChunk };
  const finished = await writeSSEStream(res, chunks, options);
  if (!finished && !res.writableEnded) res.destroy();
}

/**
 * Writes `reply` to `res`, streaming when `body.stream` is true. `onStatus` is called with the
 * HTTP status once it is decided (never for a hang that sends nothing). A hang resolves at once
 * and leaves `res` open.
 */
export async function writeReply(
  reply: ScenarioReply,
  context: ReplyContext,
  res: ServerResponse,
  onStatus: (status: number) => void,
): Promise<void> {
  const { body, chunkSizeChars: chunkSize } = context;
  const model = body.model !== undefined && body.model !== '' ? body.model : DEFAULT_MODEL_ID;
  const stream = body.stream === true;
  const promptChars = body.messages.reduce((sum, m) => sum + contentText(m.content).length, 0);
  const usage = (override: UsageOverride | undefined, completionChars: number) => {
    const prompt = override?.promptTokens ?? estimateTokens(promptChars);
    const completion = override?.completionTokens ?? estimateTokens(completionChars);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  };
  // Like OpenAI: the usage chunk (empty `choices`) only when the request asks for it.
  const usageChunk = (chunks: SSEChunk[], tokens: ReturnType<typeof usage>): SSEChunk | undefined =>
    body.stream_options?.include_usage === true && chunks[0] !== undefined
      ? {
          id: chunks[0].id,
          object: 'chat.completion.chunk',
          created: chunks[0].created,
          model,
          choices: [],
          usage: tokens,
        }
      : undefined;

  switch (reply.type) {
    case 'error': {
      const defaults = defaultError(reply.status);
      onStatus(reply.status);
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      const text = errorBody(
        reply.message ?? defaults.message,
        reply.errorType ?? defaults.type,
        reply.code ?? null,
      );
      writeErrorResponse(res, reply.status, text);
      return;
    }
    case 'text': {
      const tokens = usage(reply.usage, reply.text.length);
      const overrides: ResponseOverrides = { usage: tokens };
      if (reply.finishReason !== undefined) overrides.finishReason = reply.finishReason;
      onStatus(200);
      if (!stream) {
        writeJson(res, buildTextCompletion(reply.text, model, undefined, overrides));
        return;
      }
      const chunks = buildTextChunks(reply.text, model, chunkSize, undefined, overrides);
      await writeStream(res, chunks, usageChunk(chunks, tokens));
      return;
    }
    case 'tool_calls': {
      const calls: ToolCall[] = reply.calls.map((call, index) => ({
        id: call.id ?? `call_${context.seq}_${index}`,
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
      }));
      const text = reply.text;
      const completionChars =
        (text ?? '').length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
      const tokens = usage(reply.usage, completionChars);
      const overrides: ResponseOverrides = { usage: tokens };
      if (reply.finishReason !== undefined) overrides.finishReason = reply.finishReason;
      onStatus(200);
      if (!stream) {
        writeJson(
          res,
          text === undefined
            ? buildToolCallCompletion(calls, model, undefined, overrides)
            : buildContentWithToolCallsCompletion(text, calls, model, undefined, overrides),
        );
        return;
      }
      const chunks =
        text === undefined
          ? buildToolCallChunks(calls, model, chunkSize, undefined, overrides)
          : buildContentWithToolCallsChunks(text, calls, model, chunkSize, undefined, overrides);
      await writeStream(res, chunks, usageChunk(chunks, tokens));
      return;
    }
    case 'no_finish_reason': {
      onStatus(200);
      if (!stream) {
        const completion = buildTextCompletion(reply.text, model, undefined, {
          usage: usage(undefined, reply.text.length),
        });
        writeJson(res, {
          ...completion,
          choices: completion.choices.map((c) => ({ ...c, finish_reason: null })),
        });
        return;
      }
      // aimock's last text chunk is the one carrying `finish_reason`: drop it.
      const chunks = buildTextChunks(reply.text, model, chunkSize).slice(0, -1);
      if (reply.done ?? true) {
        await writeStream(res, chunks, undefined);
        return;
      }
      res.writeHead(200, SSE_HEADERS);
      for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end();
      return;
    }
    case 'hang': {
      // Leave the response open: the client or ModelServer.close() ends it.
      if (reply.text !== undefined && stream) {
        onStatus(200);
        res.writeHead(200, SSE_HEADERS);
        for (const chunk of buildTextChunks(reply.text, model, chunkSize).slice(0, -1)) {
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        }
      }
      return;
    }
  }
}
