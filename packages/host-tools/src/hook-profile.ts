/**
 * The contract of a host whose tools and hooks are separate processes ({@link HostProfile}): how it
 * hands a hook its event on stdin and reads the decision from stdout, and the few places where
 * hosts' permission systems differ. Each bridge writes its host's profile (bridge-claude,
 * bridge-zcode `src/hook-profile.ts`) and builds its own `hook.js` calling `runHookMain(profile)`;
 * this package knows no host. Also the pieces of the Claude Code hooks contract other hosts reuse.
 *
 * Imports nothing but types: this module is bundled into the hook process.
 */
import type { Platform } from '@agentmail/shared-policy';

/** The hook events the runner handles. */
export type HookEventName = 'SessionStart' | 'PreToolUse' | 'PermissionRequest';

/** One hook event, as the runner needs it. */
export interface HookEvent {
  event: HookEventName;
  /** The host's session id. */
  sessionId: string;
  /** Working directory of the session or call. */
  cwd: string;
  /** Tool name as the host reports it (`Bash`, `mcp__plugin_agentmail_mail__send_mail`); '' for SessionStart. */
  toolName: string;
  /** The tool's input (shown to the person). */
  input: unknown;
  /** The host's id of the call; '' when the event has none (Claude Code's PermissionRequest). */
  toolCallId: string;
  /** Claude Code's id of the prompt the call belongs to, when given (scopes a call without an id). */
  promptId: string;
  /** The host's own permission mode of the session as the event names it (ZCode `build`, `plan`, …); '' when not given. */
  hostMode: string;
}

/** What the runner decided about one event. */
export type HookVerdict =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  /** No decision: the host goes on with its own rules and prompts (a person's session, P-5). */
  | { kind: 'none' };

/** What the hook process writes and how it exits. */
export interface HookOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** A host's hook contract. */
export interface HostProfile {
  /** The id the hook command names (`agentmail-hook <id>`). */
  id: string;
  /** The platform the bridge registers. */
  platform: Platform;
  /** The host's guarded tool names (its descriptor's `guardedTools`, SPEC P-3). */
  guardedTools: readonly string[];
  /** Human name for texts (`Claude Code`). */
  displayName: string;
  /**
   * Read the JSON the host wrote on stdin.
   * @throws HookInputError naming the field that is missing or of the wrong type.
   */
  readEvent(value: unknown): HookEvent;
  /** The host's answer for `verdict` on `event`. */
  write(event: HookEventName, verdict: HookVerdict): HookOutput;
  /**
   * True when the host refuses this call by its own mode whatever a hook answers (ZCode's `plan`
   * refuses side-effecting built-ins, and a PreToolUse `allow` does not lift a refusal): nobody is
   * asked about it, the host's refusal stands. @default never
   */
  hostRefuses?(event: HookEvent): boolean;
  /**
   * A PermissionRequest in a mail-driven run: `decide` it through the bridge as a guarded call, or
   * give `none` at once, where the host's own answer would win anyway (ZCode headless: its deny
   * broker races the hook) and asking a person would only mail a question nobody waits for.
   */
  mailDrivenPermissionRequest: 'decide' | 'none';
  /**
   * Without a bridge (a person's own session): `yield` (no decision: the host's own rules and
   * prompt, P-5), or `own-stream`: with the person's key and `AGENTMAIL_SESSION_ID` the hook asks
   * by mail itself and waits on its own event stream (G-22), else it yields too.
   */
  standalone: 'yield' | 'own-stream';
}

/** The hook's stdin is not what the host contract says (the message names the field). */
export class HookInputError extends Error {
  /** Stable code, see docs/errors.md. */
  readonly code = 'AM_HOOK_INPUT_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'HookInputError';
  }
}

/** The hook events a host may register the runner for. */
export const HOOK_EVENTS: ReadonlySet<string> = new Set<HookEventName>([
  'SessionStart',
  'PreToolUse',
  'PermissionRequest',
]);

/** True for a JSON object (not null, not an array). */
export function isHookObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The string field `name` of a hook's stdin object ('' when optional and absent).
 * @throws HookInputError naming the field when it is missing (required) or not a string.
 */
