/**
 * `@agentmail/testkit/conformance`: the platform-neutral conformance scenarios every bridge must
 * pass, and `conformanceSuite(adapter)` registering them as vitest tests. A separate entry point:
 * it imports vitest, the harness (`@agentmail/testkit`) does not.
 */

export { type HostDescriptorSuiteOptions, hostDescriptorSuite } from './host-descriptor.js';
export { agentKeyOutOfShellReach, agentKeyStaysInBridge } from './host-env.js';
export type { ConformanceMeta } from './meta.js';
export { runDiesWithDriver, runEndsWithItsTurn } from './run-lifetime.js';
export {
  agentMailIsNotRelayed,
  allModelsFailSendsFailureMail,
  alwaysApprovalIsRemembered,
  attachmentRoundTrip,
  backlogAfterRestart,
  badServerLeavesConnection,
  CONFORMANCE_QUESTION_TIMEOUT_MS,
  CONFORMANCE_SCENARIOS,
  type ConformanceScenario,
  catchUpSkipsMailTakenFromStream,
  guardedToolDeniedWithNote,
  guardedToolRunsAfterApproval,
  heartbeatShowsAgent,
  personTaskGetsOneThreadedReply,
  planModeRefusesWithoutAsking,
  questionsReachThePerson,
  restartDoesNotRerunAnsweredMail,
  shutdownWhileAskingRunsNothing,
  sseCutLosesNoEvent,
  turnTimeoutSendsOneFailureMail,
} from './scenarios.js';
export {
  answerAtOnce,
  CONFORMANCE_LOCALE,
  CONFORMANCE_MODELS,
  CONFORMANCE_STEP_TIMEOUT_MS,
  CONFORMANCE_TURN_TIMEOUT_MS,
  mailIdOf,
  mailToolCall,
  marker,
  promptOf,
  readFileCall,
  readMailThenAnswer,
  shellCall,
  shellThenAnswer,
  TITLE_SCENARIO,
  textPattern,
  toolResultsSeen,
  turnStart,
  turnStarts,
  unexpectedResult,
  uploadedIdOf,
  within,
} from './script.js';
export {
  CONFORMANCE_MAX_CONCURRENCY,
  CONFORMANCE_TEST_TIMEOUT_MS,
  type ConformanceOptions,
  conformanceSuite,
  fileTestbed,
  runConformanceScenario,
  startConformanceStack,
} from './suite.js';
