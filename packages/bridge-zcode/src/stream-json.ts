/**
 * ZCode's `--output-format stream-json` lines, read leniently (one JSON object per line; fields
 * not used here are kept out of the types; newer versions add event types). Shapes from ZCode's
 * v3.15.1 source (`session-mapper.ts` `mapSessionEvent`, `prompt-command.ts` result line) and the
 * payloads seen at runtime by multica and zcode-acp (research/zcode.md §3):
 * `{type, eventId, sessionId, turnId?, seq, timestamp, traceId, payload}`, the last line
 * `{"type":"result", sessionId, traceId, response, …}`.
 */
import { parseJsonLine } from '@agentmail/host-tools/driver';
import { z } from 'zod';

/** Any event line. */
const Envelope = z.looseObject({
  type: z.string(),
  sessionId: z.string().optional(),
  payload: z.unknown().optional(),
});

/** `turn.completed` payload: the turn's own outcome (`resultType: success | cancelled | error_*`). */
export const TurnCompleted = z.looseObject({
  response: z.string().default(''),
  resultType: z.string().default('success'),
});

/** `turn.failed` payload: ZCode's own words for the failure. */
export const TurnFailed = z.looseObject({
  error: z
    .looseObject({ message: z.string().default(''), code: z.string().optional() })
    .default({ message: '' }),
});

/** The closing `result` line (same fields as `--json`). */
export const ResultLine = z.looseObject({
  type: z.literal('result'),
  sessionId: z.string().default(''),
  traceId: z.string().optional(),
  response: z.string().default(''),
});
/** See {@link ResultLine}. */
export type ResultLine = z.infer<typeof ResultLine>;

const ToolUpdated = z.looseObject({
  kind: z.string().default(''),
  toolName: z.string().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
});
const PermissionPayload = z.looseObject({
  toolName: z.string().optional(),
  decision: z.string().optional(),
  reason: z.string().optional(),
});

/** One line, classified. `other` = an event we only log or ignore. */
export type StreamLine =
  | { kind: 'result'; line: ResultLine }
  | { kind: 'turn_completed'; sessionId: string; response: string; resultType: string }
  | { kind: 'turn_failed'; sessionId: string; message: string; code?: string }
  | { kind: 'step'; sessionId: string; type: string; stepKind?: string; tool?: string; detail?: string }
  | { kind: 'other'; sessionId: string; type: string };

/** Event types worth a log line each (a stuck run shows its last step; text deltas are not). */
const STEPS = new Set(['turn.started', 'tool.updated', 'permission.requested', 'permission.resolved']);

/** Classify one stdout line; `undefined` when it is not a JSON object with a `type` (never throws). */
export function parseStreamLine(text: string): StreamLine | undefined {
  const value = parseJsonLine(text);
  if (value === undefined) return undefined;
  const env = Envelope.safeParse(value);
  if (!env.success) return undefined;
  const { type } = env.data;
  const sessionId = env.data.sessionId ?? '';
  if (type === 'result') {
    const r = ResultLine.safeParse(value);
    return r.success ? { kind: 'result', line: r.data } : { kind: 'other', sessionId, type };
  }
  if (type === 'turn.completed') {
    const p = TurnCompleted.safeParse(env.data.payload ?? {});
    if (p.success)
      return { kind: 'turn_completed', sessionId, response: p.data.response, resultType: p.data.resultType };
  }
  if (type === 'turn.failed') {
    const p = TurnFailed.safeParse(env.data.payload ?? {});
    if (p.success)
      return {
        kind: 'turn_failed',
        sessionId,
        message: p.data.error.message,
        ...(p.data.error.code ? { code: p.data.error.code } : {}),
      };
  }
  if (STEPS.has(type)) {
    if (type === 'tool.updated') {
      const p = ToolUpdated.safeParse(env.data.payload ?? {});
      if (p.success)
        return {
          kind: 'step',
          sessionId,
          type,
          stepKind: p.data.kind,
          ...(p.data.toolName ? { tool: p.data.toolName } : {}),
          ...(p.data.error?.message ? { detail: p.data.error.message.slice(0, 300) } : {}),
        };
    }
    if (type.startsWith('permission.')) {
      const p = PermissionPayload.safeParse(env.data.payload ?? {});
      if (p.success)
        return {
          kind: 'step',
          sessionId,
          type,
          ...(p.data.decision ? { stepKind: p.data.decision } : {}),
          ...(p.data.toolName ? { tool: p.data.toolName } : {}),
          ...(p.data.reason ? { detail: p.data.reason.slice(0, 300) } : {}),
        };
    }
    return { kind: 'step', sessionId, type };
  }
  return { kind: 'other', sessionId, type };
}

/** A ZCode session id (`sess_…`); anything else (from a mail, an adoption) never names a session. */
export function isZcodeSessionId(id: string): boolean {
  return /^sess_[A-Za-z0-9_-]{1,128}$/.test(id);
}
