/**
 * `@agentmail/host-tools`: the processes an MCP host runs for AgentMail — the mail-tool server
 * (`agentmail-mcp`) and the permission-hook runner (`agentmail-hook <host>`) — host-neutral, with
 * each host's hook shapes in one table (`HOSTS`).
 */
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
  unconfiguredBackend,
} from './mcp-server.js';
