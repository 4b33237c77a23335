/**
 * One mail turn, platform-neutral (see SPEC B-3, B-4, B-5, B-6, B-8, B-9, B-10, B-11): where it
 * runs, the prompt, the model order, the failure mail, the relay and the naming sync. The
 * platform runs attempts behind {@link MailTurnPlatform}; everything else is decided here once.
 */
import type { NewMailEvent } from '@agentmail/protocol';
import { GatewayClient } from '../client/gateway-client.js';
import type { FailureKind } from '../failure-mail.js';
import { type ModelAttempt, modelAttemptOrder } from '../model-order.js';
import { decideNamingSync, type NamingSyncState, namingStateAfterSync } from '../naming-sync.js';
import type { Platform } from '../permission-mode.js';
import { buildTurnPrompt, decideAutoRelay, type FinalPart, planTurn } from '../relay-policy.js';
import { formatText, type Locale } from '../texts/index.js';
import type { ExplicitSendRecord } from './explicit-sends.js';
import { sendFailureMail } from './failure-notice.js';
import type { BridgeLogger } from './logger.js';
import type { MailToolContext } from './mail-tools.js';
import type { MailTurnReport } from './turn-report.js';
import { resolveWorkspace } from './workspace.js';

/**
 * Where a mail's turn runs (see SPEC B-4):
 * - `adopted`: `mail.platform_session_id` exists on the platform (opened by that id; `cwd` is its own directory);
 * - `missing`: the adopted id is gone → failure `session_missing`, never a fresh session;
 * - `mail`: the bridge's own session for `mail.session_id`; `resumed` = it already exists.
 */
export type SessionLocation =
  | { kind: 'adopted'; cwd?: string }
  | { kind: 'missing'; cause: string }
  | { kind: 'mail'; resumed: boolean; cwd?: string };

/** What one platform attempt produced. */
export interface AttemptResult {
  ok: boolean;
  /** The platform's own words when `!ok` ('' when ok). */
  cause: string;
  /** This turn's final assistant message parts (B-10). */
  finalParts: FinalPart[];
  /** `provider/model` used. */
  model: string;
  /** Platform session id and its last entry id after the turn: the relay key (B-10, G-32). */
  platformSessionId: string;
  lastEntryId: string;
  /** The platform's session name after the turn (B-11). */
  sessionName?: string;
  /**
   * The attempt failed for a reason no other model can fix (the bridge is not set up for this
   * working directory, e.g. the permission seam is missing there, P-8): no further attempt, and
   * the failure mail says so (`bridge_setup`) instead of blaming the models.
   */
  setupProblem?: boolean;
}

/** One attempt: a model of the order (B-8) or the resume of an existing session (never switches model). */
export type TurnAttempt = ModelAttempt | { kind: 'resume' };

/** What a turn gives each attempt. */
export interface AttemptTurn {
  /** The turn prompt (B-5, B-6). */
  prompt: string;
  /** Working directory (B-3). */
  cwd: string;
  /** Context of the mail tools; `client` is live (read it per tool call: B-18 may switch it). */
  toolContext: MailToolContext;
  /** Aborted on turn timeout or shutdown: stop the platform's turn. */
  signal: AbortSignal;
  /** 0-based attempt index. */
  index: number;
}

/** The platform's side of a mail turn: the seam {@link runMailTurn} drives. */
export interface MailTurnPlatform {
  platform: Platform;
  /** Find the session of `mail` (B-4). A throw counts as `missing` for an adopted mail, as a failed turn otherwise. */
  locateSession(mail: NewMailEvent): Promise<SessionLocation>;
  /** `provider/model` keys the host can run; undefined = unreadable (B-8 skip rule then not applied). */
  catalogue(): Promise<readonly string[] | undefined>;
  /** Run one attempt and report from the platform's asynchronous outcome (B-7). A throw is a failed attempt. */
  runAttempt(attempt: TurnAttempt, turn: AttemptTurn): Promise<AttemptResult>;
  /** B-8: the failed attempt's platform session is disposed/set aside before the next model gets a fresh one. */
  discardAttempt?(index: number): Promise<void>;
  /** B-11 naming state of this mail session (absent: no naming sync). */
  namingState?: {
    read(): Promise<NamingSyncState | undefined>;
    write(state: NamingSyncState): Promise<void>;
  };
}

