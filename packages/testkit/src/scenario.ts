import type { RecordedRequest } from './request.js';

/** A text condition: a string (substring, or exact where the field says so) or a RegExp. */
export type TextPattern = string | RegExp;

/** An arbitrary condition on a recorded request. */
export type RequestPredicate = (request: RecordedRequest) => boolean;

/**
 * Conditions on a request's content; all given conditions must hold (AND), an empty match holds
 * for every request. Matching is on content, never on call counts: hosts send extra requests
 * (opencode and dsh send a title request with no tools next to the first turn).
 */
export interface RequestMatch {
  /** Substring of / RegExp on the text of the last `role: "user"` message. */
  lastUserMessage?: TextPattern;
  /** Substring of / RegExp on the joined `system` and `developer` messages. */
  systemPrompt?: TextPattern;
  /** `true`: the model is asked to answer tool results (tool messages after the last assistant message); `false`: it is not. */
  hasToolResult?: boolean;
  /** Substring of / RegExp on the text of any tool result being answered (implies `hasToolResult: true`). */
  toolResultContains?: TextPattern;
  /** Exact name of a tool that must be offered in `tools`. */
  toolOffered?: string;
  /** `true`: at least one tool offered; `false`: none (typical of title requests). */
  hasTools?: boolean;
  /** Exact model id, or a RegExp on it. */
  model?: TextPattern;
  /** Header conditions, names case-insensitive; a string value must equal the header exactly. */
  headers?: Readonly<Record<string, TextPattern>>;
  /** Any other condition. */
  predicate?: RequestPredicate;
}

/** Token counts reported in `usage`; each defaults to about one token per 4 characters. */
export interface UsageOverride {
  promptTokens?: number;
  completionTokens?: number;
}

/** Answer with assistant text and a finish reason. */
export interface TextReply {
  type: 'text';
  text: string;
  /** Override `finish_reason`, e.g. `length` or `content_filter`. @default 'stop' */
  finishReason?: string;
  usage?: UsageOverride;
}

/** One tool call of a {@link ToolCallsReply}. */
export interface ToolCallSpec {
  /** Tool (function) name. */
  name: string;
  /** Arguments: a JSON string sent as is, or a value sent as `JSON.stringify(value)`. @default {} */
  arguments?: string | Readonly<Record<string, unknown>> | readonly unknown[];
  /** Tool call id. @default `call_<request seq>_<index>` */
  id?: string;
}

/** Answer with one or more tool calls (several = parallel calls in one assistant message). */
export interface ToolCallsReply {
  type: 'tool_calls';
  calls: readonly ToolCallSpec[];
  /** Assistant text streamed before the calls. */
  text?: string;
  /** @default 'tool_calls' */
  finishReason?: string;
  usage?: UsageOverride;
}

/** Answer with an HTTP error and an OpenAI-style body `{ error: { message, type, param, code } }`. */
export interface ErrorReply {
  type: 'error';
  /** HTTP status, 400..599 (e.g. 400, 402, 429, 500). */
  status: number;
  /** @default a neutral text per status (never containing retry trigger words for a 4xx) */
  message?: string;
  /** `error.type`. @default per status: 400 invalid_request_error, 401 authentication_error, 402 insufficient_quota, 429 rate_limit_error, 5xx server_error */
  errorType?: string;
  /** `error.code`. @default null */
  code?: string;
  /** Extra response headers, e.g. `{ 'retry-after-ms': '50' }` to make a host's retries fast. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * Never answer: the response stays open until the client disconnects or the server closes. With
 * `text` on a streaming request, the headers and that partial text are sent first, then nothing.
 */
export interface HangReply {
  type: 'hang';
  text?: string;
}

/**
 * Stream `text` and end without any `finish_reason` (and without a usage chunk): a broken
 * provider. `done: true` still sends `data: [DONE]` (the stream looks complete); `false` just
 * ends the body. A non-streaming request gets a completion whose `finish_reason` is `null`.
 */
export interface NoFinishReasonReply {
  type: 'no_finish_reason';
  text: string;
  /** @default true */
  done?: boolean;
}

/** What a scenario answers. Discriminated by `type`. */
export type ScenarioReply = TextReply | ToolCallsReply | ErrorReply | HangReply | NoFinishReasonReply;

/**
 * One scripted answer: the first scenario (in the order added) whose `match` holds and whose
 * `times` is not used up answers the request; later scenarios are the fall-through.
 */
export interface Scenario {
  /** Label recorded on the requests it answers. @default `#<index in the server's list>` */
  name?: string;
  /** @default {} (matches every request) */
  match?: RequestMatch;
  /** Answer at most this many requests, then fall through to later scenarios. @default unlimited */
  times?: number;
  /** The answer, or a function computing it from the request (e.g. to echo a marker). */
  reply: ScenarioReply | ((request: RecordedRequest) => ScenarioReply);
}

function testPattern(pattern: TextPattern, text: string, exact: boolean): boolean {
  // `search` ignores `lastIndex`, so a /g or /y RegExp gives the same answer every time.
  if (pattern instanceof RegExp) return text.search(pattern) >= 0;
  return exact ? text === pattern : text.includes(pattern);
}

/**
 * Whether a request satisfies every condition of `match`. Strings are substrings for text fields
 * (`lastUserMessage`, `systemPrompt`, `toolResultContains`) and exact for identifiers (`model`,
 * `toolOffered`, `headers`).
 */
export function matchesRequest(match: RequestMatch, request: RecordedRequest): boolean {
  if (
    match.lastUserMessage !== undefined &&
    !testPattern(match.lastUserMessage, request.lastUserText, false)
  ) {
    return false;
  }
  if (match.systemPrompt !== undefined && !testPattern(match.systemPrompt, request.systemText, false)) {
    return false;
  }
  if (match.hasToolResult !== undefined && match.hasToolResult !== request.toolResults.length > 0)
    return false;
  if (match.toolResultContains !== undefined) {
    const pattern = match.toolResultContains;
    if (!request.toolResults.some((result) => testPattern(pattern, result.text, false))) return false;
  }
  if (match.toolOffered !== undefined && !request.toolNames.includes(match.toolOffered)) return false;
  if (match.hasTools !== undefined && match.hasTools !== request.toolNames.length > 0) return false;
  if (match.model !== undefined && !testPattern(match.model, request.model, true)) return false;
  if (match.headers !== undefined) {
    for (const [name, pattern] of Object.entries(match.headers)) {
      const value = request.headers[name.toLowerCase()];
      if (value === undefined || !testPattern(pattern, value, true)) return false;
    }
  }
  if (match.predicate !== undefined && !match.predicate(request)) return false;
  return true;
}
