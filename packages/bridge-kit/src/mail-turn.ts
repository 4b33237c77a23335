/**
 * One mail turn, platform-neutral (see SPEC B-3, B-4, B-5, B-6, B-8, B-9, B-10, B-11): where it
 * runs, the prompt, the model order, the bindings, the failure mail, the relay and the naming
 * sync. The host runs attempts behind {@link TurnAdapter}; everything else is decided here once.
 */
import { MAIL_SUBJECT_MAX_CHARS, type NewMailEvent } from '@agentmail/protocol';
import type { FailureKind, PendingPermissions } from '@agentmail/shared-policy';
import {
  buildTurnPrompt,
  decideAutoRelay,
  decideNamingSync,
  formatText,
  type Locale,
  messageOf,
  modelAttemptOrder,
  namingFingerprint,
  namingStateAfterSync,
  planTurn,
} from '@agentmail/shared-policy';
import { GatewayClient, isTransient } from '@agentmail/shared-policy/client';
import { z } from 'zod';
import type { Attempt, AttemptOutcome, PlatformSessionRef, TurnAdapter } from './adapter.js';
import type { EmitEvent } from './events.js';
import type { ExplicitSendRecord } from './explicit-sends.js';
import { sendFailureMail } from './failure-notice.js';
import type { GrantStore } from './grant-store.js';
import type { MailToolContext } from './mail-tools.js';
import { decideGuardedCall } from './permission-flow.js';
import { askQuestions } from './question-flow.js';
import type { SessionBindings } from './session-bindings.js';
import type { CommitFn } from './turn-gate.js';
import type { ActiveTurn, TurnRegistry } from './turn-registry.js';
import type { MailTurnReport } from './turn-report.js';
import { resolveWorkspace } from './workspace.js';

/** Input of {@link runMailTurn}: the mail and the bridge's shared state. */
export interface MailTurnInput {
  mail: NewMailEvent;
  /** A catch-up delivery (B-20): the prompt says so. */
  backlog: boolean;
  /** 1-based delivery attempt (B-14): part of the explicit-send turn id. */
  attempt: number;
  /**
   * An earlier turn of this mail ended without an outcome (a lost worker, or a bridge process that
   * crashed or stopped mid-turn): the prompt says it is a retry (B-10, B-14). @default false
   */
  retry?: boolean;
  agentName: string;
  /** The admin's ordered selection (G-27). */
  allowedModels: readonly string[];
  /** `provider/model` used when nothing is selected (B-8); '' or absent: the host's own default. */
  hostDefault?: string;
  /** The live client; the turn derives a client whose downloads stay inside its working directory. */
  client: GatewayClient;
  /** The bridge's data directory: per-session fallback workspaces live in `<dataDir>/workspaces` (B-3). */
  dataDir: string;
  bindings: SessionBindings;
  /** B-10: explicit sends of this turn. */
  explicitSends: ExplicitSendRecord;
  /** P-4: "always" grants (file-backed in the data directory). */
  grants: GrantStore;
  /** Where the turn's permission waits are woken (P-6, P-7). */
  pending: PendingPermissions;
  locale: Locale;
  /**
   * Aborted on turn timeout or shutdown: no further attempt starts. A shutdown (reason
   * `'shutdown'`) sends no failure mail: the mail stays unread and runs again after a restart.
   */
  signal: AbortSignal;
  /** The turn timeout, in ms, named in a timeout failure mail (B-7, B-9). */
  turnTimeoutMs?: number;
  /** How long a question waits for the person, in ms (P-9): then the model gets a timeout error. @default the turn's own signal only */
  questionTimeoutMs?: number;
  emit: EmitEvent;
  /** The relay goes through the turn's commit gate (one outcome per mail). @default no gate */
  commit?: CommitFn;
  /** Running turns, for host hooks. @default a turn is not registered */
  registry?: TurnRegistry;
  /** Aborted when the runtime gave the turn up (its work did not end in time): the turn's seams close at once. */
  released?: AbortSignal;
  /** Called with the running turn before the first attempt (e.g. to open its RPC token) and its end. */
  onTurn?: (turn: ActiveTurn) => (() => void) | undefined;
  /** B-18: the connect_to_server tool switched Gateway (already probed). */
  onReconnect(url: string, key: string, client: GatewayClient): void;
}

