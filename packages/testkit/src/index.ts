// Scripted model server
export { TESTKIT_ERROR_CODES, TestkitError, type TestkitErrorCode } from './errors.js';
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
