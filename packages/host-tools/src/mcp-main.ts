#!/usr/bin/env node
/**
 * `agentmail-mcp`: the AgentMail mail tools as an MCP stdio server, for any MCP host (see
 * mcp-server.ts). Configured by the environment only: a bridge's mail turn gives it
 * `AGENTMAIL_BRIDGE_SOCKET` + `AGENTMAIL_TURN_TOKEN`; a person's own session
 * `AGENTMAIL_GATEWAY_URL` + `AGENTMAIL_AGENT_KEY`; `AGENTMAIL_LOCALE` picks the descriptions'
 * language. stdout is the MCP channel: nothing else is written there.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { backendFromEnv, createMailToolServer } from './mcp-server.js';

const locale = process.env.AGENTMAIL_LOCALE === 'zh-CN' ? 'zh-CN' : 'en';
const backend = backendFromEnv(process.env, locale);
const server = createMailToolServer({ backend, locale });
await server.connect(new StdioServerTransport());
process.stderr.write(`agentmail-mcp: serving the mail tools (${backend.mode})\n`);
// The host closes stdin to stop the server.
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
