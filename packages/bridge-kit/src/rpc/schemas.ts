/**
 * The turn RPC's params and results as zod schemas: the server validates every request's params
 * with them (G-10 messages that name the field) and every handler's result before it leaves the
 * bridge. The client does not load zod (startup cost of a hook process); it imports only the
 * types from here and checks answers with small hand-written guards.
 *
 * @module
 */
import { PermissionMode } from '@agentmail/protocol';
import type { Locale, Question, QuestionAnswers } from '@agentmail/shared-policy';
import { z } from 'zod';

const LOCALES = ['en', 'zh-CN'] as const satisfies readonly Locale[];

/**
 * What a host process may know about its turn (`context`): ids and addresses of the mail that
 * started it, the session's permission mode (already normalised, SPEC P-2), the working
 * directory, who the agent is, the platform and the locale of texts. Never a secret: the agent
 * key stays in the bridge (SPEC B-21). Empty strings mean "none" (e.g. no self address).
 */
export const TurnContextView = z.object({
  /** Gateway id of the mail this turn answers. */
  mailId: z.string(),
  /** Gateway session id of the turn (`from_session_id` of the turn's sends). */
  sessionId: z.string(),
  /** Where a reply goes (SPEC G-6). */
  replyAddress: z.string(),
  /** The agent's own address in this session (SPEC G-6). */
  selfAddress: z.string(),
  permissionMode: PermissionMode,
  /** Absolute working directory of the turn (SPEC B-3). */
  cwd: z.string(),
  agentName: z.string(),
  /** Platform name as registered (`zcode`, `claude-code`, …). */
  platform: z.string(),
  locale: z.enum(LOCALES),
});
/** See the schema {@link TurnContextView}. */
export type TurnContextView = z.infer<typeof TurnContextView>;

/** `context` params: none. */
export const ContextParams = z.strictObject({});

/** `callTool` params: a mail tool's name (SPEC B-17) and its arguments as the model gave them. */
export const CallToolParams = z.strictObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).default({}),
});
/** Params of `callTool` as a handler receives them. */
export type CallToolParams = z.output<typeof CallToolParams>;
/** Params of `callTool` as a client sends them (`arguments` may be left out). */
export type CallToolInput = z.input<typeof CallToolParams>;

/** `callTool` result: the rendered text the model reads; `isError` when the tool failed. */
export const CallToolResult = z.object({ text: z.string(), isError: z.boolean().default(false) });
/** See the schema {@link CallToolResult}. */
export type CallToolResult = z.output<typeof CallToolResult>;

/** `decidePermission` params: one tool call the host's hook saw (the kit's `GuardedCall`). */
export const PermissionQuery = z.strictObject({
  /** Tool name as the platform reports it (`Bash`, `mcp__agentmail__send_mail`). */
  toolName: z.string().min(1),
  /** The tool's input, shown to the person (truncated by the bridge). */
  input: z.unknown(),
  /** The platform's id of the call; '' when the seam gives none (Claude's PermissionRequest). */
  toolCallId: z.string(),
  /** The platform's own session id. */
  platformSessionId: z.string(),
  /** Working directory of the call. */
  cwd: z.string(),
  /** The platform itself asked about this call: decide it as a guarded tool. @default false */
  forceGuarded: z.boolean().optional(),
});
/** Params of `decidePermission`. */
export interface PermissionQuery {
  toolName: string;
  input: unknown;
  toolCallId: string;
  platformSessionId: string;
  cwd: string;
  forceGuarded?: boolean;
}

/**
 * A permission decision (SPEC P-4..P-7): `allow: true` only for a person's explicit approval
 * (`always` when they chose "always"), else `allow: false` with the text the model reads.
 * `code` is set when no person decided: the RPC failed closed (`AM_RPC_BRIDGE_UNREACHABLE`,
 * `AM_RPC_TIMEOUT`, …) or the bridge shut down (`AM_RPC_SERVER_CLOSED`).
 */
export type PermissionAnswer =
  | { allow: true; always?: boolean }
  | { allow: false; reason: string; code?: string };

/** Schema of {@link PermissionAnswer}, applied to what a handler returns. */
export const PermissionAnswerSchema = z.discriminatedUnion('allow', [
  z.object({ allow: z.literal(true), always: z.boolean().optional() }),
  z.object({ allow: z.literal(false), reason: z.string(), code: z.string().optional() }),
]);

const QuestionOptionSchema = z.strictObject({ label: z.string(), description: z.string().optional() });
const QuestionSchema = z.strictObject({
  question: z.string().min(1),
  header: z.string().optional(),
  options: z.array(QuestionOptionSchema).optional(),
  multiSelect: z.boolean().optional(),
});

/** `askQuestion` params: the questions of one `ask_user_question`-style call (SPEC P-9). */
export const AskQuestionParams = z.strictObject({ questions: z.array(QuestionSchema).min(1) });
/** Params of `askQuestion`, in the root's {@link Question} shape. */
export interface AskQuestionParams {
  questions: Question[];
}

/** Schema of the root's {@link QuestionAnswers}, applied to what a handler returns. */
export const QuestionAnswersSchema = z.object({
  declined: z.boolean(),
  answers: z.array(
    z.object({
      question: z.string(),
      header: z.string().optional(),
      selected: z.array(z.string()),
      text: z.string().optional(),
    }),
  ),
});

/** `recordSend` params: the addresses the model mailed explicitly (to and each cc; SPEC B-10). */
export const RecordSendParams = z.strictObject({ targets: z.array(z.string()) });
/** Params of `recordSend`. */
export type RecordSendParams = z.output<typeof RecordSendParams>;

/** `recordSend` result: `{}`. */
export const RecordSendResult = z.object({});

// Compile-time checks that the hand-written interfaces above are what the schemas accept.
// (zod gives optional fields `| undefined`, which `exactOptionalPropertyTypes` keeps apart, and
// mutable arrays where the root's types say readonly; JSON has no `undefined`, so a parsed value
// fits the interface.)
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type NoUndefined<T> = T extends object
  ? { -readonly [K in keyof T]: Exclude<NoUndefined<T[K]>, undefined> }
  : T;
const _checks: [
  Exact<NoUndefined<z.output<typeof PermissionQuery>>, NoUndefined<PermissionQuery>>,
  Exact<NoUndefined<z.output<typeof PermissionAnswerSchema>>, NoUndefined<PermissionAnswer>>,
  Exact<NoUndefined<z.output<typeof AskQuestionParams>>, NoUndefined<AskQuestionParams>>,
  Exact<NoUndefined<z.output<typeof QuestionAnswersSchema>>, NoUndefined<QuestionAnswers>>,
] = [true, true, true, true];
void _checks;
