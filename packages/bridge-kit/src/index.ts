/**
 * @agentmail/bridge-kit: the bridge kit (docs/BRIDGE-CONTRACT.md). `createBridge` runs
 * everything a bridge needs besides its host: settings, the connection loop, catch-up, queues,
 * timeouts, mail turns, bindings, the permission flow, grants, the bridge lock and typed events.
 */

// The data-dir rule is pure (root): re-exported so a bridge finds its whole configuration here.
export { bridgeDataDir, dataDirVariable } from '@agentmail/shared-policy';
// Where the key is read from is the client's rule (the CLI's reports read it too): re-exported.
export { AGENT_KEY_CREDENTIAL, AGENT_KEY_FILE_VARIABLE, readAgentKey } from '@agentmail/shared-policy/client';
export type {
  Attempt,
  AttemptContext,
  AttemptModel,
  AttemptOutcome,
  FoundSession,
  HostSandbox,
  HostSnapshot,
  PlatformSessionRef,
  TurnAdapter,
} from './adapter.js';
export {
  BRIDGE_CONCURRENCY_DEFAULT,
  BRIDGE_HEARTBEAT_MS_DEFAULT,
  BRIDGE_MIN_PERIOD_MS,
  BRIDGE_OPTION_VARIABLES,
  BRIDGE_TURN_TIMEOUT_MS_DEFAULT,
  type BridgeConfig,
  type BridgeOptionName,
  type BridgeSettings,
  checkBridgeConfig,
  checkBridgeSettings,
  questionTimeoutOf,
  readBridgeConfig,
  readBridgeSettings,
  type SettingSource,
  withPluginOptions,
} from './bridge-config.js';
export {
  BRIDGE_LOCK_RETRY_MS,
  BRIDGE_LOCK_STALE_MS,
  BRIDGE_LOCK_UPDATE_MS,
  BridgeLock,
  type BridgeLockOptions,
  type BridgeLockOwner,
} from './bridge-lock.js';
export { FAILPOINT_VARIABLE, FIRST_SSE_OPEN_WAIT_MS, TurnLostError } from './bridge-runtime.js';
export type { WorkerEntry } from './child-turns/launcher.js';
export type {
  ChildTurnEvent,
  LauncherEvent,
  LauncherRequest,
  RunnerMessage,
  WorkerMessage,
  WorkerReport,
} from './child-turns/messages.js';
export {
  CHILD_STOP_GRACE_MS,
  type ChildProcessTurns,
  type ChildProcessTurnsOptions,
  type ChildTaskOutcome,
  type ChildTurnsBridge,
  childProcessTurns,
} from './child-turns/runner.js';
// The worker side (`runChildTurnWorker`) is its own entry, `@agentmail/bridge-kit/child-worker`: it
// loads the turn code lazily (a dynamic import), which would keep the rest of this entry from
// being tree-shaken away in a bundle that needs one part of it.
export {
  type Bridge,
  type BridgeAdapter,
  type CreateBridgeOptions,
  createBridge,
  type DelegatedTurn,
  START_RETRY_INITIAL_MS,
  START_RETRY_MAX_MS,
  type TurnLookup,
} from './create-bridge.js';
export {
  type BridgeEvent,
  BridgeEventBus,
  type BridgeEventListener,
  type BridgeEventOf,
  type BridgeEventType,
  type CatchUpTrigger,
  type EmitEvent,
  type NextEventOptions,
  type RelayOutcome,
} from './events.js';
export { ExplicitSendRecord, type ExplicitSendRecordOptions } from './explicit-sends.js';
export { GrantStore, type GrantStoreOptions } from './grant-store.js';
export {
  type BridgeLogLevel,
  type HostEventLevel,
  type HostLogEntry,
  hostLogEntry,
  logBridgeEvents,
} from './log-events.js';
export { type BridgeLogger, createBridgeLogger } from './logger.js';
export {
  ASK_PERSON_TOOL,
  type JsonSchemaObject,
  type JsonSchemaProperty,
  MAIL_TOOL_NAMES,
  type MailTool,
  type MailToolAnnotations,
  type MailToolContext,
  type MailToolMailContext,
  type MailToolName,
  type MailToolResult,
  type MailToolsOptions,
  mailTools,
  type ProbeResult,
  probeGateway,
  runMailTool,
} from './mail-tools.js';
export { relaySubject } from './mail-turn.js';
export {
  decideGuardedCall,
  type GuardedCall,
  type PermissionFlowOptions,
  type PermissionOutcome,
} from './permission-flow.js';
export {
  type HostLogSink,
  type PluginBridge,
  type PluginBridgeOptions,
  type PluginHostBridge,
  type PluginLogEvent,
  runPluginBridge,
} from './plugin-bridge.js';
export * from './sandbox/index.js';
export { type SessionBinding, SessionBindings } from './session-bindings.js';
export { readSnapshotParts, type SnapshotReaders } from './snapshot.js';
export { CREDENTIAL_VARIABLES, dropCredentialVariables, turnProcessEnv } from './turn-env.js';
export { type AbandonResult, type CommitFn, TurnGate } from './turn-gate.js';
export { runTurnJob, type TurnIo, type TurnJob } from './turn-job.js';
export { type ActiveTurn, type GuardedCallInput, TurnRegistry } from './turn-registry.js';
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
export {
  type SayLine,
  type StartingAgent,
  sayStartProgress,
  startRefusal,
  terminalLines,
} from './terminal.js';
export { WITHDRAW_TIMEOUT_MS, withdrawalsSettled } from './withdraw.js';
