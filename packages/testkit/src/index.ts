// Bench helpers (`pnpm bench` scripts of the bridge packages)
export {
  type BenchMain,
  benchReport,
  formatMegabytes,
  formatMs,
  loadAverage,
  loggedEventTime,
  type MailTurnTiming,
  markdownTable,
  peakRssBytes,
  runBench,
  runStackBench,
  type StackBench,
  type StackRef,
  timeMailTurn,
} from './bench.js';
// Scripted model server
export { TESTKIT_ERROR_CODES, TestkitError, type TestkitErrorCode } from './errors.js';
// E2E harness
export { AgentMailbox, type AwaitAgentMailOptions } from './harness/agent-mailbox.js';
export type { ApiTarget, Download, FileSpec } from './harness/api.js';
export {
  askPersonQuestions,
  BRIDGE_READY_TIMEOUT_MS,
  type BridgeEnv,
  type BridgeQuestionTool,
  type BridgeSettings,
  type BridgeToolNames,
  type HostHarness,
  type NeutralQuestion,
  QUESTION_TIMEOUT_ENV,
  TURN_TIMEOUT_ENV,
} from './harness/bridge.js';
export {
  BUILD_CACHE_MAX_AGE_MS,
  type CachedBuildOptions,
  cachedBuild,
  workspaceSourceHash,
} from './harness/build-cache.js';
export { type EventCheck, EventLog } from './harness/event-log.js';
export { GATEWAY_JS_ENV, gatewayCliPath, gatewayPackageRoot } from './harness/gateway-build.js';
export {
  type CutResult,
  type EventFrame,
  type EventStreamRecord,
  GatewayProxy,
  type HeldRequest,
} from './harness/gateway-proxy.js';
export { type ScriptedKitBridgeOptions, scriptedKitBridge } from './harness/kit-bridge.js';
export { type ModelView, ModelViews, type ScriptedModel } from './harness/model-view.js';
export {
  type AwaitMailOptions,
  type AwaitPermissionOptions,
  DEFAULT_AWAIT_TIMEOUT_MS,
  type Decision,
  PersonClient,
  type SendOptions,
  type SentMail,
} from './harness/person.js';
export {
  PERSON_EVENTS_MAX_RECONNECTS,
  type PersonEvent,
  PersonEvents,
} from './harness/person-events.js';
export {
  cleanEnv,
  ManagedProcess,
  PROCESS_LOG_MAX_LINES,
  PROCESS_STOP_GRACE_MS,
  type ProcessExit,
  VERBOSE_ENV,
} from './harness/processes.js';
export { type Removable, type SharedBuild, sharedBuild } from './harness/shared-build.js';
export {
  type AgentIdentity,
  DEFAULT_MODEL_PROVIDER,
  GATEWAY_START_TIMEOUT_MS,
  type LaneOptions,
  type PersonRef,
  Stack,
  type StackOptions,
  startStack,
} from './harness/stack.js';
export { runOnTerminal, type TerminalRun } from './harness/terminal.js';
export { startTestbed, Testbed, type TestbedOptions } from './harness/testbed.js';
export {
  DEFAULT_CHUNK_SIZE_CHARS,
  DEFAULT_WAIT_TIMEOUT_MS,
  JOURNAL_PATH,
  MAX_REQUEST_BODY_BYTES,
  ModelServer,
  type ModelServerOptions,
  type RequestFilter,
  startModelServer,
} from './model-server.js';
export { DEFAULT_MODEL_ID } from './reply-writer.js';
export {
  type ChatRequestBody,
  type ChatRequestMessage,
  chatRequestBodySchema,
  type RecordedRequest,
  type RecordedResponse,
  type RequestEnd,
  type ToolResultView,
} from './request.js';
export { type ModelServerReadyLine, runModelServerCli } from './run-model-server-cli.js';
export {
  type ErrorReply,
  type HangReply,
  matchesRequest,
  type NoFinishReasonReply,
  type RequestMatch,
  type RequestPredicate,
  type Scenario,
  type ScenarioReply,
  type TextPattern,
  type TextReply,
  type ToolCallSpec,
  type ToolCallsReply,
  type UsageOverride,
} from './scenario.js';
export {
  loadScenarioFile,
  parseScenarioFile,
  type ScenarioFile,
  scenarioFileSchema,
} from './scenario-file.js';
