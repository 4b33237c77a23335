/**
 * A DSH turn's outcome, read from the session's own durable events (SPEC §7 DSH, B-7): the turn is
 * over at `turn/end`, never at the first chunk; a finish chunk can carry an error, and DSH may
 * retry inside the same turn (rc.8 does), so the outcome is the **last** `turn/end` of the interval
 * the bridge owned (`followup` → `whenIdle()`), and an error finish counts only when no later
 * successful step replaced it.
 */
import type { FinalPart } from '@agentmail/shared-policy';

/** The session events this module reads (a structural subset of DSH's `SessionEvent`). */
export interface DshEventLike {
  type: string;
  seq: number;
  data: unknown;
}

/** What one turn interval came to. */
export interface DshTurnSummary {
  /** True only for a `completed` turn whose last model step did not finish with an error. */
  ok: boolean;
  /** DSH's own words when `!ok` (the error message and code, the abort cause, …). */
  cause?: string;
  /** `kind` of the last `turn/end` (`completed`, `error`, `aborted`, `max-tokens`, `blocked`, …), or `none`. */
  reason: string;
  /** Text blocks of the last assistant message (no reasoning, no tool calls). */
  finalParts: FinalPart[];
  /** Id of the last assistant message (the relay key's entry id, B-10). */
  lastEntryId?: string;
  /** Turns that ended in the interval (1 for one mail). */
  turns: number;
}

interface FailureLike {
  message?: unknown;
  code?: unknown;
  status?: unknown;
}

function failureText(failure: unknown): string {
  if (typeof failure !== 'object' || failure === null) return String(failure);
  const f = failure as FailureLike;
  const message = typeof f.message === 'string' && f.message !== '' ? f.message : 'no message';
  const code = typeof f.code === 'string' && f.code !== '' ? f.code : undefined;
  const status = typeof f.status === 'number' ? ` (HTTP ${f.status})` : '';
  return code ? `${code}: ${message}${status}` : `${message}${status}`;
}

/** DSH's words for a `turn/end` reason that is not `completed`. */
export function turnEndCause(reason: { kind?: unknown; error?: unknown; reason?: unknown }): string {
  switch (reason.kind) {
    case 'error':
      return `the model call failed: ${failureText(reason.error)}`;
    case 'aborted': {
      const cause = reason.reason as { kind?: unknown; reason?: unknown } | undefined;
      const why =
        cause?.kind === 'hook' && typeof cause.reason === 'string'
          ? cause.reason
          : String(cause?.kind ?? 'unknown');
      return `the turn was aborted (${why})`;
    }
    case 'max-tokens':
      return 'the model reached its output token limit before it finished';
    case 'blocked':
      return 'dsh blocked the turn';
    case 'interrupted':
      return 'the turn was interrupted (dsh stopped in the middle of it)';
    default:
      return `the turn ended with "${String(reason.kind)}"`;
  }
}

/**
 * Summarise the events with `seq >= firstSeq` (the interval of one mail's `followup`).
 * Pure; never throws on odd data (unknown shapes count as no information).
 * @example summarizeTurn(agent.session.events, firstSeq)
 */
export function summarizeTurn(events: readonly DshEventLike[], firstSeq: number): DshTurnSummary {
  let started = false;
  let reason: { kind?: unknown; error?: unknown; reason?: unknown } | undefined;
  let turns = 0;
  let finalParts: FinalPart[] = [];
  let lastEntryId: string | undefined;
  // The last finish of a model step: an error finish is overridden by a later successful one
  // (an in-turn retry), never the other way round.
  let lastFinishError: string | undefined;
  for (const event of events) {
    if (event.seq < firstSeq) continue;
    if (event.type === 'turn/start') {
      started = true;
      continue;
    }
    if (!started) continue;
    const data = (event.data ?? {}) as Record<string, unknown>;
    if (event.type === 'assistant/chunk') {
      const chunk = data.chunk as
        | { type?: unknown; reason?: { kind?: unknown; failure?: unknown } }
        | undefined;
      if (chunk?.type === 'finish')
        lastFinishError = chunk.reason?.kind === 'error' ? failureText(chunk.reason.failure) : undefined;
    } else if (event.type === 'assistant/message') {
      const message = data.message as { id?: unknown; content?: unknown } | undefined;
      const content = Array.isArray(message?.content)
        ? (message.content as Array<Record<string, unknown>>)
        : [];
      const texts = content
        .filter((b) => b.type === 'text' && typeof b.text === 'string')
        .map((b) => ({ type: 'text' as const, text: b.text as string }));
      if (texts.length > 0 && data.interrupted !== true) finalParts = texts;
      if (typeof message?.id === 'string') lastEntryId = message.id;
    } else if (event.type === 'turn/end') {
      turns += 1;
      reason = (data.reason ?? {}) as typeof reason;
    }
  }
  const base = { finalParts, turns, ...(lastEntryId === undefined ? {} : { lastEntryId }) };
  if (reason === undefined)
    return { ...base, ok: false, reason: 'none', cause: 'dsh ended the turn without a turn/end event' };
  const kind = String(reason.kind);
  if (kind !== 'completed') return { ...base, ok: false, reason: kind, cause: turnEndCause(reason) };
  if (lastFinishError !== undefined)
    return {
      ...base,
      ok: false,
      reason: kind,
      cause: `the last model step finished with an error: ${lastFinishError}`,
    };
  return { ...base, ok: true, reason: kind };
}
