/** The workspace sandbox (SPEC P-1, P-12): bubblewrap policy, runner and start-time self-check. */
export {
  bwrapArgs,
  DEFAULT_HIDDEN,
  findBubblewrap,
  type HostFacts,
  hostFacts,
  pathSockets,
  type SandboxPolicy,
} from './policy.js';
export { type SandboxExecOptions, sandboxExec, sandboxRun } from './run.js';
export { type BwrapArgsFor, type Sandbox, type SandboxState, sandboxArgs, sandboxStatus } from './sandbox.js';
export {
  CANARIES,
  type CanaryId,
  type CanaryResult,
  type SandboxCheck,
  type VerifySandboxOptions,
  verifySandbox,
} from './verify.js';
