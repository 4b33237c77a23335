/**
 * One mail turn, platform-neutral (see SPEC B-3, B-4, B-5, B-6, B-8, B-9, B-10, B-11): where it
 * runs, the prompt, the model order, the bindings, the failure mail, the relay and the naming
 * sync. The host runs attempts behind {@link TurnAdapter}; everything else is decided here once.
 */
import { type FailureKind, messageOf } from '@agentmail/shared-policy';
import { openActiveTurn, type TurnState } from './active-turn.js';
import type { TurnAdapter } from './adapter.js';
import { sendFailureMail } from './failure-notice.js';
import { planAttempts, runAttempts } from './turn-attempts.js';
import type { MailTurnInput } from './turn-input.js';
import { locateSession } from './turn-location.js';
import { relayReply, syncSessionName } from './turn-relay.js';
import type { MailTurnReport } from './turn-report.js';
import { prepareTurn } from './turn-setup.js';

export type { MailTurnInput } from './turn-input.js';
export { relaySubject } from './turn-relay.js';

/**
 * Run one mail turn end to end (see SPEC B-3..B-11):
 * 1. locate the session (B-4): an adopted one by its platform id (gone → `session_missing`, no
 *    attempt); a mail session by its binding (gone → unbound, a new one);
 * 2. the working directory (B-3) and a Gateway client whose downloads stay inside it;
 * 3. the prompt from `planTurn` (B-5, B-6), with the retry note for a retry;
 * 4. attempts: a resumed session one `resume` attempt (never another model); a new session the
 *    admin's models in order, skipping those missing from the catalogue, the failed attempt's
 *    session set aside and disposed between them (B-8); each created session is bound and its
 *    given name is the naming baseline (B-11);
 * 5. on failure the failure mail (B-9): `timeout` when the signal was aborted, `resume_failed`,
 *    `bridge_setup` or `all_models_failed` with the host's cause;
 * 6. on success the naming sync (B-11), then the auto relay when `decideAutoRelay` says so
 *    (B-10), through the commit gate (never after the runtime gave the turn up), with a key from
 *    the session's last entry or, when the host has no entry id, from the mail id.
 *
 * Never throws: every failure ends in a failure mail and `{ ok: false }`.
 */
export async function runMailTurn(input: MailTurnInput, adapter: TurnAdapter): Promise<MailTurnReport> {
  try {
    return await mailTurnSteps(input, adapter);
  } catch (err) {
    // Never throws: a bug here (or a host that broke the adapter contract) is a failure mail.
    if (input.signal.aborted && input.signal.reason === 'shutdown')
      return { ok: false, kind: 'bridge_error', cause: messageOf(err), failureMailSent: false };
    return sendFailureMail(input.client, {
      kind: 'bridge_error',
      mail: input.mail,
      cause: messageOf(err),
      agentName: input.agentName,
      locale: input.locale,
      emit: input.emit,
    });
  }
}

/** The failure mail of the turn (B-9) — none at a shutdown: the mail stays unread and runs again. */
function failTurn(
  input: MailTurnInput,
  state: TurnState,
  kind: FailureKind,
  cause: string,
): Promise<MailTurnReport> {
  const { signal } = input;
  if (signal.aborted && signal.reason === 'shutdown')
    return Promise.resolve({ ok: false, kind, cause, failureMailSent: false });
  return sendFailureMail(state.client, {
    kind,
    mail: input.mail,
    cause,
    agentName: input.agentName,
    locale: input.locale,
    emit: input.emit,
    ...(input.turnTimeoutMs === undefined ? {} : { timeoutMs: input.turnTimeoutMs }),
  });
}

/** The steps of {@link runMailTurn}, in order; each is a function of its own module. */
async function mailTurnSteps(input: MailTurnInput, adapter: TurnAdapter): Promise<MailTurnReport> {
  const state: TurnState = { client: input.client, ended: false };
  const fail = (kind: FailureKind, cause: string): Promise<MailTurnReport> =>
    failTurn(input, state, kind, cause);

  const where = await locateSession(input, adapter);
  if (where.kind === 'missing') return fail('session_missing', where.cause);
  if (where.kind === 'broken') return fail('all_models_failed', where.cause);
  const setup = await prepareTurn(input, where);
  state.client = setup.client;
  const planned = await planAttempts(input, adapter, where);
  if (!planned.ok) return fail('all_models_failed', planned.cause);

  const turnId = `${input.mail.mail_id}#${input.attempt}`;
  const turn = openActiveTurn(
    input,
    { platform: adapter.platform, guardedTools: adapter.guardedTools },
    state,
    { turnId, cwd: setup.cwd },
  );
  if (where.kind === 'resume') turn.platformSessionIds.add(where.session.platformSessionId);
  const unregister = input.registry?.add(turn);
  const onTurnEnd = input.onTurn?.(turn);
  const end = (): void => {
    if (state.ended) return;
    state.ended = true;
    onTurnEnd?.();
    unregister?.();
  };
  // Given up by the runtime (its work did not end within the grace period): the turn loses its
  // powers at once — no registry entry, no RPC token, no more asking (B-7, B-21).
  input.released?.addEventListener('abort', end, { once: true });
  // Awaited inside the try: the turn ends (its seams close) after its failure mail or relay.
  try {
    const { last, lastModel, current } = await runAttempts(input, adapter, {
      attempts: planned.attempts,
      where,
      prompt: setup.prompt,
      cwd: setup.cwd,
      turn,
      state,
    });
    if (!last) return await fail('timeout', 'the turn was stopped before it started');
    if (!last.ok) {
      const kind: FailureKind = input.signal.aborted
        ? 'timeout'
        : last.setupProblem === true
          ? 'bridge_setup'
          : where.kind === 'resume'
            ? 'resume_failed'
            : 'all_models_failed';
      return await fail(kind, last.cause || 'the host gave no reason');
    }
    // A turn that ended after the bridge began to stop (its guarded calls were denied by the
    // shutdown, P-7) is not this mail's answer: nothing is relayed, the mail stays unread and runs
    // again after the restart (B-15, B-20).
    if (input.signal.aborted && input.signal.reason === 'shutdown')
      return {
        ok: false,
        kind: 'timeout',
        cause: 'the turn was stopped by the shutdown',
        failureMailSent: false,
      };
    await syncSessionName(input, state, where.kind === 'resume' && where.adopted, last.sessionName);
    return await relayReply(input, state, {
      plan: setup.plan,
      turnId,
      done: last,
      model: last.model || lastModel,
      platformSessionId: last.platformSessionId || current?.platformSessionId || '',
    });
  } finally {
    input.released?.removeEventListener('abort', end);
    end();
  }
}
