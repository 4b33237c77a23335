/**
 * One mail turn on the real pi SDK, run inside a worker child process (see SPEC B-4, B-7, B-8,
 * §7 pi): the pi side ({@link MailTurnPlatform}) of shared-policy's runMailTurn, which decides the
 * rest (workspace, prompt, model order, failure mail, relay, naming sync). The process holds one
 * pi session, runs one `prompt()` per attempt and reports.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { NewMailEvent } from '@agentmail/protocol';
import {
  type Locale,
  type NamingSyncState,
  namingFingerprint,
  type PendingPermissions,
  resolveLocale,
} from '@agentmail/shared-policy';
import {
  type AttemptResult,
  type AttemptTurn,
  type BridgeLogger,
  ExplicitSendRecord,
  GrantStore,
  type MailTurnPlatform,
  runMailTurn,
  type TurnAttempt,
} from '@agentmail/shared-policy/bridge';
import { GatewayClient } from '@agentmail/shared-policy/client';
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

/** A {@link BridgeLogger} over the IPC `log` message (the daemon writes the line). */
function ipcLogger(send: TurnIo['send'], mailId: string): BridgeLogger {
  const line =
    (level: 'info' | 'warn' | 'error') =>
    (obj: object, msg = ''): void => {
      const fields: Record<string, string | number | boolean> = { mail_id: mailId };
      for (const [k, v] of Object.entries(obj))
        fields[k] =
          typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : JSON.stringify(v);
      send({ type: 'log', level, msg, fields });
    };
  return { info: line('info'), warn: line('warn'), error: line('error') };
}

/**
 * Run the turn of `job` (shared-policy's runMailTurn over {@link piPlatform}) and report it.
 * Never throws: every failure ends in a failure mail (B-9) and a `{ ok: false }` report.
 */
export async function runTurn(job: WorkerJob, io: TurnIo): Promise<TurnReport> {
  const locale: Locale = resolveLocale(job.locale);
  const log = ipcLogger(io.send, job.mail.mail_id);
  const client = new GatewayClient({ baseUrl: job.gatewayUrl, key: job.agentKey });
  const report = await runMailTurn(
    {
      mail: job.mail,
      backlog: job.backlog,
      attempt: job.attempt,
      agentName: job.agentName,
      allowedModels: job.allowedModels,
      ...(job.hostDefault ? { hostDefault: job.hostDefault } : {}),
      client,
      fallbackRoot: join(job.dataDir, 'workspaces'),
      explicitSends: new ExplicitSendRecord(),
      locale,
      signal: io.signal,
      turnTimeoutMs: job.turnTimeoutMs,
      log,
      onReconnect: (url, key) => io.send({ type: 'reconnect', url, key }),
    },
    piPlatform(job, io, locale, log),
  );
  return { type: 'result', ...report };
}

/**
 * pi as a {@link MailTurnPlatform}: mail sessions are files under the bridge's data dir, adopted
 * sessions are found by id (first line only, §7 pi); each attempt opens the session file, loads
 * the AgentMail extension (tools + permission seam, P-8 verified) and runs one `prompt()`.
 */
