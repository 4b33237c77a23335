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