/**
 * The subject of an auto relay (see SPEC B-10): the mail's subject with the catalogue's reply
 * prefix (`relay.subject`), unless it already carries one; clipped to the Gateway's
 * `MAIL_SUBJECT_MAX_CHARS` (500 UTF-16 units), never inside a character.
 * @example relaySubject('fix tests', 'en') // 'Re: fix tests'
 */
export function relaySubject(subject: string, locale: Locale): string {
  const prefixed = /^\s*(re|回复)\s*[:：]/i.test(subject)
    ? subject
    : formatText('relay.subject', { subject }, locale);
  if (prefixed.length <= MAIL_SUBJECT_MAX_CHARS) return prefixed;
  // The limit counts UTF-16 units (a string's length): never keep half of a surrogate pair.
  const cut = prefixed.slice(0, MAIL_SUBJECT_MAX_CHARS);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** Where a mail's turn runs (B-4): the session to resume, or none (a new one). */
type Location =
  | { kind: 'missing'; cause: string }
  | { kind: 'broken'; cause: string }
  | { kind: 'resume'; session: PlatformSessionRef; adopted: boolean; cwd?: string }
  | { kind: 'new' };

async function locate(input: MailTurnInput, adapter: TurnAdapter): Promise<Location> {
  const { mail, bindings, emit } = input;
  const platform = adapter.platform;
  // B-4: an adopted session is opened by its platform id and never silently replaced.
  if (mail.platform_session_id) {
    const session = { platformSessionId: mail.platform_session_id };
    try {
      const found = await adapter.findSession(session, { adopted: true });
      if (!found)
        return {
          kind: 'missing',
          cause: `the ${platform} session ${mail.platform_session_id} was not found (deleted, or on another ${platform} installation)`,
        };
      return { kind: 'resume', session, adopted: true, ...(found.cwd ? { cwd: found.cwd } : {}) };
    } catch (err) {
      return { kind: 'missing', cause: messageOf(err) };
    }
  }
  try {
    let bound: PlatformSessionRef | undefined = await bindings.get(mail.session_id);
    if (!bound && adapter.legacyBinding) {
      bound = await adapter.legacyBinding(mail.session_id);
      if (bound) await bindings.bind(mail.session_id, bound);
    }
    if (!bound) return { kind: 'new' };
    const session: PlatformSessionRef = {
      platformSessionId: bound.platformSessionId,
      ...(bound.locator === undefined ? {} : { locator: bound.locator }),
    };
    const found = await adapter.findSession(session, { adopted: false });
    if (found) return { kind: 'resume', session, adopted: false, ...(found.cwd ? { cwd: found.cwd } : {}) };
    emit({
      type: 'binding_gone',
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      platform_session_id: session.platformSessionId,
    });
    await bindings.unbind(mail.session_id);
    return { kind: 'new' };
  } catch (err) {
    return { kind: 'broken', cause: `the session could not be opened: ${messageOf(err)}` };
  }
}

/**
 * The turn's signal, or — when the host gives one for a single call (its own cancellation of that
 * tool call) — both: the call's wait ends on whichever aborts first. The turn's reason is kept
 * when it aborted (a `'shutdown'` is a shutdown, P-7).
 */
function withHostSignal(turn: AbortSignal, host: AbortSignal | undefined): AbortSignal {
  return host === undefined ? turn : AbortSignal.any([turn, host]);
}

/**
 * Run one mail turn end to end (see SPEC B-3..B-11):
 * 1. locate the session (B-4): an adopted one by its platform id (gone → `session_missing`, no
 *    attempt); a mail session by its binding (gone → unbound, a new one);
 * 2. the working directory (B-3) and a Gateway client whose downloads stay inside it;
 * 3. the prompt from {@link planTurn} (B-5, B-6), with the retry note for a retry;
 * 4. attempts: a resumed session one `resume` attempt (never another model); a new session the
 *    admin's models in order, skipping those missing from the catalogue, the failed attempt's
 *    session set aside and disposed between them (B-8); each created session is bound and its
 *    given name is the naming baseline (B-11);
 * 5. on failure the failure mail (B-9): `timeout` when the signal was aborted, `resume_failed`,
 *    `bridge_setup` or `all_models_failed` with the host's cause;
 * 6. on success the naming sync (B-11), then the auto relay when {@link decideAutoRelay} says so
 *    (B-10), through the commit gate (never after the runtime gave the turn up), with a key from
 *    the session's last entry or, when the host has no entry id, from the mail id.
 *
 * Never throws: every failure ends in a failure mail and `{ ok: false }`.
 */
export async function runMailTurn(input: MailTurnInput, adapter: TurnAdapter): Promise<MailTurnReport> {
  try {
    return await runTurn(input, adapter);
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

/** Attempts of the relay send: a Gateway that is briefly unavailable must not lose the reply (B-10). */
const RELAY_RETRY_DELAYS_MS = [1_000, 2_000] as const;

async function runTurn(input: MailTurnInput, adapter: TurnAdapter): Promise<MailTurnReport> {
  const { mail, locale, signal, emit, bindings } = input;
  const mailId = mail.mail_id;
  let client = input.client;
  const fail = async (kind: FailureKind, cause: string): Promise<MailTurnReport> => {
    if (signal.aborted && signal.reason === 'shutdown')
      return { ok: false, kind, cause, failureMailSent: false };
    return sendFailureMail(client, {
      kind,
      mail,
      cause,
      agentName: input.agentName,
      locale,
      emit,
      ...(input.turnTimeoutMs === undefined ? {} : { timeoutMs: input.turnTimeoutMs }),
    });
  };

  const where = await locate(input, adapter);
  if (where.kind === 'missing') return fail('session_missing', where.cause);
  if (where.kind === 'broken') return fail('all_models_failed', where.cause);
  const resumed = where.kind === 'resume';
  const adopted = where.kind === 'resume' && where.adopted;

  // B-3: the address path if it exists, else a per-session fallback directory.
  const addressPath = (where.kind === 'resume' ? where.cwd : undefined) || mail.to_workspace;
  const ws = await resolveWorkspace({
    addressPath,
    fallbackRoot: `${input.dataDir.replace(/\/+$/, '')}/workspaces`,
    sessionKey: mail.session_id,
  });
  if (ws.usedFallback)
    emit({ type: 'workspace_fallback', mail_id: mailId, cwd: ws.cwd, reason: ws.reason ?? '' });
  client = new GatewayClient({ baseUrl: client.baseUrl, key: client.key, allowedRoots: [ws.cwd] });

  const plan = planTurn(
    {
      mail,
      selfName: input.agentName,
      backlog: input.backlog,
      continuedSession: resumed,
      retry: input.retry,
    },
    locale,
  );
  // B-3: the model learns that it is not where the mail pointed (a typo, another machine's path).
  const prompt =
    ws.usedFallback && ws.reason !== undefined && ws.reason !== 'no_path'
      ? `${buildTurnPrompt(plan, mail)}\n\n${formatText(
          'prompt.note.workspace_fallback',
          { path: addressPath, reason: ws.reason.replaceAll('_', ' '), cwd: ws.cwd },
          locale,
        )}`
      : buildTurnPrompt(plan, mail);

  // B-8: the admin's models in order for a new session; a resumed session keeps its model.
  let attempts: Attempt[];
  if (where.kind === 'resume') attempts = [{ index: 0, kind: 'resume', session: where.session, adopted }];
  else {
    const available = adapter.catalogue ? await adapter.catalogue().catch(() => undefined) : undefined;
    const order = modelAttemptOrder({
      allowed: input.allowedModels,
      catalogue: available,
      ...(input.hostDefault ? { hostDefault: input.hostDefault } : {}),
    });
    if (order.logLine)
      emit({
        type: 'model_order',
        mail_id: mailId,
        host_default: order.usedHostDefault,
        line: order.logLine,
      });
    attempts = order.attempts.map((a, index) => {
      const model =
        a.kind === 'configured'
          ? { key: a.key, provider: a.provider, model: a.model }
          : a.provider && a.model
            ? { key: `${a.provider}/${a.model}`, provider: a.provider, model: a.model }
            : undefined;
      return { index, kind: 'new' as const, adopted: false, ...(model ? { model } : {}) };
    });
    if (attempts.length === 0) return fail('all_models_failed', order.logLine ?? 'no model to try');
  }

  const turnId = `${mailId}#${input.attempt}`;
  const toolContext: MailToolContext = {
    get client() {
      return client;
    },
    mail: {
      mail_id: mailId,
      session_id: mail.session_id,
      reply_address: mail.reply_address,
      self_address: mail.self_address,
    },
    recordExplicitSend: (target) => input.explicitSends.record(turnId, target),
    reconnect: ({ url, key, client: next }) => {
      client = next;
      input.onReconnect(url, key, next);
    },
    identity: { name: input.agentName, platform: adapter.platform },
    locale,
  };
  const platformSessionIds = new Set<string>();
  let questionCount = 0;
  /** The turn is over (it returned, or the runtime gave it up): its seams refuse (P-7, B-21). */
  let ended = false;
  const endedReason = (): string => formatText('permission.turn_ended', {}, locale);
  const turn: ActiveTurn & { platformSessionIds: Set<string> } = {
    turnId,
    mail,
    cwd: ws.cwd,
    locale,
    signal,
    toolContext,
    platformSessionIds,
    decide: async (call, options = {}) => {
      if (ended) return { allow: false, reason: endedReason() };
      return decideGuardedCall(
        {
          ...call,
          cwd: call.cwd ?? ws.cwd,
          platformSessionId: call.platformSessionId ?? [...platformSessionIds][0] ?? '',
        },
        {
          platform: adapter.platform,
          agentName: input.agentName,
          mode: () => mail.permission_mode,
          sessionId: () => mail.session_id,
          client: () => client,
          grants: input.grants,
          waitForDecision: (relayKey, s) => input.pending.wait(relayKey, s ? { signal: s } : {}),
          // A mail-driven turn has no person at the host's own UI (P-5: fail closed).
          hasLocalUi: false,
          locale,
          emit,
          mailId,
        },
        withHostSignal(signal, options.signal),
      );
    },
    ask: async (questions, call = {}) => {
      if (ended) return { ok: false, error: endedReason() };
      return askQuestions(
        questions,
        {
          agentName: input.agentName,
          sessionId: mail.session_id,
          client,
          pending: input.pending,
          locale,
          emit,
          ...(input.questionTimeoutMs === undefined ? {} : { timeoutMs: input.questionTimeoutMs }),
        },
        {
          platformSessionId: call.platformSessionId ?? [...platformSessionIds][0] ?? '',
          toolCallId: call.toolCallId ?? `q${++questionCount}`,
          cwd: ws.cwd,
        },
        withHostSignal(signal, call.signal),
      );
    },
    recordSend: async (targets) => {
      if (!ended) await input.explicitSends.record(turnId, targets);
    },
  };
  if (where.kind === 'resume') platformSessionIds.add(where.session.platformSessionId);
  const unregister = input.registry?.add(turn);
  const onTurnEnd = input.onTurn?.(turn);
  const end = (): void => {
    if (ended) return;
    ended = true;
    onTurnEnd?.();
    unregister?.();
  };
  // Given up by the runtime (its work did not end within the grace period): the turn loses its
  // powers at once — no registry entry, no RPC token, no more asking (B-7, B-21).
  input.released?.addEventListener('abort', end, { once: true });
  try {
    return await runAttempts();
  } finally {
    input.released?.removeEventListener('abort', end);
    end();
  }

  async function runAttempts(): Promise<MailTurnReport> {
    let last: AttemptOutcome | undefined;
    let lastModel = '';
    let current: PlatformSessionRef | undefined = where.kind === 'resume' ? where.session : undefined;
    for (const attempt of attempts) {
      if (signal.aborted) break;
      const created: { session?: PlatformSessionRef } = {};
      // G-37: until this attempt reports its new session, heartbeats offer no new host sessions.
      const creation = attempt.kind === 'new' ? bindings.creating() : () => undefined;
      lastModel =
        attempt.model?.key ?? (attempt.kind === 'resume' ? '(the session model)' : '(host default)');
      try {
        const outcome: unknown = await adapter.runAttempt(attempt, {
          mail,
          prompt,
          cwd: ws.cwd,
          signal,
          toolContext,
          turn,
          sessionCreated: async (s) => {
            if (ended) return; // a late call of a finished turn rebinds nothing
            const session = {
              platformSessionId: s.platformSessionId,
              ...(s.locator ? { locator: s.locator } : {}),
            };
            created.session = session;
            current = session;
            platformSessionIds.add(s.platformSessionId);
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
        mail_id: mailId,
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
          emit({ type: 'attempt_not_discarded', mail_id: mailId, error: messageOf(err) });
        }
      }
    }
    if (!last) return fail('timeout', 'the turn was stopped before it started');
    if (!last.ok) {
      const kind: FailureKind = signal.aborted
        ? 'timeout'
        : last.setupProblem === true
          ? 'bridge_setup'
          : resumed
            ? 'resume_failed'
            : 'all_models_failed';
      return fail(kind, last.cause || 'the host gave no reason');
    }
    const done = last;
    // A turn that ended after the bridge began to stop (its guarded calls were denied by the
    // shutdown, P-7) is not this mail's answer: nothing is relayed, the mail stays unread and runs
    // again after the restart (B-15, B-20).
    if (signal.aborted && signal.reason === 'shutdown')
      return {
        ok: false,
        kind: 'timeout',
        cause: 'the turn was stopped by the shutdown',
        failureMailSent: false,
      };
    const platformSessionId = done.platformSessionId || current?.platformSessionId || '';
    const model = done.model || lastModel;

    await syncName(done.sessionName);

    // B-10: relay this turn's final text when the plan says so.
    const decision = decideAutoRelay({
      plan,
      finalParts: done.finalParts ?? [],
      explicitSendTargets: await input.explicitSends.targetsFor(turnId),
      replyAddress: mail.reply_address,
      platformSessionId,
      lastEntryId: done.lastEntryId ?? '',
      mailId,
    });
    const base = { ok: true as const, model, platformSessionId };
    if (!decision.send) {
      emit({ type: 'relay_skipped', mail_id: mailId, reason: decision.reason });
      return { ...base, relay: { sent: false, reason: decision.reason } };
    }
    const commit: CommitFn = input.commit ?? ((fn) => fn());
    const body = {
      to: decision.to,
      subject: relaySubject(mail.subject, locale),
      body: decision.body,
      reply_to: mailId,
      from_session_id: mail.session_id,
      relay: 'summary' as const,
      relay_key: decision.relayKey,
    };
    // The relay key makes a resend idempotent (G-32): a transient failure is retried briefly.
    const sendWithRetry = async (): Promise<Awaited<ReturnType<GatewayClient['send']>>> => {
      for (const delayMs of [0, ...RELAY_RETRY_DELAYS_MS]) {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        try {
          return await client.send(body);
        } catch (err) {
          if (!isTransient(err) || delayMs === RELAY_RETRY_DELAYS_MS.at(-1)) throw err;
        }
      }
      throw new Error('unreachable');
    };
    try {
      const res = await commit(sendWithRetry);
      if (res === undefined) {
        const reason = 'the turn was given up after its timeout: its answer is not relayed (B-7)';
        emit({ type: 'relay_skipped', mail_id: mailId, reason });
        return { ...base, relay: { sent: false, reason } };
      }
      const duplicate = res.status === 'duplicate_relay';
      emit({ type: 'relayed', mail_id: mailId, to: decision.to, relay_key: decision.relayKey, duplicate });
      return { ...base, relay: { sent: true, mailId: res.mail_id, duplicate } };
    } catch (err) {
      emit({ type: 'relay_failed', mail_id: mailId, error: messageOf(err) });
      // Not lost: the runtime leaves the mail unread and delivers it again (B-20).
      return {
        ...base,
        relay: { sent: false, reason: `relay failed: ${messageOf(err)}`, undelivered: true },
      };
    }
  }

  /**
   * B-11: the host's session name → the Gateway session's title and alias. The fingerprint is
   * stored before the request (so a lost answer or our own echo never loops); the final alias
   * after it. Adopted sessions are not synced. Never fails the turn.
   */
  async function syncName(sessionName: string | undefined): Promise<void> {
    const state = adopted ? undefined : (await bindings.get(mail.session_id).catch(() => undefined))?.naming;
    const d = decideNamingSync({ adopted, platformName: sessionName, state, agentName: input.agentName });
    if (!d.sync) {
      if (d.reason !== 'unnamed') emit({ type: 'naming_sync_skipped', mail_id: mailId, reason: d.reason });
      return;
    }
    try {
      await bindings.setNaming(mail.session_id, { ...state, fingerprint: d.fingerprint });
      const res = await client.sessionSync(mail.session_id, d.request);
      await bindings.setNaming(mail.session_id, namingStateAfterSync(d.fingerprint, res));
      emit({ type: 'naming_synced', mail_id: mailId, alias: res.alias, title: res.title });
    } catch (err) {
      emit({ type: 'naming_sync_failed', mail_id: mailId, error: messageOf(err) });
    }
  }
}
