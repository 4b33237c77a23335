/** The workspace sandbox (SPEC P-1, P-12): bubblewrap policy, runner and start-time self-check. */
export {
  BWRAP_ENV,
  bwrapArgs,
  DEFAULT_HIDDEN,
  findBubblewrap,
  type HostFacts,
  hostFacts,
  isExecutableFile,
  pathSockets,
  type SandboxPolicy,
  unsandboxableWorkspace,
} from './policy.js';
export { type SandboxExecOptions, sandboxExec, sandboxRun } from './run.js';
export {
  type BwrapArgsFor,
  bridgeSecrets,
  type Sandbox,
  type SandboxState,
  sandboxArgs,
  sandboxRefusal,
  sandboxStatus,
  type TurnSandbox,
  turnSandbox,
} from './sandbox.js';
export {
  CANARIES,
  type CanaryId,
  type CanaryResult,
  type SandboxCheck,
  type VerifySandboxOptions,
  verifySandbox,
} from './verify.js';
