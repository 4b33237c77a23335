/**
 * The agent-scoped seams of a mail-driven DSH agent (SPEC P-1..P-9, §7 DSH). They are installed
 * on the agent's own scope (`setup(agentCtx)`, or `agent.ctx` for an adopted live session), so
 * a person's own DSH sessions never see them, and they act only while a mail turn runs in the
 * agent ({@link SeamHost.turnOf}); between mail turns they pass everything through (a person
 * prompting the same session in DSH's web UI keeps DSH's own prompts).
 *
 * - **Guarded tools** are decided in `tools/pre-execute` with the kit's flow (`turn.decide`): the
 *   mail's mode governs, whatever DSH's own `DSH_PERMISSION_MODE` says (its `danger-full-access`
 *   would reject every ask unasked), and a denial returns the kit's text — the person's note
 *   (P-6) or the plan-mode explanation (P-1) — which DSH shows the model as `Error: <reason>`.
 *   DSH's approval service would replace it with "the user rejected tool …".
 * - **DSH's own asks** (a downstream `ask`, or `ctx.approval.request` for a sandbox escalation)
 *   are answered by our `approval/request` answerer, registered first (`prepend: true`: the web
 *   host's answerer claims any pending ask and waits for a browser nobody watches).
 * - **Questions**: `ask_user_question` is intercepted around dispatch (`tools/execute`) and
 *   becomes one question mail (`turn.ask`); DSH allows one UI-question provider per process and
 *   the web host owns it, so none is registered.
 *
 * DSH's signals are bridged to fresh controllers before they reach our I/O ({@link detach}).
 */
import { randomUUID } from 'node:crypto';
import type {
  ActiveTurn,
  EmitEvent,
  MailTool,
  MailToolContext,
  PermissionOutcome,
} from '@agentmail/bridge-kit';
import { isGuardedTool, type Question } from '@agentmail/shared-policy';
import type { Context } from '@deepseek-ai/cordis';
import type { ToolDispatchExecution, ToolExecutionResult } from '@deepseek-ai/dsh-tools';
import type { ApprovalOutcome } from '@deepseek-ai/dsh-user-approval';
import { GUARDED_TOOLS } from './host.js';
import { detach } from './signals.js';
import { dshMailTools } from './tools.js';

/** DSH's question tool (`@deepseek-ai/dsh-tool-ask-user`). */
export const ASK_USER_TOOL = 'ask_user_question';

/**
 * Every outcome DSH's approval service accepts, exactly (SPEC §7 DSH): any other value is
 * silently normalised to `unavailable`, so the literals are pinned to DSH's own type here and by
 * a type test.
 */
export const APPROVAL_OUTCOMES = [
  'allowed-once',
  'rejected',
  'cancelled',
  'unavailable',
] as const satisfies readonly ApprovalOutcome[];

/** The DSH seam's own events (on the bridge's bus, beside the kit's). */
export type DshSeamEvent =
  | { type: 'dsh_tool_decided'; tool: string; call_id: string; decision: 'allow' | 'deny' }
  | { type: 'dsh_approval_answered'; tool: string; outcome: ApprovalOutcome }
  | { type: 'dsh_question_answered'; call_id: string; ok: boolean };

/** What the seams need from the bridge. */
export interface SeamHost {
  /** The running mail turn of a DSH agent (session id), if any. */
  turnOf(agentId: string): ActiveTurn | undefined;
  /** Mail-tool context for a call in `agentId` (the turn's, else the standalone one). */
  toolContext(agentId: string | undefined): MailToolContext;
  mailTools: readonly MailTool[];
  emit: EmitEvent<DshSeamEvent>;
  /** `agent/error` of this agent (the cause when a turn ends without `turn/end`). */
  onAgentError(agentId: string, error: unknown): void;
}

/**
 * DSH's approval answer for the kit's decision of one of DSH's own asks.
 * `cancelled` when DSH itself cancelled the call meanwhile.
 */
export function approvalOutcomeOf(outcome: PermissionOutcome, cancelled: boolean): ApprovalOutcome {
  if (cancelled) return 'cancelled';
  return outcome.allow === true ? 'allowed-once' : 'rejected';
}

interface AskedQuestion {
  id: string;
  question: Question;
}

/**
 * The questions of an `ask_user_question` call, checked (the call's arguments reach
 * around-dispatch before the tool's own validation).
 */
