/**
 * Server-Sent Events decoding, once: bytes (cut anywhere, even inside a multi-byte character)
 * into frames, and a frame into a typed event of a stream's event-schema map. Browser-safe (no
 * Node built-in): the SSE client reads with it, and so can a pass-through (the testkit proxy), a
 * wire test or the web mailbox.
 */
import { type EventSchemas, formatDecodeError, type StreamEvent } from '@agentmail/protocol';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { AgentMailError, ERROR_CODES } from '../errors.js';

/** One complete SSE frame as it came: its fields, unvalidated. */
export interface SseFrame {
  /** The `id:` field; `undefined` when the frame has none ('' clears the cursor). */
  id: string | undefined;
  /** The `event:` field; `undefined` when none (the type `message`). */
  event: string | undefined;
  /** The `data:` lines joined by `\n`. */
  data: string;
}

/** Callbacks of {@link SseFrameDecoder}. */
export interface SseFrameDecoderOptions {
  /** Each complete frame, in stream order. */
  onFrame: (frame: SseFrame) => void;
  /** Each comment line (`: ping`), without the colon and its space (`ping`). */
  onComment?: (comment: string) => void;
}

/**
 * Bytes in, frames out (SPEC B-2): one streaming UTF-8 decoder and one frame parser, so a frame
 * or a character split across chunks survives. Use one per connection: a partial frame left by a
 * dropped connection must not join the next connection's bytes.
 *
 * @example
 * const decoder = new SseFrameDecoder({ onFrame: (f) => frames.push(f) });
 * for await (const chunk of body) decoder.push(chunk);
 */
export class SseFrameDecoder {
  readonly #text = new TextDecoder('utf-8');
  readonly #parser: EventSourceParser;

  constructor(options: SseFrameDecoderOptions) {
    this.#parser = createParser({
      onEvent: (msg) => options.onFrame({ id: msg.id, event: msg.event, data: msg.data }),
      ...(options.onComment ? { onComment: options.onComment } : {}),
    });
  }

  /** Feed the next chunk (bytes, or text already decoded). */
  push(chunk: Uint8Array | string): void {
    this.#parser.feed(typeof chunk === 'string' ? chunk : this.#text.decode(chunk, { stream: true }));
  }
}

/** Result of {@link decodeSseEvent}: never throws. */
export type SseDecodeResult<M extends EventSchemas> =
  | { ok: true; event: StreamEvent<M> }
  | { ok: false; error: AgentMailError };

/**
 * A frame as an event of the stream whose event types are `schemas` (SPEC G-20, G-21): the type
 * must be one of them and the data JSON that its schema accepts. `id` is the event's id (the
 * frame's, or the stream's current cursor when the frame has none). Never throws: a problem is
 * `AM_SSE_EVENT_UNKNOWN` (a type the map lacks) or `AM_SSE_EVENT_INVALID` (data not JSON, or
 * breaking the schema, naming the field).
 */
export function decodeSseEvent<M extends EventSchemas>(
  schemas: M,
  frame: SseFrame,
  id: string,
): SseDecodeResult<M> {
  const type = frame.event;
  if (type === undefined || !Object.hasOwn(schemas, type))
    return {
      ok: false,
      error: new AgentMailError(
        ERROR_CODES.SSE_EVENT_UNKNOWN,
        `event ${JSON.stringify(id)} has unknown type ${JSON.stringify(type ?? 'message')}; skipped (known: ${Object.keys(schemas).join(', ')})`,
      ),
    };
  const schema = schemas[type] as M[string];
  let json: unknown;
  try {
    json = JSON.parse(frame.data);
  } catch (err) {
    return {
      ok: false,
      error: new AgentMailError(
        ERROR_CODES.SSE_EVENT_INVALID,
        `event ${type} ${JSON.stringify(id)}: data is not JSON (${err instanceof Error ? err.message : String(err)}); skipped`,
        { cause: err },
      ),
    };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      error: new AgentMailError(
        ERROR_CODES.SSE_EVENT_INVALID,
        `event ${type} ${JSON.stringify(id)} breaks the contract: ${formatDecodeError(parsed.error, schema, json).detail} Skipped; update the bridge or the Gateway so their versions match`,
        { cause: parsed.error },
      ),
    };
  return { ok: true, event: { type, id, data: parsed.data } as StreamEvent<M> };
}
