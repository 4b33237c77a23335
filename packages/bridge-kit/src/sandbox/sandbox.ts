/**
 * A sandbox as a turn uses it (SPEC P-1, P-12): bubblewrap and the policy of the turn, and the
 * state the start-time self-check left (verified, or why not).
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  bwrapArgs,
  type HostFacts,
  hiddenPlaces,
  hostFacts,
  type SandboxPolicy,
  unsandboxableWorkspace,
} from './policy.js';

/** bubblewrap and the policy a turn runs under. */
export interface Sandbox {
  /** The `bwrap` executable ({@link findBubblewrap}). */
  bwrap: string;
  policy: SandboxPolicy;
}

/** The bubblewrap arguments of a policy; tests give a weakened one to see a canary turn red. */
export type BwrapArgsFor = (policy: SandboxPolicy, facts: HostFacts) => string[];

/**
 * What the start-time self-check found (P-12): `verified` only when every canary held; else the
 * reason (`bubblewrap not found on PATH`, the first canary that failed, …). Reported in the
 * heartbeat as `sandbox: verified` or `sandbox: unverified: <why>`.
 */
export type SandboxState = { verified: true } | { verified: false; reason: string };

/** The heartbeat's words for a state: `verified` or `unverified: <why>`. */
export function sandboxStatus(state: SandboxState): string {
  return state.verified ? 'verified' : `unverified: ${state.reason}`;
}

/**
 * The bubblewrap arguments of a run of `sandbox` in `cwd` (below the workspace; default the
 * workspace), with the host's facts read now (its sockets change).
 * @throws Error when `cwd` is outside the workspace or a policy path is relative.
 */
export function sandboxArgs(sandbox: Sandbox, cwd?: string, argsFor: BwrapArgsFor = bwrapArgs): string[] {
  const args = argsFor(sandbox.policy, hostFacts());
  if (cwd === undefined) return args;
  const rel = relative(resolve(sandbox.policy.workspace), resolve(cwd));
  if (!isAbsolute(cwd) || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new Error(
      `sandbox: the working directory ${cwd} is outside the workspace ${sandbox.policy.workspace}`,
    );
  const at = args.lastIndexOf('--chdir');
  return at === -1
    ? [...args, '--chdir', cwd]
    : [...args.slice(0, at), '--chdir', cwd, ...args.slice(at + 2)];
}

/**
 * The verified sandbox as a job carries it (plain JSON, it crosses into a turn's process):
 * bubblewrap, the tools the host confines (they run unasked in `workspace` mode, P-1) and what
 * the bridge hides besides the host's policy (its data directory, the agent key's places).
 */
export interface TurnSandbox {
  bwrap: string;
  confines: string[];
  hidden: string[];
}

/**
 * The sandbox of one turn: the host's policy for the turn's workspace with the bridge's own
 * hidden places added. The self-check composes its policy with this very function.
 */
export function turnSandbox(sandbox: TurnSandbox, hostPolicy: SandboxPolicy): Sandbox {
  return {
    bwrap: sandbox.bwrap,
    policy: { ...hostPolicy, hidden: [...(hostPolicy.hidden ?? []), ...sandbox.hidden] },
  };
}

/**
 * What a bridge hides from its sandboxed turns besides the host's policy: its data directory
 * (grants, bindings, the lock, the turn RPC socket; a host re-binds the session state it needs)
 * and the places its agent key may come from (`AGENTMAIL_AGENT_KEY_FILE`, systemd's credentials).
 */
export function bridgeSecrets(
  config: { dataDir: string },
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const places = [env.AGENTMAIL_AGENT_KEY_FILE, env.CREDENTIALS_DIRECTORY]
    .map((p) => p?.trim() ?? '')
    .filter((p) => isAbsolute(p));
  return [config.dataDir, ...places];
}

/**
 * Why the verified sandbox cannot hold a turn in `workspace` (see {@link unsandboxableWorkspace}:
 * `/`, the home directory or a hidden place inside it), or undefined. Such a turn runs its
 * guarded tools the usual way: asked per call (P-1).
 */
export function sandboxRefusal(
  sandbox: TurnSandbox,
  workspace: string,
  facts: HostFacts = hostFacts(),
): string | undefined {
  return unsandboxableWorkspace(workspace, [...hiddenPlaces(facts), ...sandbox.hidden], facts);
}
