/**
 * The approval request a bridge posts when a guarded tool call needs a person (see SPEC P-1,
 * P-4, G-32): question and context texts, the approval words, and a stable relay key.
 */
import { clampRelayKey } from './relay-key.js';
import { DEFAULT_LOCALE, formatText, type Locale } from './texts/index.js';

/** The options of an approval mail, as the Gateway's decide route names them (P-4). */
export const APPROVAL_OPTIONS: readonly string[] = Object.freeze(['approve', 'always', 'deny']);

/** Longest tool input shown in the context, in characters. @default 4000 */
export const APPROVAL_INPUT_MAX_CHARS = 4_000;

/** Input of {@link buildApprovalRequest}. */
export interface ApprovalRequestInput {
  agentName: string;
  toolName: string;
  /** The tool's arguments as the platform reports them. */
  input: unknown;
  /** Gateway session id of the turn. */
  sessionId: string;
  /** The platform's session id (part of the relay key). */
  platformSessionId: string;
  /** The platform's id of this tool call (part of the relay key). */
  toolCallId: string;
  /**
   * The mail the turn handles: part of the relay key, so a host whose session and call ids repeat
   * (in-memory counters after a restart) never collides with an older question (G-32). @default none
   */
  mailId?: string;
  /** Working directory of the turn, shown to the person. @default '' */
  cwd?: string;
  /** @default 'en' */
  locale?: Locale;
  /**
   * The workspace sandbox as the bridge reported it (SPEC P-12: `verified`, `unverified: <why>`),
   * shown with the request so the person sees why they are asked. @default not shown
   */
  sandbox?: string;
}

/** A `POST /permission/request` body of kind `approval`. */
export interface ApprovalRequest {
  question: string;
  options: string[];
  context: string;
  session_id: string;
  relay_key: string;
  kind: 'approval';
}

function showInput(input: unknown): string {
  let text: string;
  try {
    text = typeof input === 'string' ? input : (JSON.stringify(input, null, 2) ?? String(input));
  } catch {
    text = String(input);
  }
  return text.length > APPROVAL_INPUT_MAX_CHARS ? `${text.slice(0, APPROVAL_INPUT_MAX_CHARS)}…` : text;
}

/**
 * Build the approval request of one guarded tool call (see SPEC P-1, P-4). The relay key is
 * `permission:<platformSessionId>:<toolCallId>`, prefixed with `<mailId>:` when given (clamped,
 * G-32): the same call asked twice is a `duplicate_relay`, which the bridge denies (P-5).
 *
 * @throws AgentMailError `AM_RELAY_KEY_INVALID` when `platformSessionId` or `toolCallId` is empty.
 * @example client.permissionRequest(buildApprovalRequest({ agentName: 'pi', toolName: 'bash', input: { command: 'ls' }, sessionId, platformSessionId, toolCallId }))
 */
export function buildApprovalRequest(input: ApprovalRequestInput): ApprovalRequest {
  const locale = input.locale ?? DEFAULT_LOCALE;
  const relayKey = clampRelayKey(
    input.platformSessionId.trim() && input.toolCallId.trim()
      ? `permission:${input.mailId ? `${input.mailId}:` : ''}${input.platformSessionId}:${input.toolCallId}`
      : '',
  );
  return {
    question: formatText('permission.ask.question', { agent: input.agentName, tool: input.toolName }, locale),
    options: [...APPROVAL_OPTIONS],
    context: [
      formatText(
        'permission.ask.context',
        { tool: input.toolName, input: showInput(input.input), cwd: input.cwd ?? '' },
        locale,
      ),
      ...(input.sandbox ? [formatText('permission.ask.sandbox', { status: input.sandbox }, locale)] : []),
    ].join('\n'),
    session_id: input.sessionId,
    relay_key: relayKey,
    kind: 'approval',
  };
}
