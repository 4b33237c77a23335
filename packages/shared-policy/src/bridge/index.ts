/**
 * @agentmail/shared-policy/bridge: the bridge kit — everything a bridge runs besides its host:
 * the connection loop, mail turns, the permission flow, grants, the bridge lock and settings.
 */

export {
  BRIDGE_CONCURRENCY_DEFAULT,
  BRIDGE_HEARTBEAT_MS_DEFAULT,
  BRIDGE_TURN_TIMEOUT_MS_DEFAULT,
  type BridgeSettings,
  readBridgeSettings,
  type SettingSource,
} from './bridge-config.js';
export {
  BRIDGE_LOCK_RETRY_MS,
  BRIDGE_LOCK_STALE_MS,
  BRIDGE_LOCK_UPDATE_MS,
  BridgeLock,
  type BridgeLockOptions,
  type BridgeLockOwner,
} from './bridge-lock.js';
export {
  type BridgeHost,
  BridgeRuntime,
  type BridgeRuntimeConfig,
  FIRST_SSE_OPEN_WAIT_MS,
  type HeartbeatSnapshot,
  type MailRun,
  TurnLostError,
} from './bridge-runtime.js';
export { ExplicitSendRecord, type ExplicitSendRecordOptions } from './explicit-sends.js';
export { sendFailureMail } from './failure-notice.js';
export { GrantStore, type GrantStoreOptions } from './grant-store.js';
export type { BridgeLogger } from './logger.js';
export {
  type JsonSchemaObject,
  type JsonSchemaProperty,
  MAIL_TOOL_NAMES,
  type MailTool,
  type MailToolAnnotations,
  type MailToolContext,
  type MailToolMailContext,
  type MailToolName,
  type MailToolResult,
  mailTools,
  type ProbeResult,
  probeGateway,
  runMailTool,
} from './mail-tools.js';
export {
  type AttemptResult,
  type AttemptTurn,
  type MailTurnInput,
  type MailTurnPlatform,
  relaySubject,
  runMailTurn,
  type SessionLocation,
  type TurnAttempt,
} from './mail-turn.js';
export {
  decideGuardedCall,
  type GuardedCall,
  type PermissionFlowOptions,
  type PermissionOutcome,
} from './permission-flow.js';
export type { MailTurnReport } from './turn-report.js';
export {
  fallbackDirName,
  resolveWorkspace,
  type WorkspaceFallbackReason,
  type WorkspaceInput,
  type WorkspaceResolution,
} from './workspace.js';

// ---- turn RPC: the bridge's local socket for a host's tool and hook processes (SPEC B-21) ----

export {
  TURN_RPC_CALL_TIMEOUT_MS,
  type TurnRpcCallOptions,
  TurnRpcClient,
  type TurnRpcClientOptions,
} from './rpc/client.js';
export {
  type AskQuestionParams,
  type CallToolInput,
  CallToolParams,
  CallToolResult,
  type PermissionAnswer,
  PermissionQuery,
  RecordSendParams,
  TurnContextView,
} from './rpc/schemas.js';
export {
  type OpenTurnOptions,
  TURN_RPC_CLOSE_FLUSH_MS,
  TURN_TOKEN_SECRET_BYTES,
  type TurnRpcCall,
  type TurnRpcHandlers,
  type TurnRpcLease,
  TurnRpcServer,
  type TurnRpcServerOptions,
} from './rpc/server.js';
export { UNIX_SOCKET_PATH_MAX_BYTES } from './rpc/socket-file.js';
export {
  TURN_RPC_LINE_MAX_CHARS,
  TURN_RPC_METHODS,
  TURN_RPC_SOCKET_ENV,
  TURN_RPC_SOCKET_NAME,
  TURN_RPC_TOKEN_ENV,
  type TurnRpcEnv,
  TurnRpcError,
  type TurnRpcMethod,
} from './rpc/wire.js';
