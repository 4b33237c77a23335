/**
 * One mail turn on the real pi SDK, run inside a worker child process (see SPEC B-3, B-4, B-7,
 * B-8, B-9, B-10, §7 pi). The process holds one pi session, runs one `prompt()` and reports.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  buildFailureMail,
  buildTurnPrompt,
  decideAutoRelay,
  decideNamingSync,
  ExplicitSendRecord,
  type FailureKind,
  type FinalPart,
  GatewayClient,
  GrantStore,
  type Locale,
  type MailToolContext,
  type ModelAttempt,
  modelAttemptOrder,
  type NamingSyncState,
  namingStateAfterSync,
  type PendingPermissions,
  planTurn,
  resolveLocale,
  resolveWorkspace,
} from '@agentmail/shared-policy';
import {
  createAgentSession,
  DefaultResourceLoader,
  ModelRuntime,
  SessionManager,
  SettingsManager,
} from '@earendil-works/pi-coding-agent';
import { createMailExtension } from './extension.js';
import type { TurnReport, WorkerJob, WorkerMessage } from './ipc.js';
import { findPiSessionFile, mailSessionFile, parseHeader, readFirstLine } from './session-files.js';

/** What the worker process gives a turn. */
export interface TurnIo {
  /** Decisions routed from the daemon (IPC `permission_decision`). */
  pending: PendingPermissions;
  /** Aborted on IPC `abort`/`shutdown` (turn timeout, B-7; shutdown, B-15). */
  signal: AbortSignal;
  send: (message: WorkerMessage) => void;
}

/** pi's retry settings for mail turns: `AGENTMAIL_PI_MAX_RETRIES` (0 = off). @default 2 */
function retrySettings(): { enabled: boolean; maxRetries: number; baseDelayMs: number } {
  const n = Number(process.env.AGENTMAIL_PI_MAX_RETRIES ?? '2');
  const maxRetries = Number.isInteger(n) && n >= 0 ? n : 2;
  return { enabled: maxRetries > 0, maxRetries, baseDelayMs: 1_000 };
}

interface AssistantMessageLike {
  role: 'assistant';
  content: Array<{ type: string; text?: string }>;
  stopReason?: string;
  errorMessage?: string;
  provider?: string;
  model?: string;
}

interface AttemptOutcome {
  ok: boolean;
  cause: string;
  message?: AssistantMessageLike;
  model: string;
  platformSessionId: string;
  lastEntryId: string;
  /** pi's session name after the turn (`session_info`), if any (B-11). */
  sessionName?: string;
}

/** Where the naming-sync state of a mail session lives: next to its pi session file (B-11). */
function namingStateFile(sessionFile: string): string {
  return `${sessionFile}.naming.json`;
}

