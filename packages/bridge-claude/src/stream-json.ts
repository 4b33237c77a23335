/**
 * Claude Code's `--output-format stream-json --verbose` lines, read leniently (one JSON object per
 * line; fields we do not use are kept out of the types; newer versions add fields). Shapes checked
 * on 2.1.328: research/claude-code.md "stream-json".
 */
import { parseJsonLine } from '@agentmail/host-tools/driver';
import { z } from 'zod';

/** `system/init`: the first line after the SessionStart hooks. */
export const InitLine = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  session_id: z.string(),
  model: z.string().optional(),
  tools: z.array(z.string()).default([]),
  mcp_servers: z.array(z.looseObject({ name: z.string(), status: z.string() })).default([]),
  plugins: z.array(z.looseObject({ name: z.string(), path: z.string().optional() })).default([]),
});
/** See {@link InitLine}. */
export type InitLine = z.infer<typeof InitLine>;

/** `system/hook_response` (with `--include-hook-events`). */
export const HookResponseLine = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('hook_response'),
  hook_name: z.string().default(''),
  hook_event: z.string().default(''),
  stderr: z.string().default(''),
  exit_code: z.number().nullish(),
  outcome: z.string().default(''),
});
/** See {@link HookResponseLine}. */
export type HookResponseLine = z.infer<typeof HookResponseLine>;

/** An assistant message block (each block is its own line). */
export const AssistantLine = z.looseObject({
  type: z.literal('assistant'),
  uuid: z.string().optional(),
  message: z.looseObject({ model: z.string().optional() }).optional(),
});

/**
 * The last line, `result`. A failure is `is_error: true` (API errors still say
 * `subtype: "success"`, with `terminal_reason: "api_error"` and `api_error_status`).
 */
export const ResultLine = z.looseObject({
  type: z.literal('result'),
  subtype: z.string().default(''),
  is_error: z.boolean(),
  result: z.string().default(''),
  session_id: z.string().default(''),
  terminal_reason: z.string().optional(),
  api_error_status: z.union([z.number(), z.string()]).nullish(),
  duration_ms: z.number().optional(),
  num_turns: z.number().optional(),
});
/** See {@link ResultLine}. */
export type ResultLine = z.infer<typeof ResultLine>;

/** One line, classified. `other` = any line we do not act on. */
export type StreamLine =
  | { kind: 'init'; line: InitLine }
  | { kind: 'hook_response'; line: HookResponseLine }
  | { kind: 'assistant'; uuid: string | undefined; model: string | undefined }
  | { kind: 'result'; line: ResultLine }
  | { kind: 'other'; type: string };

/** Classify one stdout line; `undefined` when it is not a JSON object (never throws). */
export function parseStreamLine(text: string): StreamLine | undefined {
  const value = parseJsonLine(text);
  if (value === undefined) return undefined;
  const type = String((value as { type?: unknown }).type ?? '');
  const init = InitLine.safeParse(value);
  if (init.success) return { kind: 'init', line: init.data };
  const hook = HookResponseLine.safeParse(value);
  if (hook.success) return { kind: 'hook_response', line: hook.data };
  const result = ResultLine.safeParse(value);
  if (result.success) return { kind: 'result', line: result.data };
  const assistant = AssistantLine.safeParse(value);
  if (assistant.success)
    return { kind: 'assistant', uuid: assistant.data.uuid, model: assistant.data.message?.model };
  return { kind: 'other', type };
}
