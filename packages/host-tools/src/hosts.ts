/**
 * The hosts whose tools and hooks are separate processes, as one table: how each one hands a
 * hook its event on stdin and reads the decision from stdout. Everything else in this package
 * is host-neutral. Adding a host (ZCode) is one more entry: ZCode sends the Claude-style aliases
 * (`tool_name`, `tool_input`, `tool_use_id`, `session_id`) next to its own camelCase fields and
 * reads the same `hookSpecificOutput` shapes (research/zcode.md §4), so its entry differs in the
 * platform name and in what it does without a bridge.
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
  /** The platform the bridge registers (its guarded tool names, SPEC P-3). */
  platform: Platform;
  /** Human name for texts (`Claude Code`). */
  displayName: string;
  /**
   * Read the JSON the host wrote on stdin.
   * @throws HookInputError naming the field that is missing or of the wrong type.
   */
  readEvent(value: unknown): HookEvent;
  /** The host's answer for `verdict` on `event`. */
  write(event: HookEventName, verdict: HookVerdict): HookOutput;
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

const EVENTS: ReadonlySet<string> = new Set<HookEventName>([
  'SessionStart',
  'PreToolUse',
  'PermissionRequest',
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function field(o: Record<string, unknown>, name: string, required: boolean): string {
  const v = o[name];
  if (typeof v === 'string') return v;
  if (v === undefined && !required) return '';
  throw new HookInputError(
    `hook input field "${name}": expected string, got ${v === undefined ? 'nothing' : Array.isArray(v) ? 'array' : typeof v}`,
  );
}

/**
 * Claude Code's hook stdin (2.1.328): `{session_id, transcript_path, cwd, permission_mode,
 * hook_event_name, tool_name, tool_input, tool_use_id, prompt_id}`; PermissionRequest has no
 * `tool_use_id`, SessionStart no tool fields.
 */
function readClaudeStyleEvent(value: unknown): HookEvent {
  if (!isObject(value)) throw new HookInputError('hook input: expected a JSON object on stdin');
  const event = field(value, 'hook_event_name', true);
  if (!EVENTS.has(event))
    throw new HookInputError(
      `hook input field "hook_event_name": "${event}" is not handled; register the hook for ${[...EVENTS].join(', ')}`,
    );
  const tool = event !== 'SessionStart';
  return {
    event: event as HookEventName,
    sessionId: field(value, 'session_id', true),
    cwd: field(value, 'cwd', false),
    toolName: tool ? field(value, 'tool_name', true) : '',
    input: value.tool_input ?? {},
    toolCallId: event === 'PreToolUse' ? field(value, 'tool_use_id', true) : '',
    promptId: field(value, 'prompt_id', false),
  };
}

/**
 * Claude Code's hook answers: PreToolUse `hookSpecificOutput.permissionDecision` (`deny` blocks in
 * every mode, the model reads the reason; `allow` lifts the host's own ask); PermissionRequest
 * `hookSpecificOutput.decision.behavior`. No decision = exit 0 with empty stdout. SessionStart
 * never decides: its stdout would become model context, so the runner writes only stderr.
 */
function writeClaudeStyle(event: HookEventName, verdict: HookVerdict): HookOutput {
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

/** Claude Code (`@anthropic-ai/claude-code`, checked on 2.1.328). */
export const CLAUDE_CODE_HOST: HostProfile = {
  id: 'claude-code',
  platform: 'claude-code',
  displayName: 'Claude Code',
  readEvent: readClaudeStyleEvent,
  write: writeClaudeStyle,
};

/** Every host the runner knows, by id. */
export const HOSTS: Readonly<Record<string, HostProfile>> = Object.freeze({
  [CLAUDE_CODE_HOST.id]: CLAUDE_CODE_HOST,
});

/** The host named `id`, or undefined. */
export function hostProfile(id: string): HostProfile | undefined {
  return Object.hasOwn(HOSTS, id) ? HOSTS[id] : undefined;
}
