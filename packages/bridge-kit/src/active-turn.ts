/**
 * Step 4 of a mail turn: the running turn the host's hooks and tools reach — its mail-tool
 * context and its seams (`decide`, `ask`, `recordSend`), which refuse once the turn has ended
 * (SPEC P-1..P-9, B-10, B-17, B-18, B-21).
 */
import { formatText, type Platform } from '@agentmail/shared-policy';
import type { GatewayClient } from '@agentmail/shared-policy/client';
import { ASK_PERSON_TOOL } from './mail-tools/types.js';
import type { MailToolContext } from './mail-tools.js';
import { decideGuardedCall } from './permission-flow.js';
import { askQuestions } from './question-flow.js';
import { sandboxRefusal } from './sandbox/sandbox.js';
import type { MailTurnInput } from './turn-input.js';
import type { ActiveTurn } from './turn-registry.js';

/** What the steps of one turn share and change while it runs. */
export interface TurnState {
  /** The turn's Gateway client (downloads inside its directory); connect_to_server replaces it (B-18). */
  client: GatewayClient;
  /** The turn is over (it returned, or the runtime gave it up): its seams refuse (P-7, B-21). */
  ended: boolean;
}

/** A running turn as the kit holds it: the platform sessions it runs in are added as they appear. */
export type RunningTurn = ActiveTurn & { platformSessionIds: Set<string> };

/**
 * The turn's signal, or — when the host gives one for a single call (its own cancellation of that
 * tool call) — both: the call's wait ends on whichever aborts first. The turn's reason is kept
 * when it aborted (a `'shutdown'` is a shutdown, P-7).
 */
function withHostSignal(turn: AbortSignal, host: AbortSignal | undefined): AbortSignal {
  return host === undefined ? turn : AbortSignal.any([turn, host]);
}

/** The mail tools' context of a turn (B-17): its live client, its mail, its explicit sends, B-18. */
function turnToolContext(
  input: MailTurnInput,
  platform: Platform,
  state: TurnState,
  turnId: string,
): MailToolContext {
  const { mail } = input;
  return {
    get client() {
      return state.client;
    },
    mail: {
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      reply_address: mail.reply_address,
      self_address: mail.self_address,
    },
    recordExplicitSend: (target) => input.explicitSends.record(turnId, target),
    reconnect: ({ url, key, client: next }) => {
      state.client = next;
      input.onReconnect(url, key, next);
    },
    identity: { name: input.agentName, platform },
    locale: input.locale,
  };
}

/**
 * The running turn `turnId` (`<mail id>#<delivery attempt>`) working in `cwd`: `decide` is the
 * whole permission flow of this mail (no local UI: fail closed, P-5), `ask` one question mail
 * (P-9), `recordSend` the explicit-send record (B-10). Each refuses once `state.ended`. The host's
 * `guardedTools` (its descriptor's, P-3) decide which calls are guarded; none given guards all.
 */
export function openActiveTurn(
  input: MailTurnInput,
  host: { platform: Platform; guardedTools: readonly string[] | undefined },
  state: TurnState,
  at: { turnId: string; cwd: string },
): RunningTurn {
  const { platform, guardedTools } = host;
  const { mail, locale, signal, emit } = input;
  const { turnId, cwd } = at;
  const platformSessionIds = new Set<string>();
  let questionCount = 0;
  const endedReason = (): string => formatText('permission.turn_ended', {}, locale);
  const turn: RunningTurn = {
    turnId,
    mail,
    cwd,
    locale,
    signal,
    toolContext: {
      ...turnToolContext(input, platform, state, turnId),
      // ask_person (P-10): the turn's own question seam.
      ask: (questions, s) => turn.ask(questions, { tool: ASK_PERSON_TOOL, ...(s ? { signal: s } : {}) }),
    },
    platformSessionIds,
    decide: async (call, options = {}) => {
      if (state.ended) return { allow: false, reason: endedReason() };
      return decideGuardedCall(
        {
          ...call,
          cwd: call.cwd ?? cwd,
          platformSessionId: call.platformSessionId ?? [...platformSessionIds][0] ?? '',
        },
        {
          platform,
          guardedTools,
          agentName: input.agentName,
          mode: () => mail.permission_mode,
          sessionId: () => mail.session_id,
          client: () => state.client,
          grants: input.grants,
          waitForDecision: (relayKey, s) => input.pending.wait(relayKey, s ? { signal: s } : {}),
          // A mail-driven turn has no person at the host's own UI (P-5: fail closed).
          hasLocalUi: false,
          locale,
          emit,
          mailId: mail.mail_id,
          ...sandboxOfTurn(input, cwd),
        },
        withHostSignal(signal, options.signal),
      );
    },
    ask: async (questions, call = {}) => {
      if (state.ended) return { ok: false, error: endedReason() };
      return askQuestions(
        questions,
        {
          agentName: input.agentName,
          sessionId: mail.session_id,
          client: state.client,
          pending: input.pending,
          locale,
          emit,
          ...(input.questionTimeoutMs === undefined ? {} : { timeoutMs: input.questionTimeoutMs }),
        },
        {
          platformSessionId: call.platformSessionId ?? [...platformSessionIds][0] ?? '',
          // Unique in the platform session across its turns (a later mail continues it).
          toolCallId: call.toolCallId ?? `${turnId}:q${++questionCount}`,
          cwd,
          ...(call.tool ? { tool: call.tool } : {}),
        },
        withHostSignal(signal, call.signal),
      );
    },
    recordSend: async (targets) => {
      if (!state.ended) await input.explicitSends.record(turnId, targets);
    },
  };
  return turn;
}

/**
 * The permission flow's part of the sandbox for a turn in `cwd` (P-1, P-12): its confined tools
 * when the verified sandbox can hold this workspace, and the state the person's request names.
 */
function sandboxOfTurn(
  input: MailTurnInput,
  cwd: string,
): { sandboxConfines?: readonly string[]; sandboxStatus?: string } {
  if (!input.sandbox) return input.sandboxStatus ? { sandboxStatus: input.sandboxStatus } : {};
  const refused = sandboxRefusal(input.sandbox, cwd);
  if (refused) return { sandboxStatus: `verified, not used for this workspace: ${refused}` };
  return {
    sandboxConfines: input.sandbox.confines,
    ...(input.sandboxStatus ? { sandboxStatus: input.sandboxStatus } : {}),
  };
}
