/**
 * Step 5 of a mail turn: the attempts (SPEC B-4, B-7, B-8, B-11, G-37) — which ones, in what
 * order, and running them on the host until one succeeds, the host reports a setup problem or
 * the turn's signal aborts.
 */
import { messageOf, modelAttemptOrder, namingFingerprint } from '@agentmail/shared-policy';
import { z } from 'zod';
import type { RunningTurn, TurnState } from './active-turn.js';
import type { Attempt, AttemptOutcome, PlatformSessionRef, TurnAdapter } from './adapter.js';
import type { MailTurnInput } from './turn-input.js';
import type { Location } from './turn-location.js';

/** The attempts of a turn, or why there are none. */
export type AttemptPlan = { ok: true; attempts: Attempt[] } | { ok: false; cause: string };

/**
 * B-8: a resumed session gets one `resume` attempt (never another model); a new session the
 * admin's models in order, skipping those missing from the host's catalogue, else the host
 * default (event `model_order` when the order needs saying). Never throws.
 */
export async function planAttempts(
  input: MailTurnInput,
  adapter: TurnAdapter,
  where: Extract<Location, { kind: 'resume' | 'new' }>,
): Promise<AttemptPlan> {
  if (where.kind === 'resume')
    return {
      ok: true,
      attempts: [{ index: 0, kind: 'resume', session: where.session, adopted: where.adopted }],
    };
  const available = adapter.catalogue ? await adapter.catalogue().catch(() => undefined) : undefined;
  const order = modelAttemptOrder({
    allowed: input.allowedModels,
    catalogue: available,
    ...(input.hostDefault ? { hostDefault: input.hostDefault } : {}),
  });
  if (order.logLine)
    input.emit({
      type: 'model_order',
      mail_id: input.mail.mail_id,
      host_default: order.usedHostDefault,
      line: order.logLine,
    });
  const attempts = order.attempts.map((a, index): Attempt => {
    const model =
      a.kind === 'configured'
        ? { key: a.key, provider: a.provider, model: a.model }
        : a.provider && a.model
          ? { key: `${a.provider}/${a.model}`, provider: a.provider, model: a.model }
          : undefined;
    return { index, kind: 'new' as const, adopted: false, ...(model ? { model } : {}) };
  });
  if (attempts.length === 0) return { ok: false, cause: order.logLine ?? 'no model to try' };
  return { ok: true, attempts };
}

/** The schema of an attempt's outcome: a host adapter is outside the type system at run time. */
const AttemptOutcomeSchema = z.object({
  ok: z.boolean(),
  cause: z.string().optional(),
  finalParts: z.array(z.object({ type: z.string(), text: z.string().optional() })).optional(),
  model: z.string().optional(),
  platformSessionId: z.string().optional(),
  lastEntryId: z.string().optional(),
  sessionName: z.string().optional(),
  setupProblem: z.boolean().optional(),
});

/** The host's outcome, checked: a malformed one is a failed attempt that says what was wrong. */
function checkOutcome(value: unknown, platform: string): AttemptOutcome {
  const r = AttemptOutcomeSchema.safeParse(value);
  if (r.success) return r.data as AttemptOutcome;
  const issue = r.error.issues[0];
  const where = issue?.path.length ? `field "${issue.path.join('.')}"` : 'the outcome';
  return {
    ok: false,
    cause: `the ${platform} adapter returned an invalid attempt outcome: ${where}: ${issue?.message ?? 'invalid'}`,
  };
}

/** How the attempts ended. */
export interface AttemptsResult {
  /** The last attempt's outcome; undefined when none ran (the signal aborted first). */
  last?: AttemptOutcome;
  /** The model key of the last attempt, or what stood for it (`(the session model)`, `(host default)`). */
  lastModel: string;
  /** The platform session the turn ended in, if known. */
  current?: PlatformSessionRef;
}

/** What the attempts of one turn run with. */
export interface AttemptRun {
  attempts: readonly Attempt[];
  where: Extract<Location, { kind: 'resume' | 'new' }>;
  prompt: string;
  cwd: string;
  turn: RunningTurn;
  state: TurnState;
}

/**
 * Run the attempts in order (B-7: each reports from the host's own outcome signal; a throw or a
 * malformed outcome is a failed attempt). A created session is bound at once and its given name
 * is the naming baseline (B-4, B-11); while an attempt may be creating one, heartbeats offer no
 * new host session (G-37). After a failure the next model gets a fresh session: the failed one
 * is set aside and disposed (B-8). Stops at a success, a setup problem or an aborted signal.
 */
export async function runAttempts(
  input: MailTurnInput,
  adapter: TurnAdapter,
  run: AttemptRun,
): Promise<AttemptsResult> {
  const { mail, signal, emit, bindings } = input;
  const { attempts, turn, state } = run;
  const resumed = run.where.kind === 'resume';
  let last: AttemptOutcome | undefined;
  let lastModel = '';
  let current: PlatformSessionRef | undefined = run.where.kind === 'resume' ? run.where.session : undefined;
  for (const attempt of attempts) {
    if (signal.aborted) break;
    const created: { session?: PlatformSessionRef } = {};
    // G-37: until this attempt reports its new session, heartbeats offer no new host sessions.
    const creation = attempt.kind === 'new' ? bindings.creating() : () => undefined;
    lastModel = attempt.model?.key ?? (attempt.kind === 'resume' ? '(the session model)' : '(host default)');
    try {
      const outcome: unknown = await adapter.runAttempt(attempt, {
        mail,
        prompt: run.prompt,
        cwd: run.cwd,
        signal,
        toolContext: turn.toolContext,
        turn,
        sessionCreated: async (s) => {
          if (state.ended) return; // a late call of a finished turn rebinds nothing
          const session = {
            platformSessionId: s.platformSessionId,
            ...(s.locator ? { locator: s.locator } : {}),
          };
          created.session = session;
          current = session;
          turn.platformSessionIds.add(s.platformSessionId);
          const fingerprint = namingFingerprint(s.name);
          await bindings.bind(mail.session_id, {
            ...session,
            ...(fingerprint === '' ? {} : { naming: { fingerprint } }),
          });
          creation();
        },
      });
      last = checkOutcome(outcome, adapter.platform);
    } catch (err) {
      last = { ok: false, cause: messageOf(err) };
    } finally {
      creation();
    }
    if (last.ok || last.setupProblem === true) break;
    emit({
      type: 'attempt_failed',
      mail_id: mail.mail_id,
      index: attempt.index,
      model: last.model || lastModel,
      cause: last.cause ?? '',
    });
    // B-8: the next model gets a fresh session; the failed one is set aside and disposed.
    if (!resumed && attempt.index < attempts.length - 1 && created.session) {
      const failed = created.session;
      current = undefined;
      try {
        await bindings.setAside(mail.session_id);
        await adapter.disposeSession?.(failed);
      } catch (err) {
        emit({ type: 'attempt_not_discarded', mail_id: mail.mail_id, error: messageOf(err) });
      }
    }
  }
  return { ...(last ? { last } : {}), lastModel, ...(current ? { current } : {}) };
}
