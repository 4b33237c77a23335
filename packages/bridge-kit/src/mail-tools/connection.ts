/** The connection tool (SPEC B-18): probe another Gateway, then switch the live client to it. */
import type { RegisterRequest } from '@agentmail/protocol';
import { formatText, type Locale, messageOf } from '@agentmail/shared-policy';
import { type GatewayClient, gatewayUrl } from '@agentmail/shared-policy/client';
import { z } from 'zod';
import { defineTool, failure, STRING, toolError } from './define.js';
import type { MailTool } from './types.js';

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

/** `connect_to_server`. */
function connectToServerTool(locale: Locale): MailTool {
  return defineTool(
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
  );
}

/** `connect_to_server`, with its description in `locale`. */
export function connectionTools(locale: Locale): MailTool[] {
  return [connectToServerTool(locale)];
}
