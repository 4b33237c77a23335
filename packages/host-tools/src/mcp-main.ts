#!/usr/bin/env node
/**
 * `agentmail-mcp`: the AgentMail mail tools as an MCP stdio server, for any MCP host (see
 * mcp-server.ts). Configured by the environment only: a bridge's mail turn gives it
 * `AGENTMAIL_BRIDGE_SOCKET` + `AGENTMAIL_TURN_TOKEN`; a person's own session
 * `AGENTMAIL_GATEWAY_URL` + `AGENTMAIL_AGENT_KEY`; `AGENTMAIL_LOCALE` picks the descriptions'
 * language. stdout is the MCP channel: nothing else is written there. The CLI's `agentmail mcp`
 * starts the same server with flags and the CLI's config (packages/gateway).
 */
import { resolveLocale } from '@agentmail/shared-policy';
import { backendFromEnv } from './mcp-server.js';
import { serveMailToolsOnStdio } from './mcp-stdio.js';

const locale = resolveLocale(process.env.AGENTMAIL_LOCALE);
await serveMailToolsOnStdio({ backend: backendFromEnv(process.env, locale), locale });
// The host closed stdin to stop the server.
process.exit(0);
