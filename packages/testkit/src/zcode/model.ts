/**
 * The stand-in's model client: a provider of kind `anthropic` (ZCode's Z.AI Coding Plan default,
 * `https://api.z.ai/api/anthropic`: kingsword09/zcode-cli `docs/CONFIGURATION.md`) called with the
 * official `@anthropic-ai/sdk`, streamed (ZCode runs with `modelStreaming: "on"`, Z1
 * `prompt-command.ts`), no retries. The kinds `openai-compatible` and `openai` exist in ZCode
 * too; the stand-in refuses them with a clear error (the scripted model server's Anthropic
 * endpoint is what the tests use).
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ResolvedModel } from './config.js';

/** A content block of the conversation (Anthropic Messages shapes). */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

/** One message of the conversation. */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/** A tool as the model is offered it. */
export interface OfferedTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** One model answer. */
export interface ModelAnswer {
  content: Block[];
  stopReason: string | null;
  usage: { inputTokens: number; outputTokens: number };
}

/** Output tokens per request. @default 8_192 */
export const MAX_OUTPUT_TOKENS = 8_192;

/** A model that streamed an error or refused the request (the turn fails with its words). */
export class ModelError extends Error {
  override name = 'ModelError';
  constructor(
    message: string,
    readonly code: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** Ask the model once. `onText` gets each text delta. @throws ModelError */
export async function askModel(
  model: ResolvedModel,
  request: { system: string; messages: ConversationMessage[]; tools: OfferedTool[] },
  onText: (delta: string) => void,
  signal: AbortSignal,
): Promise<ModelAnswer> {
  if (model.provider.kind !== 'anthropic')
    throw new ModelError(
      `provider "${model.providerId}" is of kind ${model.provider.kind}; the ZCode stand-in speaks the anthropic kind only`,
      'provider_kind_unsupported',
      false,
    );
  const client = new Anthropic({
    apiKey: model.apiKey ?? 'none',
    ...(model.baseURL ? { baseURL: model.baseURL } : {}),
    maxRetries: 0,
    ...(model.provider.headers ? { defaultHeaders: model.provider.headers } : {}),
  });
  try {
    const stream = client.messages.stream(
      {
        model: model.modelId,
        max_tokens: MAX_OUTPUT_TOKENS,
        system: request.system,
        messages: request.messages as Anthropic.MessageParam[],
        ...(request.tools.length > 0 ? { tools: request.tools as Anthropic.Tool[] } : {}),
      },
      { signal },
    );
    stream.on('text', (delta) => onText(delta));
    const message = await stream.finalMessage();
    const content: Block[] = [];
    for (const b of message.content) {
      if (b.type === 'text') content.push({ type: 'text', text: b.text });
      else if (b.type === 'tool_use')
        content.push({
          type: 'tool_use',
          id: b.id,
          name: b.name,
          input: (b.input ?? {}) as Record<string, unknown>,
        });
    }
    return {
      content,
      stopReason: message.stop_reason,
      usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
    };
  } catch (err) {
    if (err instanceof Anthropic.APIError)
      throw new ModelError(err.message, `provider_http_${err.status ?? 'error'}`, (err.status ?? 500) >= 500);
    if (signal.aborted) throw new ModelError('Turn execution cancelled', 'cancelled', false);
    throw new ModelError((err as Error).message, 'provider_stream_failed', true);
  }
}
