/**
 * @agentmail/shared-policy: every platform-independent AgentMail rule. Bridges import it;
 * no bridge copies its logic.
 */

export {
  type Address,
  ALIAS_BASE_MAX_LENGTH,
  ALIAS_FALLBACK_ID_LENGTH,
  ALIAS_MAX_LENGTH,
  ALIAS_MAX_SUFFIX,
  type AliasTaken,
  aliasBase,
  aliasCandidates,
  aliasFromSubject,
  formatAddress,
  isNormalizedPath,
  isValidAlias,
  NEW_SESSION,
  normalizeAbsolutePath,
  parseAddress,
  pickFreeAlias,
  replyAddress,
  type SessionAddressParts,
  selfAddress,
} from './addressing.js';
export { type ApprovalDecision, parseApproval } from './approval.js';
export {
  APPROVAL_INPUT_MAX_CHARS,
  APPROVAL_OPTIONS,
  type ApprovalRequest,
  type ApprovalRequestInput,
  buildApprovalRequest,
} from './approval-request.js';

export { normalizeAttachmentIds } from './attachment-ids.js';
export { backlogEvent } from './backlog-event.js';
// bridge-config
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
  type BridgeLogger,
  BridgeRuntime,
  type BridgeRuntimeConfig,
  FIRST_SSE_OPEN_WAIT_MS,
  type HeartbeatSnapshot,
  type MailRun,
  TurnLostError,
} from './bridge-runtime.js';
export {
  type BacklogDelivery,
  CATCH_UP_FETCH_LIMIT,
  CATCH_UP_MAX_PER_PASS,
  CatchUp,
  type CatchUpMail,
  type CatchUpOptions,
  type CatchUpPlan,
  type CatchUpResult,
  type CatchUpSkip,
  planCatchUp,
  SEEN_MAILS_CAPACITY,
  SeenMails,
} from './catch-up.js';
export {
  AgentMailError,
  type AgentMailErrorOptions,
  ERROR_CODES,
  type ErrorCode,
  hasErrorCode,
} from './errors.js';
export { ExplicitSendRecord, type ExplicitSendRecordOptions } from './explicit-sends.js';
export {
  buildFailureMail,
  FAILURE_CAUSE_MAX_CHARS,
  type FailureKind,
  type FailureMail,
  type FailureMailInput,
} from './failure-mail.js';
export {
  type CallOptions,
  type DownloadOptions,
  type DownloadResult,
  GATEWAY_TIMEOUT_MS,
  GATEWAY_TRANSFER_TIMEOUT_MS,
  GatewayClient,
  type GatewayClientOptions,
  GatewayHttpError,
  GatewayNetworkError,
  gatewayUrl,
  isPermanent,
  isTransient,
  type UploadOptions,
} from './gateway-client.js';
export { GrantStore, type GrantStoreOptions } from './grant-store.js';
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
  type MailTurnReport,
  relaySubject,
  runMailTurn,
  type SessionLocation,
  sendFailureMail,
  type TurnAttempt,
} from './mail-turn.js';
export {
  HOST_DEFAULT_LOG_LINE,
  MAX_ALLOWED_MODELS,
  type ModelAttempt,
  type ModelOrder,
  type ModelOrderInput,
  type ModelRef,
  type ModelSkip,
  modelAttemptOrder,
  splitModelKey,
} from './model-order.js';
export {
  decideNamingSync,
  NAMING_SYNC_TITLE_MAX_LENGTH,
  type NamingSyncDecision,
  type NamingSyncInput,
  type NamingSyncSkip,
  type NamingSyncState,
  namingFingerprint,
  namingStateAfterSync,
} from './naming-sync.js';
export {
  type DecisionSource,
  type DenialTextInput,
  denialText,
  EARLY_DECISION_TTL_MS,
  EARLY_DECISIONS_MAX,
  PendingPermissions,
  type PendingPermissionsOptions,
  type PermissionDecision,
  type PermissionDecisionInput,
  type WaitOptions,
} from './pending-permissions.js';
export {
  classifyPermissionFailure,
  isDuplicateRelay,
  type PermissionFailureDecision,
  type PermissionFailureOptions,
} from './permission-failure.js';
export {
  decideGuardedCall,
  type GuardedCall,
  type PermissionFlowOptions,
  type PermissionOutcome,
} from './permission-flow.js';
export {
  DEFAULT_PERMISSION_MODE,
  decideToolCall,
  GUARDED_TOOLS,
  isGuardedTool,
  normalizePermissionMode,
  type PermissionMode,
  type Platform,
  type ToolCallContext,
  type ToolCallDecision,
} from './permission-mode.js';
export {
  buildQuestionMail,
  mapQuestionAnswers,
  QUESTION_MAX_OPTIONS,
  type Question,
  type QuestionAnswer,
  type QuestionAnswerInput,
  type QuestionAnswers,
  type QuestionMail,
  type QuestionOption,
} from './questions.js';
export {
  REDELIVERY_ATTEMPTS,
  REDELIVERY_BACKOFF_MS,
  type RedeliverOptions,
  type RedeliverResult,
  redeliver,
} from './redelivery.js';
export { autoRelayKey, clampRelayKey, failureRelayKey, RELAY_KEY_MAX_BYTES } from './relay-key.js';
export {
  type AutoRelayDecision,
  type AutoRelayInput,
  type AutoRelayPlan,
  buildTurnPrompt,
  decideAutoRelay,
  type FinalPart,
  type HeadlineKind,
  isSameRecipient,
  type PlanTurnInput,
  planTurn,
  type TurnMail,
  type TurnPlan,
} from './relay-policy.js';
export {
  type RenderInboxOptions,
  renderAttachments,
  renderContacts,
  renderInbox,
  renderMail,
  renderParticipants,
  renderParty,
  renderSuggestions,
  renderThread,
} from './render.js';
export { SESSION_QUEUE_CONCURRENCY, SessionQueue, type SessionQueueOptions } from './session-queue.js';
export {
  type SettleOptions,
  type SettleResult,
  STOP_GRACE_MS,
  settleWithTimeout,
  TURN_TIMEOUT_MS,
} from './settle.js';
export {
  SSE_HEALTHY_AFTER_MS,
  SSE_IDLE_TIMEOUT_MS,
  SSE_INITIAL_BACKOFF_MS,
  SSE_MAX_BACKOFF_MS,
  SseClient,
  type SseClientOptions,
  type SseOpenInfo,
  type SseSleep,
  sseBackoffMs,
} from './sse-client.js';
export {
  catalogue,
  DEFAULT_LOCALE,
  formatText,
  type Locale,
  resolveLocale,
  type TextKey,
  type TextParams,
} from './texts/index.js';
export {
  fallbackDirName,
  resolveWorkspace,
  type WorkspaceFallbackReason,
  type WorkspaceInput,
  type WorkspaceResolution,
} from './workspace.js';
