/**
 * `@agentmail/host-tools/driver`: what every driver of a headless host CLI writes the same way —
 * one run of the CLI (`runHostCli`: process group, line reading, TERM → KILL, settle always),
 * the run's environment without the agent key (`hostRunEnv`, SPEC B-21), the setup check's gate
 * (`SetupGate`, P-8), the bridge over both (`createDriverBridge`) and the daemon's main
 * (`runDriverMain`). Used by `agentmail-claude` and
 * `agentmail-zcode`.
 *
 * @module
 */

export { createDriverBridge, type DriverBridgeOptions } from './driver-bridge.js';
export { absolutePathSetting, checkPluginDir, configInvalid, type PluginDirCheck } from './driver-config.js';
export { type DriverBridge, type DriverMainOptions, runDriverMain } from './driver-main.js';
export {
  HOST_CLI_DRAIN_MS,
  HOST_CLI_KILL_GRACE_MS,
  HOST_CLI_STDERR_TAIL_LINES,
  type HostCliRunOptions,
  type HostCliRunReport,
  type HostRunVars,
  hostRunEnv,
  hostRunsDir,
  type LeftoverRun,
  parseJsonLine,
  runHostCli,
  stderrSummary,
  sweepHostRuns,
} from './host-cli.js';
export {
  type DriverEvent,
  enforcementEvent,
  enforcementOf,
  reportingSetupGate,
  type SetupCheckResult,
  SetupGate,
  type SetupGateOptions,
  selfCheckEvent,
} from './setup-gate.js';
