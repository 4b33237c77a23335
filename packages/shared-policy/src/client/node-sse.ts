/**
 * The Node side of the SSE reader: the same {@link FetchSseClient} with undici as its default
 * transport (an undici `dispatcher` then works, and fetch's refused "bad ports" do not apply).
 * Kept out of sse-client.ts, which stays browser-safe.
 */
import type { EventSchemas } from '@agentmail/protocol';
import { undiciTransport } from './node-transfer.js';
import { type AgentEventSchemas, SseClient as FetchSseClient, type SseClientOptions } from './sse-client.js';

/**
 * The event stream reader of `@agentmail/shared-policy/client` (bridges, the CLI, the testkit):
 * see the browser-safe class it extends for the behaviour (SPEC B-2, G-20..G-22). `transport`
 * defaults to `undiciTransport` instead of `fetch`; everything else is the same.
 *
 * @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `url` is not an http(s) URL.
 */
export class SseClient<M extends EventSchemas = AgentEventSchemas> extends FetchSseClient<M> {
  constructor(options: SseClientOptions<M>) {
    super({ ...options, transport: options.transport ?? undiciTransport });
  }
}
