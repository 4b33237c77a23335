/**
 * The stand-in's MCP client side, with the MCP SDK's own client over stdio: each enabled plugin's
 * stdio servers are started and listed; the model sees `mcp__<server>__<tool>` with every
 * character outside `[A-Za-z0-9_-]` turned into `_` (`mcp__plugin_agentmail_mail__send_mail`,
 * IssacZhuang/ZCode `core/src/mcp/name.ts`); a tool's capability comes from its annotations:
 * `readOnly = readOnlyHint === true`, `destructive = destructiveHint === true`, `needsApproval`
 * always (yeyuan98/ZCode `core/src/mcp/index.ts`).
 * The server's environment is the CLI's with the resolved `env` entries laid over it (UNVERIFIED:
 * whether ZCode passes its own environment to stdio servers is not shown in the sources read; its
 * hooks do get it, as an overlay).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ToolCapability } from './permissions.js';
import type { LoadedPlugin, PluginDiagnostic } from './plugins.js';
import type { ToolOutput } from './tools.js';

/** Handshake and listing time of one server, in ms (a server's own `timeoutMs` wins). @default 30_000 */
export const MCP_CONNECT_TIMEOUT_MS = 30_000;

/** An MCP tool as the model and the permission rules see it. */
export interface McpTool {
  /** `mcp__<server>__<tool>`. */
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  capability: ToolCapability;
  call(input: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutput>;
}

/** The model-facing name of `tool` on `server`. */
export function mcpToolName(server: string, tool: string): string {
  const clean = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');
  return `mcp__${clean(server)}__${clean(tool)}`;
}

/**
 * ZCode's capability of an MCP tool from its annotations (v3.15.1 `core/src/mcp/index.ts`):
 * read-only only with `readOnlyHint: true`, destructive only with `destructiveHint: true`, always
 * needing approval, network scope; plan mode then allows every non-destructive one.
 */
export function mcpCapability(
  annotations: { readOnlyHint?: boolean | undefined; destructiveHint?: boolean | undefined } | undefined,
): ToolCapability {
  const readOnly = annotations?.readOnlyHint === true;
  const destructive = annotations?.destructiveHint === true;
  return {
    readOnly,
    destructive,
    needsApproval: true,
    sideEffectScope: 'network',
    riskLevel: destructive ? 'high' : readOnly ? 'low' : 'medium',
    permission: 'mcp',
  };
}

/** Connected servers of one run. */
export interface McpSession {
  tools: McpTool[];
  /** Server name → `connected` or the error. */
  status: Record<string, string>;
  close(): Promise<void>;
}

/** Connect every stdio server of the enabled `plugins`; a server that fails is reported and skipped. */
export async function connectMcp(
  plugins: readonly LoadedPlugin[],
  diagnostics: PluginDiagnostic[],
): Promise<McpSession> {
  const clients: Client[] = [];
  const tools: McpTool[] = [];
  const status: Record<string, string> = {};
  const servers = plugins
    .filter((p) => p.enabled)
    .flatMap((p) => p.mcpServers.map((s) => ({ plugin: p, server: s })));
  await Promise.all(
    servers.map(async ({ plugin, server }) => {
      const client = new Client({ name: 'zcode-standin', version: '3.15.1' });
      const timeout = server.timeoutMs ?? MCP_CONNECT_TIMEOUT_MS;
      try {
        const env: Record<string, string> = {};
        for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
        await client.connect(
          new StdioClientTransport({
            command: server.command,
            args: server.args,
            env: { ...env, ...server.env },
            ...(server.cwd ? { cwd: server.cwd } : {}),
            stderr: 'ignore',
          }),
          { timeout },
        );
        clients.push(client);
        const listed = await client.listTools(undefined, { timeout });
        for (const t of listed.tools) {
          tools.push({
            name: mcpToolName(server.name, t.name),
            server: server.name,
            tool: t.name,
            description: t.description ?? '',
            inputSchema: t.inputSchema as Record<string, unknown>,
            capability: mcpCapability(t.annotations),
            async call(input, signal) {
              const r = await client.callTool({ name: t.name, arguments: input }, undefined, {
                signal,
                timeout: 24 * 3600_000,
              });
              const text = (r.content as Array<{ type: string; text?: string }>)
                .map((c) => c.text ?? '')
                .join('\n');
              return { text, isError: r.isError === true };
            },
          });
        }
        status[server.name] = 'connected';
      } catch (err) {
        status[server.name] = `failed: ${(err as Error).message}`;
        diagnostics.push({
          code: 'plugin_mcp_connect_failed',
          message: `${server.name}: ${(err as Error).message}`,
          severity: 'error',
          pluginId: plugin.id,
        });
        await client.close().catch(() => undefined);
      }
    }),
  );
  return {
    tools,
    status,
    close: async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    },
  };
}
