/**
 * The adapter contract (docs/BRIDGE-CONTRACT.md): what a bridge implements for its host. The kit
 * ({@link createBridge}) does everything else — settings, the connection loop, catch-up, queues,
 * timeouts, redelivery, where a turn runs, the prompt, the model order, bindings, failure mails,
 * the relay, naming sync, the permission flow.
 */
import type { HeartbeatRequest, NewMailEvent } from '@agentmail/protocol';
import type { FinalPart, ModelRef, Platform } from '@agentmail/shared-policy';
import type { MailToolContext } from './mail-tools.js';
import type { SandboxPolicy } from './sandbox/policy.js';
import type { ActiveTurn } from './turn-registry.js';

/** A platform session by id, with the host's own locator when an id is not enough (pi: a file). */
export interface PlatformSessionRef {
  platformSessionId: string;
  locator?: string;
}

/** What the host knows of a platform session it found (B-3, B-4). */
export interface FoundSession {
  /** Its working directory, if the host records one (wins over the address path, B-3). */
  cwd?: string;
}

/** A model resolved from the admin's order (B-8): its key and its parts (split at the first `/`). */
export interface AttemptModel extends ModelRef {
  key: string;
}

/**
 * One attempt the kit asks the host to run (B-4, B-8):
 * - `resume`: continue `session` (a bound mail session or an adopted one) with its own model —
 *   never another one (`model` is undefined; a host that must name the model reads it from the session);
 * - `new`: create a fresh platform session with `model` (undefined: the host's own default, which
 *   the kit already reported loudly as not chosen by the platform). Report the created session
 *   with {@link AttemptContext.sessionCreated} as soon as it exists.
 */
export interface Attempt {
  /** 0-based index in this turn. */
  index: number;
  kind: 'resume' | 'new';
  model?: AttemptModel;
  /** The session to continue (`resume` only). */
  session?: PlatformSessionRef;
  /** The session is one a person opened and the Gateway adopted (G-37): never renamed by us. */
  adopted: boolean;
}

/** What the kit gives one attempt. */
export interface AttemptContext {
  mail: NewMailEvent;
  /** The turn prompt (B-5, B-6). */
  prompt: string;
  /** Working directory (B-3). */
  cwd: string;
  /** Aborted on turn timeout (`'timeout'`) or shutdown (`'shutdown'`): stop the host's turn. */
  signal: AbortSignal;
  /** Context of the mail tools; `client` is live (read it per call: B-18 may switch it). */
  toolContext: MailToolContext;
  /** The running turn: the permission seam (`decide`), the explicit-send record, its token. */
  turn: ActiveTurn;
  /**
   * Report the platform session created for a `new` attempt: the kit binds it to the mail session
   * (B-4) and stores `name` (the name the bridge gave it, e.g. the subject) as the naming baseline,
   * so only a later rename is synced (B-11). Call it once, right after creation.
   */
  sessionCreated(session: PlatformSessionRef & { name?: string }): Promise<void>;
}

/**
 * The host's report of one attempt, from the host's own asynchronous outcome signal (B-7), never
 * from "the call returned". Fields the host does not know may be left out: the kit fills them.
 */
export interface AttemptOutcome {
  ok: boolean;
  /** The host's own words when `!ok`. */
  cause?: string;
  /** This turn's final assistant message parts (B-10: only text parts are relayed). */
  finalParts?: FinalPart[];
  /** `provider/model` actually used. @default the attempt's model */
  model?: string;
  /** The platform session the attempt ran in. @default the resumed or created one */
  platformSessionId?: string;
  /** Id of the session's last entry after the turn: part of the relay key (B-10). @default a key from the mail id */
  lastEntryId?: string;
  /** The session's name after the turn (B-11 naming sync). */
  sessionName?: string;
  /**
   * The attempt failed for a reason no other model can fix (the bridge is not set up for this
   * working directory, e.g. the permission seam is missing there, P-8): no further attempt, and
   * the failure mail says so (`bridge_setup`).
   */
  setupProblem?: boolean;
}

/**
 * The turn side of a host: open sessions and run attempts. In-process bridges give it to
 * {@link createBridge}; a bridge whose turns run in a child process (pi) gives it to
 * `runTurnJob` in that child.
 */
export interface TurnAdapter {
  platform: Platform;
  /**
   * The host's guarded tool names (its descriptor's `guardedTools`, SPEC P-3), for the calls its
   * seam hands to `ActiveTurn.decide`. @default every tool is guarded (fail closed)
   */
  guardedTools?: readonly string[];
  /**
   * Find a platform session (B-4): a bound mail session or an adopted one. `undefined` = gone.
   * A throw counts as gone for an adopted session (the turn fails `session_missing`), as a failed
   * turn otherwise.
   */
  findSession(session: PlatformSessionRef, how: { adopted: boolean }): Promise<FoundSession | undefined>;
  /** Run one attempt and report from the host's asynchronous outcome (B-7). A throw is a failed attempt. */
  runAttempt(attempt: Attempt, ctx: AttemptContext): Promise<AttemptOutcome>;
  /** `provider/model` keys the host can run now; undefined = unreadable (B-8 skip rule not applied). */
  catalogue?(): Promise<readonly string[] | undefined>;
  /** B-8: a failed attempt's session before the next model gets a fresh one (it is also set aside). */
  disposeSession?(session: PlatformSessionRef): Promise<void>;
  /**
   * A mail session that has no stored binding but that the host can still find (state written
   * before bindings existed): the kit binds it and resumes it.
   */
  legacyBinding?(sessionId: string): Promise<PlatformSessionRef | undefined>;
}

/** The host's part of every heartbeat (G-25): omit what cannot be read. */
export interface HostSnapshot {
  /** Every platform session the host has (the kit drops its own mail sessions, G-37, and clamps to 200). */
  sessions?: HeartbeatRequest['sessions'];
  /** The host's model catalogue (the kit clamps to 300). */
  models?: HeartbeatRequest['models'];
  /** P-8: `native` only once the permission seam is verified installed. */
  mode_enforcement: 'native' | 'advisory';
  mode_enforcement_reason?: string;
}

/**
 * How a host's turns can be sandboxed (SPEC P-1, P-12): the policy of a turn in `workspace` (what
 * else it may write, what stays read-only, what is hidden besides the kit's defaults) and the
 * tools it then confines (those run unasked in `workspace` mode once verified); or why its tools
 * cannot be wrapped (reported as `unverified: <why>`).
 */
export type HostSandbox =
  | { policy(workspace: string): SandboxPolicy; confines: readonly string[] }
  | { unsupported: string };
