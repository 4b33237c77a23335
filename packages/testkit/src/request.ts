import { z } from 'zod';

// The request side of the OpenAI chat-completions wire, as hosts send it. Loose objects on
// purpose: hosts add their own keys (pi: `store`, `max_completion_tokens`; dsh: `thinking`),
// and a scripted model must accept what a real provider accepts.
const contentPartSchema = z.looseObject({ type: z.string().optional(), text: z.string().optional() });

const messageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(contentPartSchema), z.null()]).optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string().optional(),
        type: z.string().optional(),
        function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
      }),
    )
    .nullish(),
});

const toolSchema = z.looseObject({
  type: z.string().optional(),
  function: z.looseObject({ name: z.string() }).optional(),
});

/** zod schema of a `POST /v1/chat/completions` body: `messages` is required, every other key is kept. */
export const chatRequestBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(messageSchema),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  tools: z.array(toolSchema).nullish(),
});

/** A chat-completions request body as sent by the host (OpenAI wire, snake_case, unknown keys kept). */
export type ChatRequestBody = z.infer<typeof chatRequestBodySchema>;

/** One message of a {@link ChatRequestBody}. */
export type ChatRequestMessage = ChatRequestBody['messages'][number];

/** A tool result the model is asked to answer: one `role: "tool"` message after the last assistant message. */
export interface ToolResultView {
  /** `tool_call_id` of the message (`''` when absent). */
  readonly toolCallId: string;
  /** Text content of the message (content parts joined). */
  readonly text: string;
}

/** How a recorded request ended. `pending` while the response is still open (e.g. a hang). */
export type RequestEnd = 'pending' | 'complete' | 'client_closed' | 'server_closed';

/** What the server did with a recorded request; updated in place while the response runs. */
export interface RecordedResponse {
  /** HTTP status sent, `undefined` until a status line went out (a hang before headers). */
  readonly status: number | undefined;
  /** `complete` = fully written; `client_closed` = the client went away first; `server_closed` = ended by `close()`. */
  readonly end: RequestEnd;
}

/**
 * One journal entry: a chat-completions request as received, with views derived from its body for
 * matching and assertions. Entries are recorded on arrival, before the answer is written; `response`
 * is updated in place as the answer proceeds.
 */
export interface RecordedRequest {
  /** Arrival order, 1-based, unique per server. */
  readonly seq: number;
  /** `Date.now()` at arrival, in ms. */
  readonly receivedAtMs: number;
  readonly method: string;
  /** Request path as received, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Request headers, names lower-cased, repeated values joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed body, `undefined` when it was not a valid chat request (see `invalid`). */
  readonly body: ChatRequestBody | undefined;
  /** Why the body was rejected with HTTP 400, `undefined` for a valid request. */
  readonly invalid: string | undefined;
  /** `body.model`, `''` when absent. */
  readonly model: string;
  /** `body.stream === true`. */
  readonly stream: boolean;
  /** Text of the last `role: "user"` message (content parts joined), `''` when none. */
  readonly lastUserText: string;
  /** Text of every `system` and `developer` message, joined with `\n`. */
  readonly systemText: string;
  /** Names of the tools offered in `body.tools`, in order. */
  readonly toolNames: readonly string[];
  /** Tool results after the last assistant message: non-empty exactly when the model is asked to answer tool results. */
  readonly toolResults: readonly ToolResultView[];
  /** Label of the scenario that answered (its `name`, else `#<index>`), `undefined` when none matched. */
  readonly scenario: string | undefined;
  readonly response: RecordedResponse;
}

/** Text of a message's `content` (string, or the `text` of each part joined). */
export function contentText(content: ChatRequestMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** The derived views of a valid body (every view empty for an invalid one). */
export interface RequestViews {
  model: string;
  stream: boolean;
  lastUserText: string;
  systemText: string;
  toolNames: string[];
  toolResults: ToolResultView[];
}

/** Computes the views of {@link RecordedRequest} from a body. */
export function deriveViews(body: ChatRequestBody | undefined): RequestViews {
  if (body === undefined) {
    return { model: '', stream: false, lastUserText: '', systemText: '', toolNames: [], toolResults: [] };
  }
  const messages = body.messages;
  const lastUser = messages.findLast((m) => m.role === 'user');
  const lastAssistantIndex = messages.findLastIndex((m) => m.role === 'assistant');
  // "Answering tool results" = tool messages after the last assistant message. Not only the very
  // last message: a host may put a user message (e.g. images) after the tool results.
  const toolResults =
    lastAssistantIndex < 0
      ? []
      : messages
          .slice(lastAssistantIndex + 1)
          .filter((m) => m.role === 'tool')
          .map((m) => ({ toolCallId: m.tool_call_id ?? '', text: contentText(m.content) }));
  return {
    model: body.model ?? '',
    stream: body.stream === true,
    lastUserText: lastUser === undefined ? '' : contentText(lastUser.content),
    systemText: messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => contentText(m.content))
      .join('\n'),
    toolNames: (body.tools ?? []).flatMap((t) => (t.function?.name === undefined ? [] : [t.function.name])),
    toolResults,
  };
}

/** One-line summary of a recorded request, for timeout and mismatch messages. */
export function describeRequest(request: RecordedRequest): string {
  const user =
    request.lastUserText.length > 60 ? `${request.lastUserText.slice(0, 57)}...` : request.lastUserText;
  const parts = [
    `#${request.seq}`,
    `model=${JSON.stringify(request.model)}`,
    `user=${JSON.stringify(user)}`,
    `tools=[${request.toolNames.join(',')}]`,
    `toolResults=${request.toolResults.length}`,
    `scenario=${request.scenario ?? '(none)'}`,
  ];
  if (request.invalid !== undefined) parts.push(`invalid=${JSON.stringify(request.invalid)}`);
  return parts.join(' ');
}
