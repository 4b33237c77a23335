/**
 * `@agentmail/host-tools/mcp`: the MCP mail-tool server alone — no hook or driver code — for a
 * program that serves the mail tools itself (the CLI's `agentmail mcp`).
 */
export {
  backendFromEnv,
  createMailToolServer,
  MAIL_TOOL_SERVER_NAME,
  type MailToolBackend,
  type MailToolCallResult,
  type MailToolServerOptions,
  rpcBackend,
  standaloneBackend,
  turnBackendFromEnv,
  unconfiguredBackend,
} from './mcp-server.js';
export { type ServeMailToolsOptions, serveMailToolsOnStdio } from './mcp-stdio.js';