export function parseQuestions(
  args: unknown,
): { ok: true; questions: AskedQuestion[] } | { ok: false; error: string } {
  const list = (args as { questions?: unknown } | null)?.questions;
  if (!Array.isArray(list) || list.length === 0)
    return {
      ok: false,
      error: 'ask_user_question needs "questions": a non-empty array of { id, question, options? }',
    };
  const questions: AskedQuestion[] = [];
  for (const [i, raw] of list.entries()) {
    const q = raw as Record<string, unknown> | null;
    if (typeof q?.question !== 'string' || q.question.trim() === '')
      return { ok: false, error: `ask_user_question: questions[${i}].question must be a non-empty string` };
    const options = Array.isArray(q.options)
      ? q.options
          .map((o) => o as Record<string, unknown> | null)
          .filter((o): o is Record<string, unknown> => typeof o?.label === 'string')
          .map((o) => ({
            label: o.label as string,
            ...(typeof o.description === 'string' ? { description: o.description } : {}),
          }))
      : [];
    questions.push({
      id: typeof q.id === 'string' && q.id !== '' ? q.id : `q${i + 1}`,
      question: {
        question: q.question,
        ...(typeof q.header === 'string' ? { header: q.header } : {}),
        ...(options.length > 0 ? { options } : {}),
        ...(q.multi_select === true ? { multiSelect: true } : {}),
      },
    });
  }
  return { ok: true, questions };
}

function errorResult(message: string): ToolExecutionResult {
  return { isError: true, error: { message }, content: [{ type: 'text', text: `Error: ${message}` }] };
}

/**
 * Install the seams and the mail tools on one agent's scope.
 * @returns the disposer (an agent's scope also unwinds them when it is disposed).
 */
export function installSeams(agentCtx: Context, agentId: string, host: SeamHost): () => void {
  const disposers: Array<() => void> = [];
  for (const tool of dshMailTools(host.mailTools, host.toolContext))
    disposers.push(agentCtx.tools.register(tool));

  disposers.push(
    agentCtx.on(
      'tools/pre-execute',
      async (exec, next) => {
        const downstream = await next();
        const turn = host.turnOf(agentId);
        if (turn === undefined || downstream.kind === 'deny') return downstream;
        if (downstream.kind === 'allow' && !isGuardedTool(GUARDED_TOOLS, exec.name)) return downstream;
        const signal = detach(exec.signal);
        try {
          const outcome = await turn.decide(
            {
              toolName: exec.name,
              input: exec.arguments,
              toolCallId: exec.callId,
              platformSessionId: agentId,
              // Another policy of DSH asked about this call: never let it pass unasked.
              ...(downstream.kind === 'ask' ? { forceGuarded: true } : {}),
            },
            { signal: signal.signal },
          );
          const allow = outcome.allow === true;
          host.emit({
            type: 'dsh_tool_decided',
            tool: exec.name,
            call_id: exec.callId,
            decision: allow ? 'allow' : 'deny',
          });
          return allow ? { kind: 'allow' } : { kind: 'deny', reason: outcome.reason };
        } finally {
          signal.dispose();
        }
      },
      { prepend: true },
    ),
  );

  disposers.push(
    agentCtx.on(
      'approval/request',
      async (req, next) => {
        const turn = host.turnOf(agentId);
        if (turn === undefined) return next();
        const source = req.signal ?? new AbortController().signal;
        const signal = detach(source);
        try {
          const outcome = await turn.decide(
            {
              // Its own name and relay key: the call itself may have been approved in
              // pre-execute already (same call id), and an "always" for the tool (P-4) must not
              // silently cover what DSH asks beyond it (a sandbox escalation).
              toolName: `${req.toolName} (dsh approval)`,
              input: { reason: req.reason ?? '' },
              toolCallId: `${req.callId ?? randomUUID()}:dsh-approval`,
              platformSessionId: agentId,
              forceGuarded: true,
            },
            { signal: signal.signal },
          );
          const answer = approvalOutcomeOf(outcome, source.aborted);
          host.emit({ type: 'dsh_approval_answered', tool: req.toolName, outcome: answer });
          return answer;
        } finally {
          signal.dispose();
        }
      },
      { prepend: true },
    ),
  );

  disposers.push(
    agentCtx.on(
      'tools/execute',
      async (exec: ToolDispatchExecution, next) => {
        if (exec.name !== ASK_USER_TOOL) return next();
        const turn = host.turnOf(agentId);
        if (turn === undefined) return next();
        const parsed = parseQuestions(exec.arguments);
        if (!parsed.ok) return errorResult(parsed.error);
        const signal = detach(exec.signal);
        try {
          const outcome = await turn.ask(
            parsed.questions.map((q) => q.question),
            { toolCallId: exec.callId, platformSessionId: agentId, signal: signal.signal },
          );
          host.emit({ type: 'dsh_question_answered', call_id: exec.callId, ok: outcome.ok });
          if (!outcome.ok) return errorResult(outcome.error);
          const answers = parsed.questions.map((q, i) => {
            const a = outcome.answers.answers[i];
            return { id: q.id, selected: [...(a?.selected ?? [])], ...(a?.text ? { custom: a.text } : {}) };
          });
          return {
            isError: false,
            value: { answers },
            content: [{ type: 'text', text: JSON.stringify({ answers }) }],
          };
        } finally {
          signal.dispose();
        }
      },
      { prepend: true },
    ),
  );

  disposers.push(agentCtx.on('agent/error', ({ error }) => host.onAgentError(agentId, error)));

  return () => {
    for (const dispose of disposers.reverse()) dispose();
  };
}
