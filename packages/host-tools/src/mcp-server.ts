/**
 * The MCP mail-tool server: the 11 mail tools of SPEC B-17 and `ask_person` (P-10) (`mailTools()` of the bridge kit:
 * same names, parameters, rendered text and annotations on every platform) served over MCP
 * (`@modelcontextprotocol/sdk`) to any MCP host — Claude Code and ZCode load it from their plugin
 * directory, other hosts with their own MCP configuration (`agentmail-mcp`).
 *
 * Where a tool runs is a {@link MailToolBackend}:
 * - in a mail-driven run the bridge gave the host `AGENTMAIL_BRIDGE_SOCKET` and
 *   `AGENTMAIL_TURN_TOKEN`: each call goes to the bridge over the turn RPC and runs there with the
 *   bridge's key and the turn's mail context; sends are recorded for the relay (B-10, B-21);
 * - in a person's own session: standalone, with the configured key (`AGENTMAIL_GATEWAY_URL`,
 *   `AGENTMAIL_AGENT_KEY`); without them every call answers how to configure it.
 */

import { type MailToolContext, mailTools, readBridgeSettings, runMailTool } from '@agentmail/bridge-kit';
import { TurnRpcClient } from '@agentmail/bridge-kit/rpc-client';
import { formatText, type Locale, messageOf } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** The text a tool call answers and whether it failed. */
export interface MailToolCallResult {
  text: string;
  isError: boolean;
}

/** Where a mail tool call runs. */
export interface MailToolBackend {
  /** `mail-turn`: through the bridge of the running mail turn; `standalone`: with the configured key. */
  readonly mode: 'mail-turn' | 'standalone' | 'unconfigured';
  /**
   * Run tool `name`. Never throws: a failure is `{ isError: true, text }` the model can act on.
   * `waitsForPerson`: the tool waits for a person (P-10), so no time limit of the backend's own.
   */
  call(
    name: string,
    args: unknown,
    signal?: AbortSignal,
    options?: { waitsForPerson?: boolean },
  ): Promise<MailToolCallResult>;
}

/** Tool calls through the bridge of the running mail turn (SPEC B-21). */
export function rpcBackend(client: TurnRpcClient): MailToolBackend {
  return {
    mode: 'mail-turn',
    async call(name, args, signal, options) {
      try {
        const input = typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {};
        return await client.callTool(
          { name, arguments: input as Record<string, unknown> },
          { ...(signal ? { signal } : {}), ...(options?.waitsForPerson ? { waitsForPerson: true } : {}) },
        );
      } catch (err) {
        // The bridge is gone or refused the token: the call did not run.
        return {
          text: formatText('tools.error.local', { tool: name, message: messageOf(err) }),
          isError: true,
        };
      }
    },
  };
}

/**
 * Tool calls with a Gateway client of this process (a person's own session). `connect_to_server`
 * switches this process's client only after the new Gateway answered (B-18).
 */
export function standaloneBackend(client: GatewayClient, locale: Locale): MailToolBackend {
  let live = client;
  const ctx = (): MailToolContext => ({
    client: live,
    locale,
    reconnect: ({ client: next }) => {
      live = next;
    },
  });
  return {
    mode: 'standalone',
    async call(name, args, signal) {
      const r = await runMailTool(name, args, { ...ctx(), ...(signal ? { signal } : {}) }, locale);
      return { text: r.text, isError: r.isError === true };
    },
  };
}

/** Every call answers that the server is not configured (`detail` names what is missing). */
export function unconfiguredBackend(detail: string, locale: Locale): MailToolBackend {
  return {
    mode: 'unconfigured',
    call: async (name) => ({
      text: formatText('tools.error.not_configured', { tool: name, detail }, locale),
      isError: true,
    }),
  };
}

/**
 * The turn-RPC backend when a bridge started the host for a mail turn (`AGENTMAIL_BRIDGE_SOCKET`
 * and `AGENTMAIL_TURN_TOKEN` set, SPEC B-21), else undefined: such a call must run in the bridge,
 * with its key and the turn's mail context, whatever key this process was given.
 */
export function turnBackendFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  locale: Locale,
): MailToolBackend | undefined {
  try {
    return rpcBackend(TurnRpcClient.fromEnv(env, { locale }));
  } catch {
    return undefined; // not a mail turn
  }
}

/**
 * The backend this process's environment calls for: the turn RPC when a bridge started the host
 * for a mail turn, else standalone with `AGENTMAIL_GATEWAY_URL` and `AGENTMAIL_AGENT_KEY`
 * (downloads allowed below `cwd`), else unconfigured.
 */
export function backendFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  locale: Locale,
  cwd: string = process.cwd(),
): MailToolBackend {
  const turn = turnBackendFromEnv(env, locale);
  if (turn) return turn;
  try {
    const settings = readBridgeSettings(env, { agentName: 'agent' });
    const roots = [cwd, ...(env.CLAUDE_PROJECT_DIR ? [env.CLAUDE_PROJECT_DIR] : [])];
    return standaloneBackend(
      new GatewayClient({ baseUrl: settings.gatewayUrl, key: settings.agentKey, allowedRoots: roots }),
      locale,
    );
  } catch (err) {
    return unconfiguredBackend(messageOf(err), locale);
  }
}

/** Options of {@link createMailToolServer}. */
export interface MailToolServerOptions {
  backend: MailToolBackend;
  /** Locale of the tool descriptions. @default 'en' */
  locale?: Locale;
  /** Server version in the MCP handshake. @default '0.1.0' */
  version?: string;
}

/** The server name in the MCP handshake (hosts show it; Claude Code names tools `mcp__<server>__<tool>` by its config key). */
export const MAIL_TOOL_SERVER_NAME = 'agentmail';

/**
 * An MCP server (not yet connected) listing the mail tools with their JSON Schemas and true
 * annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`: ZCode's plan
 * mode allows an MCP tool only when it is not destructive) and running each call on `backend`.
 * @example
 * const server = createMailToolServer({ backend: backendFromEnv(process.env, 'en') });
 * await server.connect(new StdioServerTransport());
 */
export function createMailToolServer(options: MailToolServerOptions): Server {
  const locale = options.locale ?? 'en';
  // ask_person only in a mail-driven run: a person's own session asks in the session (P-10).
  const tools = mailTools(locale, { askPerson: options.backend.mode === 'mail-turn' });
  const names = new Set<string>(tools.map((t) => t.name));
  const waiting = new Set<string>(tools.filter((t) => t.waitsForPerson).map((t) => t.name));
  const server = new Server(
    { name: MAIL_TOOL_SERVER_NAME, version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.parameters as unknown as { type: 'object'; [k: string]: unknown },
      annotations: { title: t.name, ...t.annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    // Unknown names go to the tool runner too: its error lists the tools.
    const r = await options.backend.call(name, args ?? {}, extra.signal, {
      waitsForPerson: waiting.has(name),
    });
    return {
      content: [{ type: 'text', text: r.text }],
      ...(r.isError || !names.has(name) ? { isError: true } : {}),
    };
  });
  return server;
}
