/**
 * `@agentmail/host-tools`: the processes an MCP host runs for AgentMail — the mail-tool server
 * (`agentmail-mcp`) and the permission-hook runner (`agentmail-hook <host>`) — host-neutral, with
 * each host's hook shapes in one table (`HOSTS`).
 */
export { decideInteractive, INTERACTIVE_STREAM_OPEN_MS, interactiveGrantFile } from './hook-interactive.js';
export {
  HOOK_READY_MARKER,
  HOOK_SELF_CHECK_ENV,
  PERMISSION_WAIT_ENV,
  type RunHookOptions,
  runHook,
  SESSION_START_CHECK_MS,
} from './hook-runner.js';
export {
  CLAUDE_CODE_HOST,
  HOSTS,
  type HookEvent,
  type HookEventName,
  HookInputError,
  type HookOutput,
  type HookVerdict,
  type HostProfile,
  hostProfile,
  ZCODE_HOST,
} from './hosts.js';
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