export function hookField(o: Record<string, unknown>, name: string, required: boolean): string {
  const v = o[name];
  if (typeof v === 'string') return v;
  if (v === undefined && !required) return '';
  throw new HookInputError(
    `hook input field "${name}": expected string, got ${v === undefined ? 'nothing' : Array.isArray(v) ? 'array' : typeof v}`,
  );
}

/**
 * Claude Code's hook answers: PreToolUse `hookSpecificOutput.permissionDecision` (`deny` blocks in
 * every mode, the model reads the reason; `allow` lifts the host's own ask); PermissionRequest
 * `hookSpecificOutput.decision.behavior`. No decision = exit 0 with empty stdout. SessionStart
 * never decides: its stdout would become model context, so the runner writes only stderr. ZCode
 * reads the same shapes (its `core/src/hooks/output.ts`).
 */
export function writeClaudeStyleAnswer(event: HookEventName, verdict: HookVerdict): HookOutput {
  if (verdict.kind === 'none' || event === 'SessionStart') return { stdout: '', stderr: '', exitCode: 0 };
  const output =
    event === 'PreToolUse'
      ? {
          hookEventName: event,
          permissionDecision: verdict.kind,
          ...(verdict.kind === 'deny' ? { permissionDecisionReason: verdict.reason } : {}),
        }
      : {
          hookEventName: event,
          decision:
            verdict.kind === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: verdict.reason },
        };
  return { stdout: `${JSON.stringify({ hookSpecificOutput: output })}\n`, stderr: '', exitCode: 0 };
}

/** Where a host's hook stdin puts each field of a {@link HookEvent} (its own JSON names). */
export interface HookStdinFields {
  event: string;
  sessionId: string;
  toolName: string;
  input: string;
  toolCallId: string;
  promptId: string;
  hostMode: string;
  /** The events whose stdin carries a call id (others get ''). */
  callIdOn: readonly HookEventName[];
}

/**
 * Read a host's hook stdin by its field names; `cwd` is `cwd` on every host so far.
 * @throws HookInputError naming the field that is missing or of the wrong type, or an event not handled.
 */
export function readHookStdin(value: unknown, f: HookStdinFields): HookEvent {
  if (!isHookObject(value)) throw new HookInputError('hook input: expected a JSON object on stdin');
  const event = hookField(value, f.event, true);
  if (!HOOK_EVENTS.has(event))
    throw new HookInputError(
      `hook input field "${f.event}": "${event}" is not handled; register the hook for ${[...HOOK_EVENTS].join(', ')}`,
    );
  const tool = event !== 'SessionStart';
  return {
    event: event as HookEventName,
    sessionId: hookField(value, f.sessionId, true),
    cwd: hookField(value, 'cwd', false),
    toolName: tool ? hookField(value, f.toolName, true) : '',
    input: value[f.input] ?? {},
    toolCallId: f.callIdOn.includes(event as HookEventName) ? hookField(value, f.toolCallId, true) : '',
    promptId: hookField(value, f.promptId, false),
    hostMode: hookField(value, f.hostMode, false),
  };
}

const CLAUDE_STYLE_FIELDS: HookStdinFields = {
  event: 'hook_event_name',
  sessionId: 'session_id',
  toolName: 'tool_name',
  input: 'tool_input',
  toolCallId: 'tool_use_id',
  promptId: 'prompt_id',
  hostMode: 'permission_mode',
  callIdOn: ['PreToolUse'],
};

/**
 * Claude Code's hook stdin (2.1.328): `{session_id, transcript_path, cwd, permission_mode,
 * hook_event_name, tool_name, tool_input, tool_use_id, prompt_id}`; PermissionRequest has no
 * `tool_use_id`, SessionStart no tool fields. A host following Claude Code's hooks contract reads
 * its events with this.
 * @throws HookInputError naming the field that is missing or of the wrong type.
 */
export function readClaudeStyleEvent(value: unknown): HookEvent {
  return readHookStdin(value, CLAUDE_STYLE_FIELDS);
}
