/**
 * ZCode's `--output-format stream-json`: one NDJSON line per session event, written as it happens,
 * `{type, eventId, sessionId, turnId?, seq, timestamp, traceId, payload}` (v3.15.1
 * `bootstrap/src/zcode-protocol/session-mapper.ts` `mapSessionEvent`, `cli/src/headless-workflow.ts`
 * "One event per line, written as it happens"), the last line `{"type":"result", …}` with the
 * fields of `--json` (`cli/src/prompt-command.ts`: "stream-json's result is the terminator").
 * Event types and payload kinds: `session.created|resumed|titleUpdated`, `turn.started`,
 * `message.upserted`, `model.streaming {kind: text_delta, delta, assistantMessageId}`,
 * `tool.updated {kind: scheduled|started|result|error|batch, toolCallId, toolName, input,
 * result?, error?}`, `permission.requested`, `permission.resolved {decision: deny, reason}`,
 * `turn.completed {response, resultType, usage}`, `turn.failed {error:{message, code, retryable,
 * attribution}}` (research/zcode.md §3, from multica and zcode-acp).
 */
import { randomUUID } from 'node:crypto';

/** Writes the session events of one run. */
export class EventStream {
  #seq = 0;
  #count = 0;
  sessionId = '';
  readonly #write: (line: string) => void;
  readonly #enabled: boolean;
  readonly traceId: string;

  constructor(traceId: string, enabled: boolean, write: (line: string) => void) {
    this.traceId = traceId;
    this.#enabled = enabled;
    this.#write = write;
  }

  /** Events written so far (`eventCount` of the result). */
  get count(): number {
    return this.#count;
  }

  /** Write one event. */
  emit(type: string, payload: Record<string, unknown>, turnId?: string): void {
    this.#count += 1;
    if (!this.#enabled) return;
    this.#write(
      `${JSON.stringify({
        type,
        eventId: `evt_${randomUUID()}`,
        sessionId: this.sessionId,
        ...(turnId ? { turnId } : {}),
        seq: this.#seq++,
        timestamp: Date.now(),
        traceId: this.traceId,
        payload,
      })}\n`,
    );
  }
}
