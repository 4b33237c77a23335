/**
 * The shapes of the mail tools (SPEC B-17): their names, parameters, annotations, results and the
 * context a bridge gives each run. The tools themselves are in the group modules beside this one.
 */
import type { RegisterRequest } from '@agentmail/protocol';
import type { Locale, Question } from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import type { QuestionOutcome } from '../question-flow.js';

/** The mail tools, in this order, on every platform (see SPEC B-17). */
export const MAIL_TOOL_NAMES = [
  'read_inbox',
  'read_mail',
  'read_thread',
  'send_mail',
  'forward_mail',
  'upload_attachment',
  'download_attachment',
  'suggest_address',
  'list_contacts',
  'session_participants',
  'connect_to_server',
] as const;

/**
 * The question tool the mail tools offer on a host without a question seam of its own (SPEC
 * P-10); a host with one (DSH's `ask_user_question`) leaves it out (`mailTools(locale, { askPerson: false })`).
 */
export const ASK_PERSON_TOOL = 'ask_person';

/** Name of a mail tool: one of {@link MAIL_TOOL_NAMES} or {@link ASK_PERSON_TOOL}. */
export type MailToolName = (typeof MAIL_TOOL_NAMES)[number] | typeof ASK_PERSON_TOOL;

/** MCP-style behaviour hints (ZCode's plan mode needs them, see SPEC §7). */
export interface MailToolAnnotations {
  /** The tool changes nothing. */
  readOnlyHint: boolean;
  /** The tool may destroy or overwrite data (only meaningful when not read-only). */
  destructiveHint: boolean;
  /** Calling twice with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** The tool reaches parties outside this agent and its Gateway account (people, other agents, servers). */
  openWorldHint: boolean;
}

/** JSON Schema of one tool parameter (the subset the tools use). */
export interface JsonSchemaProperty {
  type: 'string' | 'integer' | 'boolean' | 'array';
  description: string;
  enum?: readonly string[];
  items?: { type: 'string' };
  minimum?: number;
  maximum?: number;
}

/** JSON Schema of a tool's parameters: an object, no extra properties. */
export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, JsonSchemaProperty>;
  required: string[];
  additionalProperties: false;
}

/** What a tool run returns: the text the model reads, an error flag, and structured details. */
export interface MailToolResult {
  text: string;
  /** true when the call failed; `text` says why and what to do. */
  isError?: boolean;
  /** The Gateway answer (or error code/status/body) for hosts that show structured output. */
  details?: unknown;
}

/** The mail or session the current turn works on (from the `new_mail` event, G-20). */
export interface MailToolMailContext {
  mail_id?: string;
  /**
   * The recipient's session of the current turn; `send_mail` and `forward_mail` write from it
   * (`from_session_id`), so the mail spends that session's budget and joins its thread.
   */
  session_id?: string;
  reply_address?: string;
  self_address?: string;
}

/** What a bridge gives each tool run. */
export interface MailToolContext {
  /** The live Gateway client. */
  client: GatewayClient;
  /** The current mail/session, for defaults (read_thread, session_participants). */
  mail?: MailToolMailContext;
  /**
   * Records an explicit send target (to and each cc) so the auto relay does not mail the same
   * party twice (see SPEC B-10). A failure is reported in `details`, the send still counts.
   */
  recordExplicitSend?: (target: string) => void | Promise<void>;
  /**
   * Switches the live client and the SSE stream to a Gateway that already answered (see
   * SPEC B-18). Called only after {@link probeGateway} succeeded; if it throws, the bridge must
   * have kept the old configuration.
   */
  reconnect?: (config: { url: string; key: string; client: GatewayClient }) => void | Promise<void>;
  /** Name and platform to register with when probing a new Gateway. Without it a heartbeat probes. */
  identity?: RegisterRequest;
  /** Locale of the rendered text. @default the locale the tools were built with */
  locale?: Locale;
  /** Aborts the Gateway calls of the run. */
  signal?: AbortSignal;
  /**
   * The turn's question seam (SPEC P-9, P-10): one question mail, the answer waited for within the
   * turn's budget; `signal` is the tool call's own cancellation. Never throws. Absent outside a
   * mail-driven turn (a person's own session asks in the session itself).
   */
  ask?: (questions: readonly Question[], signal?: AbortSignal) => Promise<QuestionOutcome>;
}

/** One platform-neutral mail tool (see SPEC B-17). Bridges adapt it to their host's tool API. */
export interface MailTool {
  name: MailToolName;
  /** From the text catalogue (`tools.<name>.description`). */
  description: string;
  parameters: JsonSchemaObject;
  annotations: MailToolAnnotations;
  /**
   * The call waits for a person (minutes, SPEC P-10): a host process that relays it to the bridge
   * sets no time limit of its own (the bridge's question timeout and the turn's end bound it).
   */
  waitsForPerson?: true;
  /**
   * Validate `args` and run the tool. Never throws: invalid arguments (`AM_TOOL_ARGS_INVALID`)
   * and failures come back as `{ isError: true, text }` naming the field or cause and the fix.
   */
  run(args: unknown, ctx: MailToolContext): Promise<MailToolResult>;
}
