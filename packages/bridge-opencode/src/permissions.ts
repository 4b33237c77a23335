/**
 * The permission seam of opencode (see SPEC P-1..P-8, §7 opencode), for mail-driven sessions
 * only — a session a person opened keeps opencode's own prompt.
 *
 * - Guarded tools (P-3) are decided in `tool.execute.before`, which opencode awaits before the
 *   tool runs, whatever the person's opencode permission config says: `plan` refuses, `workspace`
 *   asks a person by mail and waits, `full` passes. A refusal is thrown, so the tool part ends in
 *   an error whose text (with the person's note, P-6) the model reads, and the turn goes on.
 * - opencode's own asks (`permission.asked`, its config says `ask`; the `permission.ask` hook does
 *   not fire in 1.18) in a mail-driven session are answered through the reply API: a guarded call
 *   a person already approved in `tool.execute.before` gets that answer; anything else (an
 *   unguarded tool opencode's config asks about) is asked by mail first (fail closed).
 * - opencode is always answered `once`, never `always`: opencode's `always` approves the pattern
 *   for every session of the project (a person's own sessions too, pinned in
 *   test/permissions.test.ts), while a person's "always" by mail holds for one (session, tool)
 *   only (P-4) — that grant lives in the bridge's grant store and answers later asks.
 */

import type { ActiveTurn, EmitEvent } from '@agentmail/bridge-kit';
import { isGuardedTool } from '@agentmail/shared-policy';
import { GUARDED_TOOLS } from './host.js';
import { type OpencodeClient, replyPermission } from './opencode-facts.js';

/** Properties of opencode's `permission.asked` event (v2 shape, as 1.18 publishes it). */
interface PermissionAsked {
  id?: unknown;
  sessionID?: unknown;
  permission?: unknown;
  patterns?: unknown;
  metadata?: unknown;
  tool?: { callID?: unknown } | null;
}

/** What the seam needs: the mail-driven turn of an opencode session (none for a person's), the client, events. */
export interface PermissionSeamHost {
  turnOf(sessionId: string): ActiveTurn | undefined;
  client: OpencodeClient;
  emit: EmitEvent<OpencodeEvent>;
}

/** The opencode seam's own events (on the bridge's bus, beside the kit's). */
export type OpencodeEvent =
  /** A mail turn's prompt was taken by opencode (`promptAsync` answered); its outcome comes from the bus (B-7). */
  | { type: 'opencode_prompted'; mail_id: string; session_id: string; model: string; directory: string }
  /** The bus ended that prompt: `session.idle` (ok) or `session.error`; `duration_ms` since the prompt. */
  | { type: 'opencode_prompt_ended'; mail_id: string; session_id: string; ok: boolean; duration_ms: number }
  | { type: 'opencode_permission_answered'; request_id: string; reply: 'once' | 'reject' }
  | { type: 'opencode_permission_reply_failed'; request_id: string; reply: 'once' | 'reject'; error: string };

/** The seam; one per bridge. */
export class PermissionSeam {
  readonly #host: PermissionSeamHost;
  /**
   * Ids of guarded calls a person approved (or the mode / an "always" grant let pass) in
   * `tool.execute.before`: opencode may ask about them again. Emptied when the call ends.
   */
  readonly #approved = new Set<string>();

  constructor(host: PermissionSeamHost) {
    this.#host = host;
  }

  /**
   * `tool.execute.before`: decide a guarded call of a mail-driven session (P-1..P-6).
   * @throws Error whose message is the refusal the model reads (opencode turns it into the tool's error).
   */
  async beforeTool(
    input: { tool: string; sessionID: string; callID: string },
    output: { args: unknown },
  ): Promise<void> {
    const turn = this.#host.turnOf(input.sessionID);
    if (!turn) return;
    const outcome = await turn.decide({
      toolName: input.tool,
      input: output.args,
      toolCallId: input.callID,
      platformSessionId: input.sessionID,
    });
    if (outcome.allow === true) {
      // Only a guarded call was really decided here; an unguarded one passed without a decision,
      // so opencode's own ask about it must still go to a person.
      if (isGuardedTool(GUARDED_TOOLS, input.tool)) this.#approved.add(input.callID);
      return;
    }
    throw new Error(outcome.reason);
  }

  /** `tool.execute.after`: the call ended; forget its approval. */
  afterTool(input: { callID: string }): void {
    this.#approved.delete(input.callID);
  }

  /** `permission.asked` event: answer opencode's own ask in a mail-driven session. */
  async onAsked(properties: Record<string, unknown>): Promise<void> {
    const p = properties as PermissionAsked;
    if (typeof p.id !== 'string' || typeof p.sessionID !== 'string') return;
    const turn = this.#host.turnOf(p.sessionID);
    if (!turn) return; // a person's session: opencode's own prompt stays
    const requestId = p.id;
    const callId = typeof p.tool?.callID === 'string' ? p.tool.callID : '';
    let reply: 'once' | 'reject';
    let message: string | undefined;
    if (callId && this.#approved.has(callId)) {
      this.#approved.delete(callId);
      reply = 'once';
    } else {
      const outcome = await turn.decide({
        toolName: typeof p.permission === 'string' ? p.permission : 'unknown',
        input: { patterns: p.patterns ?? [], metadata: p.metadata ?? {} },
        toolCallId: callId || requestId,
        platformSessionId: p.sessionID,
        // opencode's config asked for this one: never let it pass unasked (fail closed).
        forceGuarded: true,
      });
      if (outcome.allow === true) reply = 'once';
      else {
        reply = 'reject';
        message = outcome.reason;
      }
    }
    try {
      await replyPermission(this.#host.client, {
        requestId,
        reply,
        directory: turn.cwd,
        ...(message === undefined ? {} : { message }),
      });
      this.#host.emit({ type: 'opencode_permission_answered', request_id: requestId, reply });
    } catch (err) {
      this.#host.emit({
        type: 'opencode_permission_reply_failed',
        request_id: requestId,
        reply,
        error: String(err),
      });
    }
  }
}