/** Input of {@link runMailTurn}. */
export interface MailTurnInput {
  mail: NewMailEvent;
  /** A catch-up delivery (B-20): the prompt says so. */
  backlog: boolean;
  /** 1-based delivery attempt (B-14): part of the explicit-send turn id. */
  attempt: number;
  agentName: string;
  /** The admin's ordered selection (G-27). */
  allowedModels: readonly string[];
  /** `provider/model` used when nothing is selected (B-8); '' or absent: the platform's own default. */
  hostDefault?: string;
  /** The live client; runMailTurn derives the `allowedRoots: [cwd]` client itself. */
  client: GatewayClient;
  /** B-3: per-session fallback directories live under it. */
  fallbackRoot: string;
  /** B-10: explicit sends of this turn (file-backed when tools run in another process). */
  explicitSends: ExplicitSendRecord;
  locale: Locale;
  /**
   * Aborted on turn timeout or shutdown: no further attempt starts. A shutdown (reason
   * `'shutdown'`) sends no failure mail: the mail stays unread and runs again after a restart.
   */
  signal: AbortSignal;
  /** The turn timeout, in ms, named in a timeout failure mail (B-7, B-9). */
  turnTimeoutMs?: number;
  log: BridgeLogger;
  /** B-18: the connect_to_server tool switched Gateway (already probed). */
  onReconnect(url: string, key: string, client: GatewayClient): void;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The subject of an auto relay (see SPEC B-10): the mail's subject with the catalogue's reply
 * prefix (`relay.subject`), unless it already carries one; at most 500 characters.
 * @example relaySubject('fix tests', 'en') // 'Re: fix tests'
 */
export function relaySubject(subject: string, locale: Locale): string {
  const prefixed = /^\s*(re|回复)\s*[:：]/i.test(subject)
    ? subject
    : formatText('relay.subject', { subject }, locale);
  return prefixed.slice(0, 500);
}

/**
 * Run one mail turn end to end (see SPEC B-3..B-11):
 * 1. locate the session (B-4): an adopted session that is gone fails with `session_missing` and no attempt;
 * 2. the working directory (B-3) and a Gateway client whose downloads stay inside it;
 * 3. the prompt from {@link planTurn} (B-5, B-6);
 * 4. attempts: a resumed session one `resume` attempt (never another model); a new session the
 *    admin's models in order, skipping those missing from the catalogue, `discardAttempt` between
 *    them (B-8);
 * 5. on failure the failure mail (B-9): `timeout` when the signal was aborted, `resume_failed` or
 *    `all_models_failed` with the platform's cause;
 * 6. on success the naming sync (B-11; the fingerprint is written before the request; adopted
 *    sessions are not synced), then the auto relay when {@link decideAutoRelay} says so (B-10),
 *    with the subject of {@link relaySubject}.
 *
 * Never throws: every failure ends in a failure mail and `{ ok: false }`.
 * @example const report = await runMailTurn({ mail, backlog: false, attempt: 1, ... }, piPlatform);
 */
export async function runMailTurn(input: MailTurnInput, platform: MailTurnPlatform): Promise<MailTurnReport> {
  const { mail, locale, signal } = input;
  const log = input.log;
  const fields = (extra: object = {}): object => ({ mail_id: mail.mail_id, ...extra });
  let client = input.client;
  const fail = async (kind: FailureKind, cause: string): Promise<MailTurnReport> => {
    if (signal.aborted && signal.reason === 'shutdown') {
      log.warn(fields({ kind, cause }), 'turn stopped by shutdown: no failure mail, the mail stays unread');
      return { ok: false, kind, cause, failureMailSent: false };
    }
    log.error(fields({ kind, cause }), 'turn failed, sending the failure mail');
    return sendFailureMail(client, {
      kind,
      mail,
      cause,
      agentName: input.agentName,
      locale,
      log,
      ...(input.turnTimeoutMs === undefined ? {} : { timeoutMs: input.turnTimeoutMs }),
    });
  };

  // B-4: an adopted session is opened by its platform id and never silently replaced.
  let location: SessionLocation;
  try {
    location = await platform.locateSession(mail);
  } catch (err) {
    if (mail.platform_session_id) location = { kind: 'missing', cause: messageOf(err) };
    else return fail('all_models_failed', `the session could not be opened: ${messageOf(err)}`);
  }
  if (location.kind === 'missing') return fail('session_missing', location.cause);
  const adopted = location.kind === 'adopted';
  const resumed = adopted || (location.kind === 'mail' && location.resumed);

  // B-3: the address path if it exists, else a per-session fallback directory (logged).
  const ws = await resolveWorkspace({
    addressPath: location.cwd || mail.to_workspace,
    fallbackRoot: input.fallbackRoot,
    sessionKey: mail.session_id,
  });
  if (ws.usedFallback)
    log.warn(fields({ cwd: ws.cwd, reason: ws.reason ?? '' }), 'working directory falls back');
  client = new GatewayClient({ baseUrl: client.baseUrl, key: client.key, allowedRoots: [ws.cwd] });

  const plan = planTurn(
    { mail, selfName: input.agentName, backlog: input.backlog, continuedSession: resumed },
    locale,
  );
  // B-3: the model learns that it is not where the mail pointed (a typo, another machine's path).
  const prompt =
    ws.usedFallback && ws.reason !== undefined && ws.reason !== 'no_path'
      ? `${buildTurnPrompt(plan, mail)}\n\n${formatText(
          'prompt.note.workspace_fallback',
          { path: location.cwd || mail.to_workspace, reason: ws.reason.replaceAll('_', ' '), cwd: ws.cwd },
          locale,
        )}`
      : buildTurnPrompt(plan, mail);
  const turnId = `${mail.mail_id}#${input.attempt}`;

  // B-8: the admin's models in order for a new session; a resumed session keeps its model.
  let attempts: TurnAttempt[];
  if (resumed) attempts = [{ kind: 'resume' }];
  else {
    const available = await platform.catalogue().catch(() => undefined);
    const order = modelAttemptOrder({
      allowed: input.allowedModels,
      catalogue: available,
      ...(input.hostDefault ? { hostDefault: input.hostDefault } : {}),
    });
    if (order.logLine) (order.usedHostDefault ? log.warn : log.info).call(log, fields(), order.logLine);
    attempts = order.attempts;
    if (attempts.length === 0) return fail('all_models_failed', order.logLine ?? 'no model to try');
  }

  const toolContext: MailToolContext = {
    get client() {
      return client;
    },
    mail: {
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      reply_address: mail.reply_address,
      self_address: mail.self_address,
    },
    recordExplicitSend: (target) => input.explicitSends.record(turnId, target),
    reconnect: ({ url, key, client: next }) => {
      client = next;
      input.onReconnect(url, key, next);
    },
    identity: { name: input.agentName, platform: platform.platform },
    locale,
  };

  let last: AttemptResult | undefined;
  for (const [index, attempt] of attempts.entries()) {
    if (signal.aborted) break;
    try {
      last = await platform.runAttempt(attempt, { prompt, cwd: ws.cwd, toolContext, signal, index });
    } catch (err) {
      last = {
        ok: false,
        cause: messageOf(err),
        finalParts: [],
        model: '',
        platformSessionId: '',
        lastEntryId: '',
      };
    }
    if (last.ok || last.setupProblem === true) break;
    log.warn(
      fields({ model: last.model, cause: last.cause, attempt: String(index + 1) }),
      'model attempt failed',
    );
    // B-8: the next model gets a fresh session; the failed one is disposed or set aside.
    if (!resumed && index < attempts.length - 1 && platform.discardAttempt)
      await platform.discardAttempt(index).catch((err: unknown) => {
        log.warn(fields({ err: messageOf(err) }), 'failed attempt not discarded');
      });
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
    return fail(kind, last.cause);
  }
  const done = last;

  await syncName();

  // B-10: relay this turn's final text when the plan says so.
  const decision = decideAutoRelay({
    plan,
    finalParts: done.finalParts,
    explicitSendTargets: await input.explicitSends.targetsFor(turnId),
    replyAddress: mail.reply_address,
    platformSessionId: done.platformSessionId,
    lastEntryId: done.lastEntryId,
  });
  const base = { ok: true as const, model: done.model, platformSessionId: done.platformSessionId };
  if (!decision.send) {
    log.info(fields({ reason: decision.reason }), 'no relay');
    return { ...base, relay: { sent: false, reason: decision.reason } };
  }
  try {
    const res = await client.send({
      to: decision.to,
      subject: relaySubject(mail.subject, locale),
      body: decision.body,
      reply_to: mail.mail_id,
      from_session_id: mail.session_id,
      relay: 'summary',
      relay_key: decision.relayKey,
    });
    log.info(fields({ to: decision.to, relay_key: decision.relayKey, status: res.status }), 'relayed');
    return {
      ...base,
      relay: { sent: true, mailId: res.mail_id, duplicate: res.status === 'duplicate_relay' },
    };
  } catch (err) {
    log.error(fields({ err: messageOf(err) }), 'relay failed');
    return { ...base, relay: { sent: false, reason: `relay failed: ${messageOf(err)}` } };
  }

  /**
   * B-11: the platform's session name → the Gateway session's title and alias. The fingerprint is
   * stored before the request (so a lost answer or our own echo never loops); the final alias
   * after it. Never fails the turn.
   */
  async function syncName(): Promise<void> {
    const naming = platform.namingState;
    if (!naming) return;
    const state = adopted ? undefined : await naming.read().catch(() => undefined);
    const d = decideNamingSync({
      adopted,
      platformName: done.sessionName,
      state,
      agentName: input.agentName,
    });
    if (!d.sync) {
      if (d.reason !== 'unnamed') log.info(fields({ reason: d.reason }), 'naming sync skipped');
      return;
    }
    try {
      await naming.write({ ...state, fingerprint: d.fingerprint });
      const res = await client.sessionSync(mail.session_id, d.request);
      await naming.write(namingStateAfterSync(d.fingerprint, res));
      log.info(fields({ alias: res.alias, title: res.title }), 'naming synced');
    } catch (err) {
      log.warn(fields({ err: messageOf(err) }), 'naming sync failed');
    }
  }
}