function piPlatform(job: WorkerJob, io: TurnIo, locale: Locale, log: BridgeLogger): MailTurnPlatform {
  const { mail } = job;
  let sessionFile = mailSessionFile(job.dataDir, mail.session_id);
  /** A mail session pi does not have yet (never an adopted one): named after the subject (B-11). */
  let newMailSession = false;
  const grants = new GrantStore({ file: join(job.dataDir, 'grants.json') });
  let runtime: Promise<ModelRuntime> | undefined;
  const modelRuntime = (): Promise<ModelRuntime> => {
    runtime ??= ModelRuntime.create({
      authPath: join(job.agentDir, 'auth.json'),
      modelsPath: join(job.agentDir, 'models.json'),
    });
    return runtime;
  };

  return {
    platform: 'pi',
    async locateSession(m: NewMailEvent) {
      // B-4: an adopted session is opened by its platform id, and never silently replaced.
      if (m.platform_session_id) {
        const found = await findPiSessionFile(job.agentDir, m.platform_session_id);
        if (!found)
          return {
            kind: 'missing',
            cause: `pi session ${m.platform_session_id} was not found under ${join(job.agentDir, 'sessions')}`,
          };
        sessionFile = found;
        const cwd = parseHeader(await readFirstLine(found))?.cwd;
        return cwd ? { kind: 'adopted', cwd } : { kind: 'adopted' };
      }
      const resumed = existsSync(sessionFile);
      newMailSession = !resumed;
      return { kind: 'mail', resumed };
    },
    async catalogue() {
      const available = await (await modelRuntime()).getAvailable();
      return available.map((m) => `${m.provider}/${m.id}`);
    },
    runAttempt: (attempt, turn) => runAttempt(attempt, turn),
    async discardAttempt(index) {
      // B-8: the failed session is kept aside for the record; the next model gets a fresh file.
      if (existsSync(sessionFile))
        await rename(sessionFile, `${sessionFile}.failed-${Date.now()}-${index + 1}`);
    },
    namingState: {
      read: () => readNamingState(namingStateFile(sessionFile)),
      write: (state) => writeFile(namingStateFile(sessionFile), JSON.stringify(state)),
    },
  };

  async function runAttempt(attempt: TurnAttempt, turn: AttemptTurn): Promise<AttemptResult> {
    const wanted =
      attempt.kind === 'configured'
        ? `${attempt.provider}/${attempt.model}`
        : attempt.kind === 'host_default' && attempt.provider && attempt.model
          ? `${attempt.provider}/${attempt.model}`
          : '';
    const failed = (cause: string): AttemptResult => ({
      ok: false,
      cause,
      finalParts: [],
      model: wanted || '(pi default)',
      platformSessionId: '',
      lastEntryId: '',
    });
    let rt: ModelRuntime;
    try {
      rt = await modelRuntime();
    } catch (err) {
      return failed(`pi model runtime: ${messageOf(err)}`);
    }
    const model = wanted
      ? rt.getModel(wanted.split('/')[0] ?? '', wanted.slice(wanted.indexOf('/') + 1))
      : undefined;
    if (wanted && !model) return failed(`model ${wanted} is not in pi's catalogue`);

    await mkdir(dirname(sessionFile), { recursive: true });
    const settingsManager = SettingsManager.inMemory({
      compaction: { enabled: false },
      retry: retrySettings(),
    });
    let seamInstalled = false;
    const resourceLoader = new DefaultResourceLoader({
      cwd: turn.cwd,
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
            toolContext: (signal) => ({ ...turn.toolContext, ...(signal ? { signal } : {}) }),
            onSeamInstalled: () => {
              seamInstalled = true;
            },
            permission: {
              platform: 'pi',
              agentName: job.agentName,
              mode: () => mail.permission_mode,
              sessionId: () => mail.session_id,
              client: () => turn.toolContext.client,
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
    const sessionManager = SessionManager.open(sessionFile, undefined, turn.cwd);
    const { session, extensionsResult } = await createAgentSession({
      cwd: turn.cwd,
      agentDir: job.agentDir,
      modelRuntime: rt,
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
    log.info({}, 'permission hook installed');
    await session.bindExtensions({});
    if (newMailSession && attempt.kind !== 'resume') await nameNewSession(session);

    let final: AssistantMessageLike | undefined;
    const unsubscribe = session.subscribe((event) => {
      const e = event as { type: string; message?: { role?: string } };
      if (e.type === 'message_end' && e.message?.role === 'assistant')
        final = e.message as AssistantMessageLike;
    });
    const onAbort = (): void => void session.abort();
    turn.signal.addEventListener('abort', onAbort, { once: true });
    let thrown: string | undefined;
    try {
      await session.prompt(turn.prompt);
    } catch (err) {
      thrown = messageOf(err);
    } finally {
      turn.signal.removeEventListener('abort', onAbort);
      unsubscribe();
    }
    const used =
      final?.provider && final.model ? `${final.provider}/${final.model}` : wanted || '(pi default)';
    const result: AttemptResult = {
      ok: thrown === undefined && final?.stopReason === 'stop',
      cause:
        thrown ??
        (final === undefined
          ? 'pi ended the turn without an assistant message'
          : final.stopReason === 'stop'
            ? ''
            : final.errorMessage || `the model stopped with stopReason "${final.stopReason ?? 'unknown'}"`),
      finalParts: (final?.content ?? []).map((c) => ({ type: c.type, text: c.text })),
      model: used,
      platformSessionId: session.sessionId,
      lastEntryId: sessionManager.getLeafId() ?? '',
      ...(session.sessionName === undefined ? {} : { sessionName: session.sessionName }),
    };
    session.dispose();
    return result;
  }

  /**
   * B-11, Gateway → pi: a new mail session gets the mail subject as its pi session name (the
   * Gateway made the alias from the same subject, G-5). That name's fingerprint is the naming
   * baseline, so the turn does not sync it back; only a later rename (the model, a person's pi)
   * is synced. pi keeps the `session_info` entry in memory until the first message is written.
   */
  async function nameNewSession(session: {
    setSessionName(name: string): void;
    sessionName?: string | undefined;
  }): Promise<void> {
    if (namingFingerprint(mail.subject) === '') return;
    session.setSessionName(mail.subject);
    const fingerprint = namingFingerprint(session.sessionName);
    if (fingerprint !== '')
      await writeFile(
        namingStateFile(sessionFile),
        JSON.stringify({ fingerprint } satisfies NamingSyncState),
      );
  }
}
