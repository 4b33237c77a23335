/**
 * `@agentmail/host-tools`: the processes an MCP host runs for AgentMail — the mail-tool server
 * (`agentmail-mcp`) and the permission-hook runner (`runHookMain(profile)`, which each bridge's
 * own `hook.js` calls with its host's {@link HostProfile}) — host-neutral: no host is named here.
 */
export { decideInteractive, INTERACTIVE_STREAM_OPEN_MS, interactiveGrantFile } from './hook-interactive.js';
export {
  HOOK_EVENTS,
  type HookEvent,
  type HookEventName,
  HookInputError,
  type HookOutput,
  type HookStdinFields,
  type HookVerdict,
  type HostProfile,
  hookField,
  isHookObject,
  readClaudeStyleEvent,
  readHookStdin,
  writeClaudeStyleAnswer,
} from './hook-profile.js';
export {
  HOOK_READY_MARKER,
  HOOK_SELF_CHECK_ENV,
  PERMISSION_WAIT_ENV,
  type RunHookOptions,
  runHook,
  runHookMain,
  SESSION_START_CHECK_MS,
} from './hook-runner.js';
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