async function readNamingState(file: string): Promise<NamingSyncState | undefined> {
  try {
    const raw = JSON.parse(await readFile(file, 'utf8')) as Partial<NamingSyncState>;
    if (typeof raw.fingerprint !== 'string') return undefined;
    return typeof raw.alias === 'string'
      ? { fingerprint: raw.fingerprint, alias: raw.alias }
      : { fingerprint: raw.fingerprint };
  } catch {
    return undefined;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Run the turn of `job` and report it. Never throws: every failure ends in a failure mail (B-9)
 * and a `{ ok: false }` report.
 */
export async function runTurn(job: WorkerJob, io: TurnIo): Promise<TurnReport> {
  const { mail } = job;
  const locale: Locale = resolveLocale(job.locale);
  const log = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, string> = {}): void =>
    io.send({ type: 'log', level, msg, fields: { mail_id: mail.mail_id, ...fields } });
  let client = new GatewayClient({ baseUrl: job.gatewayUrl, key: job.agentKey });

  const fail = async (kind: FailureKind, cause: string): Promise<TurnReport> => {
    log('error', 'worker: turn failed, sending the failure mail', { kind, cause });
    try {
      const fm = buildFailureMail({ kind, mail, cause, agentName: job.agentName, locale });
      await client.send({ ...fm, from_session_id: mail.session_id });
      return { type: 'result', ok: false, kind, cause, failureMailSent: true };
    } catch (err) {
      log('error', 'failure mail not sent', { message: messageOf(err) });
      return {
        type: 'result',
        ok: false,
        kind,
        cause,
        failureMailSent: false,
        failureMailError: messageOf(err),
      };
    }
  };

  // B-4: an adopted session is opened by its platform id, and never silently replaced.
  let sessionFile: string;
  let resumed: boolean;
  let adoptedCwd: string | undefined;
  if (mail.platform_session_id) {
    const found = await findPiSessionFile(job.agentDir, mail.platform_session_id);
    if (!found)
      return fail(
        'session_missing',
        `pi session ${mail.platform_session_id} was not found under ${join(job.agentDir, 'sessions')}`,
      );
    sessionFile = found;
    resumed = true;
    adoptedCwd = parseHeader(await readFirstLine(found))?.cwd;
  } else {
    sessionFile = mailSessionFile(job.dataDir, mail.session_id);
    resumed = existsSync(sessionFile);
  }

  // B-3: the address path if it exists, else a per-session fallback directory (logged).
  const ws = await resolveWorkspace({
    addressPath: adoptedCwd || mail.to_workspace,
    fallbackRoot: join(job.dataDir, 'workspaces'),
    sessionKey: mail.session_id,
  });
  if (ws.usedFallback) log('warn', 'working directory falls back', { cwd: ws.cwd, reason: ws.reason ?? '' });
  client = new GatewayClient({ baseUrl: job.gatewayUrl, key: job.agentKey, allowedRoots: [ws.cwd] });

  const plan = planTurn(
    { mail, selfName: job.agentName, backlog: job.backlog, continuedSession: resumed },
    locale,
  );
  const prompt = buildTurnPrompt(plan, mail);
  const turnId = `${mail.mail_id}#${job.attempt}`;
  const sends = new ExplicitSendRecord();
  const grants = new GrantStore({ file: join(job.dataDir, 'grants.json') });

  let runtime: ModelRuntime;
  try {
    runtime = await ModelRuntime.create({
      authPath: join(job.agentDir, 'auth.json'),
      modelsPath: join(job.agentDir, 'models.json'),
    });
  } catch (err) {
    return fail(resumed ? 'resume_failed' : 'all_models_failed', `pi model runtime: ${messageOf(err)}`);
  }

  // B-8: the admin's models in order for a new session; a resumed session keeps its model.
  let attempts: Array<ModelAttempt | { kind: 'resume' }>;
  if (resumed) attempts = [{ kind: 'resume' }];
  else {
    const available = await runtime.getAvailable().catch(() => undefined);
    const order = modelAttemptOrder({
      allowed: job.allowedModels,
      catalogue: available?.map((m) => `${m.provider}/${m.id}`),
      ...(job.hostDefault ? { hostDefault: job.hostDefault } : {}),
    });
    if (order.logLine) log(order.usedHostDefault ? 'warn' : 'info', order.logLine);
    attempts = order.attempts;
    if (attempts.length === 0) return fail('all_models_failed', order.logLine ?? 'no model to try');
  }

  const toolContext = (signal: AbortSignal | undefined): MailToolContext => ({
    client,
    mail: {
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      reply_address: mail.reply_address,
      self_address: mail.self_address,
    },
    recordExplicitSend: (target) => sends.record(turnId, target),
    reconnect: ({ url, key, client: next }) => {
      client = next;
      io.send({ type: 'reconnect', url, key });
    },
    identity: { name: job.agentName, platform: 'pi' },
    locale,
    ...(signal ? { signal } : {}),
  });

  let last: AttemptOutcome | undefined;
  for (const [index, attempt] of attempts.entries()) {
    if (io.signal.aborted) break;
    last = await runAttempt(attempt);
    if (last.ok) break;
    log('warn', 'model attempt failed', { model: last.model, cause: last.cause, attempt: String(index + 1) });
    // B-8: the next model gets a fresh session; the failed one is kept aside for the record.
    if (!resumed && index < attempts.length - 1 && existsSync(sessionFile)) {
      await rename(sessionFile, `${sessionFile}.failed-${Date.now()}-${index + 1}`).catch(() => undefined);
    }
  }
  if (!last) return fail('timeout', 'the turn was stopped before it started');
  if (!last.ok) {
    const kind: FailureKind = io.signal.aborted ? 'timeout' : resumed ? 'resume_failed' : 'all_models_failed';
    return fail(kind, last.cause);
  }

  await syncName(last.sessionName);

  // B-10: relay this turn's final text when the plan says so.
  const finalParts: FinalPart[] = (last.message?.content ?? []).map((c) => ({ type: c.type, text: c.text }));
  const decision = decideAutoRelay({
    plan,
    finalParts,
    explicitSendTargets: await sends.targetsFor(turnId),
    replyAddress: mail.reply_address,
    platformSessionId: last.platformSessionId,
    lastEntryId: last.lastEntryId,
  });
  const base = {
    type: 'result' as const,
    ok: true as const,
    model: last.model,
    platformSessionId: last.platformSessionId,
    sessionFile,
  };
  if (!decision.send) {
    log('info', 'no relay', { reason: decision.reason });
    return { ...base, relay: { sent: false, reason: decision.reason } };
  }
  try {
    const subject = /^re:/i.test(mail.subject) ? mail.subject : `Re: ${mail.subject}`;
    const res = await client.send({
      to: decision.to,
      subject: subject.slice(0, 500),
      body: decision.body,
      reply_to: mail.mail_id,
      from_session_id: mail.session_id,
      relay: 'summary',
      relay_key: decision.relayKey,
    });
    log('info', 'relayed', { to: decision.to, relay_key: decision.relayKey, status: res.status });
    return {
      ...base,
      relay: { sent: true, mailId: res.mail_id, duplicate: res.status === 'duplicate_relay' },
    };
  } catch (err) {
    log('error', 'relay failed', { message: messageOf(err) });
    return { ...base, relay: { sent: false, reason: `relay failed: ${messageOf(err)}` } };
  }

  /**
   * B-11: pi's session name → the Gateway session's title and alias. The fingerprint is stored
   * before the request (so a lost answer or our own echo never loops); the final alias after it.
   * Never fails the turn.
   */
  async function syncName(name: string | undefined): Promise<void> {
    const adopted = mail.platform_session_id !== '';
    const stateFile = namingStateFile(sessionFile);
    const state = adopted ? undefined : await readNamingState(stateFile);
    const decision = decideNamingSync({ adopted, platformName: name, state, agentName: job.agentName });
    if (!decision.sync) {
      if (decision.reason !== 'unnamed') log('info', 'naming sync skipped', { reason: decision.reason });
      return;
    }
    try {
      await writeFile(stateFile, JSON.stringify({ ...state, fingerprint: decision.fingerprint }));
      const res = await client.sessionSync(mail.session_id, decision.request);
      await writeFile(stateFile, JSON.stringify(namingStateAfterSync(decision.fingerprint, res)));
      log('info', 'naming synced', { alias: res.alias, title: res.title });
    } catch (err) {
      log('warn', 'naming sync failed', { message: messageOf(err) });
    }
  }

  async function runAttempt(attempt: ModelAttempt | { kind: 'resume' }): Promise<AttemptOutcome> {
    const wanted =
      attempt.kind === 'configured'
        ? `${attempt.provider}/${attempt.model}`
        : attempt.kind === 'host_default' && attempt.provider && attempt.model
          ? `${attempt.provider}/${attempt.model}`
          : '';
    const failed = (cause: string): AttemptOutcome => ({
      ok: false,
      cause,
      model: wanted || '(pi default)',
      platformSessionId: '',
      lastEntryId: '',
    });
    const model = wanted
      ? runtime.getModel(wanted.split('/')[0] ?? '', wanted.slice(wanted.indexOf('/') + 1))
      : undefined;
    if (wanted && !model) return failed(`model ${wanted} is not in pi's catalogue`);

    await mkdir(dirname(sessionFile), { recursive: true });
    const settingsManager = SettingsManager.inMemory({
      compaction: { enabled: false },
      retry: retrySettings(),
    });
    let seamInstalled = false;
    const resourceLoader = new DefaultResourceLoader({
      cwd: ws.cwd,
      agentDir: job.agentDir,
      settingsManager,
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      extensionFactories: [
        {
          name: 'agentmail',
          factory: createMailExtension({
            locale,
            toolContext,
            onSeamInstalled: () => {
              seamInstalled = true;
            },
            permission: {
              agentName: job.agentName,
              mode: () => mail.permission_mode,
              sessionId: () => mail.session_id,
              client: () => client,
              grants,
              waitForDecision: (relayKey, signal) => io.pending.wait(relayKey, signal ? { signal } : {}),
              locale,
              log,
            },
          }),
        },
      ],
    });
    await resourceLoader.reload();
    const sessionManager = SessionManager.open(sessionFile, undefined, ws.cwd);
    const { session, extensionsResult } = await createAgentSession({
      cwd: ws.cwd,
      agentDir: job.agentDir,
      modelRuntime: runtime,
      ...(model ? { model } : {}),
      sessionManager,
      settingsManager,
      resourceLoader,
    });
    const loadErrors = extensionsResult.errors.map((e) => `${e.path}: ${e.error}`);
    // P-8: the seam must really be installed; without it guarded tools would run unasked.
    if (!seamInstalled || loadErrors.length > 0) {
      session.dispose();
      return failed(
        `the AgentMail permission hook did not load: ${loadErrors.join('; ') || 'not registered'}`,
      );
    }
    io.send({
      type: 'log',
      level: 'info',
      msg: 'permission hook installed',
      fields: { mail_id: mail.mail_id },
    });
    await session.bindExtensions({});

    let final: AssistantMessageLike | undefined;
    const unsubscribe = session.subscribe((event) => {
      const e = event as { type: string; message?: { role?: string } };
      if (e.type === 'message_end' && e.message?.role === 'assistant')
        final = e.message as AssistantMessageLike;
    });
    const onAbort = (): void => void session.abort();
    io.signal.addEventListener('abort', onAbort, { once: true });
    let thrown: string | undefined;
    try {
      await session.prompt(prompt);
    } catch (err) {
      thrown = messageOf(err);
    } finally {
      io.signal.removeEventListener('abort', onAbort);
      unsubscribe();
    }
    const used =
      final?.provider && final.model ? `${final.provider}/${final.model}` : wanted || '(pi default)';
    const outcome: AttemptOutcome = {
      ok: thrown === undefined && final?.stopReason === 'stop',
      cause:
        thrown ??
        (final === undefined
          ? 'pi ended the turn without an assistant message'
          : final.stopReason === 'stop'
            ? ''
            : final.errorMessage || `the model stopped with stopReason "${final.stopReason ?? 'unknown'}"`),
      ...(final ? { message: final } : {}),
      model: used,
      platformSessionId: session.sessionId,
      lastEntryId: sessionManager.getLeafId() ?? '',
      ...(session.sessionName === undefined ? {} : { sessionName: session.sessionName }),
    };
    session.dispose();
    return outcome;
  }
}
