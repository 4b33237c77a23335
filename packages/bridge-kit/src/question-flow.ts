/**
 * The question flow of a mail-driven turn (see SPEC P-9): the questions of one
 * `ask_user_question`-style call become one question mail; the person's answer maps back onto the
 * questions by label. Any failure answers the model with an error at once — never a local UI a
 * mail-driven session lacks, never a hang.
 */

import type { PendingPermissions, PermissionDecision } from '@agentmail/shared-policy';
import {
  buildQuestionMail,
  clampRelayKey,
  formatText,
  isDuplicateRelay,
  type Locale,
  mapQuestionAnswers,
  messageOf,
  type Question,
  type QuestionAnswers,
} from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';
import { withdrawRequest } from './withdraw.js';

/** What {@link askQuestions} needs from its turn. */
export interface QuestionFlowOptions {
  agentName: string;
  /** Gateway session id of the turn. */
  sessionId: string;
  client: GatewayClient;
  pending: PendingPermissions;
  locale: Locale;
  emit?: EmitEvent;
  /** Give up waiting after this many ms (answered with an error). @default no limit but the turn's */
  timeoutMs?: number;
}

/** The outcome: the answers, or the text of an error the model reads at once. */
export type QuestionOutcome = { ok: true; answers: QuestionAnswers } | { ok: false; error: string };

/**
 * Ask a person `questions` by mail and wait for the answer (see SPEC P-9, G-38). The relay key is
 * `question:<platformSessionId>:<toolCallId>` (clamped). A wait that ends without an answer
 * (timeout, a stopped turn, shutdown) withdraws the request at the Gateway. Never throws.
 * @example const o = await askQuestions(qs, { agentName, sessionId, client, pending, locale }, { platformSessionId, toolCallId, cwd }, signal);
 */
export async function askQuestions(
  questions: readonly Question[],
  options: QuestionFlowOptions,
  call: { platformSessionId: string; toolCallId: string; cwd: string; tool?: string },
  signal?: AbortSignal,
): Promise<QuestionOutcome> {
  const { locale } = options;
  const emit: EmitEvent = options.emit ?? (() => undefined);
  const failed = (cause: string): QuestionOutcome => ({
    ok: false,
    error: formatText('permission.question.failed', { cause }, locale),
  });
  if (questions.length === 0) return failed('no question was given');
  if (!options.sessionId) return failed('this session is not an AgentMail session');
  const mail = buildQuestionMail(questions, locale);
  const relayKey = clampRelayKey(
    `question:${call.platformSessionId || options.sessionId}:${call.toolCallId}`,
  );
  const tool = call.tool ?? 'ask_user_question';
  let requestId: string;
  try {
    const res = await options.client.permissionRequest(
      {
        ...mail,
        context: formatText(
          'permission.question.context',
          { agent: options.agentName, cwd: call.cwd },
          locale,
        ),
        session_id: options.sessionId,
        relay_key: relayKey,
      },
      signal ? { signal } : {},
    );
    if (isDuplicateRelay(res)) return failed('it was already asked under the same key');
    requestId = res.request_id;
    emit({
      type: 'permission_asked',
      tool,
      relay_key: relayKey,
      request_id: res.request_id,
      kind: 'question',
    });
  } catch (err) {
    emit({ type: 'permission_failed', tool, outcome: 'deny', reason: messageOf(err) });
    return failed(messageOf(err));
  }
  const d: PermissionDecision = await options.pending.wait(relayKey, {
    ...(signal ? { signal } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  emit({
    type: 'permission_decided',
    tool,
    relay_key: relayKey,
    decision: d.raw || d.decision,
    source: d.source,
  });
  // In the background, like the permission flow's (a process that exits awaits withdrawalsSettled()).
  void withdrawRequest(options.client, requestId, d.source, tool, emit);
  if (d.source !== 'person')
    return {
      ok: false,
      error: formatText('permission.question.no_answer', { cause: d.reason ?? d.source }, locale),
    };
  const answers = mapQuestionAnswers(questions, { decision: d.raw, answers: d.answers, text: d.note });
  if (answers.declined) {
    const note = d.note?.trim();
    return {
      ok: false,
      error: note
        ? formatText('permission.question.declined_note', { note }, locale)
        : formatText('permission.question.declined', {}, locale),
    };
  }
  return { ok: true, answers };
}
