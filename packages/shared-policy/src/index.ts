/**
 * @agentmail/shared-policy, root entry: every platform-independent AgentMail rule that needs no
 * I/O (alias making, relay policy and keys, model order, permissions, catch-up planning, turn
 * helpers, renderers, texts). Pure and browser-safe: no Node built-in, no network, no file system
 * (a test bundles it for the browser). I/O lives in `/client` (the Gateway and SSE clients) and
 * in the package `@agentmail/bridge-kit` (the bridge kit, on top of this one).
 */

export {
  ALIAS_BASE_MAX_LENGTH,
  ALIAS_FALLBACK_ID_LENGTH,
  ALIAS_MAX_SUFFIX,
  type AliasTaken,
  aliasBase,
  aliasCandidates,
  aliasFromSubject,
  pickFreeAlias,
} from './alias.js';
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
export { bridgeDataDir, dataDirVariable, type SettingSource } from './data-dir.js';
export {
  AgentMailError,
  type AgentMailErrorOptions,
  ERROR_CODES,
  type ErrorCode,
  hasErrorCode,
  messageOf,
} from './errors.js';
export {
  buildFailureMail,
  FAILURE_CAUSE_MAX_CHARS,
  type FailureKind,
  type FailureMail,
  type FailureMailInput,
} from './failure-mail.js';
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
  type UnclaimedDecision,
  type WaitOptions,
} from './pending-permissions.js';
export {
  classifyPermissionFailure,
  isDuplicateRelay,
  type PermissionFailureDecision,
  type PermissionFailureOptions,
} from './permission-failure.js';
export {
  DEFAULT_PERMISSION_MODE,
  decideToolCall,
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
export {
  autoRelayKey,
  clampRelayKey,
  FAILURE_RELAY_KEY_PREFIX,
  failureRelayKey,
  mailRelayKey,
  RELAY_KEY_MAX_BYTES,
} from './relay-key.js';
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
  type BodyPage,
  MAIL_PAGE_CHARS,
  MAIL_PAGE_MAX_CHARS,
  type RenderInboxOptions,
  renderAttachments,
  renderContacts,
  renderInbox,
  renderMail,
  renderParticipants,
  renderParty,
  renderSuggestions,
  renderThread,
  sessionWords,
  THREAD_BODY_CHARS,
} from './render.js';
export { endedReasonText } from './request-ended.js';
export { SESSION_QUEUE_CONCURRENCY, SessionQueue, type SessionQueueOptions } from './session-queue.js';
export {
  type SettleOptions,
  type SettleResult,
  STOP_GRACE_MS,
  settleWithTimeout,
  TURN_TIMEOUT_MS,
} from './settle.js';
export { DERIVED_SUBJECT_MAX_CHARS, normalizeSubject, subjectForSend } from './subject.js';
export { catalogue, formatText, type TextKey, type TextParams } from './texts/index.js';
export { DEFAULT_LOCALE, type Locale, resolveLocale } from './texts/locale.js';
