/**
 * The pi bridge daemon (see SPEC §6): registers, heartbeats, reads SSE, de-duplicates, catches
 * up, queues per session, and runs ONE WORKER CHILD PROCESS PER MAIL (B-12) so no model work ever
 * runs on the event loop that reads SSE.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { HeartbeatRequest, MailSummary, NewMailEvent } from '@agentmail/protocol';
import {
  backlogEvent,
  buildFailureMail,
  CatchUp,
  GatewayClient,
  redeliver,
  resolveLocale,
  SeenMails,
  SessionQueue,
  SseClient,
  settleWithTimeout,
} from '@agentmail/shared-policy';
import type { PiBridgeConfig } from './config.js';
import {
  BRIDGE_VERSION,
  FIRST_SSE_OPEN_WAIT_MS,
  PROBE_TIMEOUT_MS,
  WORKER_STOP_GRACE_MS,
} from './constants.js';
import type { DaemonMessage, ProbeJob, ProbeReport, TurnReport, WorkerJob, WorkerMessage } from './ipc.js';
import type { Logger } from './log.js';
import { listPiSessions } from './session-files.js';

/** A worker that exited (or could not start) before reporting: redelivered (B-14). */
class WorkerLostError extends Error {
  override readonly name = 'WorkerLostError';
}

type WorkerOutcome = { report: TurnReport } | { timedOut: true; killed: boolean };

/**
 * The daemon. `start()` registers, takes the first heartbeat, opens the event stream (B-1) and
 * resolves after the catch-up pass (B-20); `stop()` is the graceful shutdown (B-15, P-7).
 */
export class PiBridgeDaemon {
  readonly #log: Logger;
  #config: PiBridgeConfig;
  #client: GatewayClient;
  readonly #seen = new SeenMails();
  readonly #queue: SessionQueue;
  readonly #workers = new Set<ChildProcess>();
  readonly #stopping = new AbortController();
  #sse: SseClient | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #allowedModels: string[] = [];
  #enforcement: { mode: 'native' | 'advisory'; reason?: string } = {
    mode: 'advisory',
    reason: 'permission hook not verified yet',
  };
  readonly #catchUp: CatchUp<MailSummary>;
  /** The last probed catalogue and the stats of the files it came from. */
  #catalogueCache: { files: string; models: HeartbeatRequest['models'] } | undefined;
  /** Forks go one per event-loop turn (each blocks the loop 5–15 ms; see {@link #forkSlot}). */
  #lastFork: Promise<void> = Promise.resolve();

  constructor(config: PiBridgeConfig, log: Logger) {
    this.#config = config;
    this.#log = log;
    this.#client = new GatewayClient({ baseUrl: config.gatewayUrl, key: config.agentKey });
    this.#queue = new SessionQueue({ concurrency: config.concurrency });
    this.#catchUp = new CatchUp<MailSummary>({
      seen: this.#seen,
      listUnread: async (limit) => (await this.#client.inbox({ status: 'unread', limit })).mails,
      // Serial per pass (B-20): each backlog mail is awaited before the next.
      deliver: async (summary, delivery) => {
        let parentFrom = '';
        try {
          parentFrom = (await this.#client.mail(summary.id)).parent_from;
        } catch (err) {
          this.#log.warn(
            { mail_id: summary.id, err: String(err) },
            'catch-up: full mail not readable; parent unknown',
          );
        }
        const event = backlogEvent(
          { ...summary, permission_mode: delivery.permissionMode },
          { mail: { parent_from: parentFrom } },
        );
        await this.#queue.run(event.session_id, () => this.#runMail(event, true));
      },
    });
  }

  /** Register, first heartbeat, SSE, catch-up (B-1, B-20). */
  async start(): Promise<void> {
    await this.#catalogue(); // the probe: permission hook (P-8) and catalogue, before anything else
    const reg = await this.#client.register({
      name: this.#config.agentName,
      platform: 'pi',
      version: BRIDGE_VERSION,
    });
    this.#log.info({ agent: reg.name, created: reg.created }, 'registered');
    let opened: () => void = () => undefined;
    const firstOpen = new Promise<void>((resolve) => {
      opened = resolve;
    });
    this.#sse = new SseClient({
      url: this.#config.gatewayUrl,
      key: this.#config.agentKey,
      signal: this.#stopping.signal,
      onEvent: (event) => {
        if (event.type === 'new_mail') this.#onNewMail(event.data);
        else if (event.type === 'permission_decision')
          this.#broadcast({ type: 'permission_decision', event: event.data });
      },
      onError: (err) => this.#log.warn({ code: err.code, err: err.message }, 'sse problem'),
      onOpen: (info) => {
        this.#log.info({ connection: info.connection, last_event_id: info.lastEventId }, 'sse open');
        opened();
      },
    });
    // B-1: the first heartbeat comes before the event stream, so the first mail already runs with
    // the admin's model selection (G-27) instead of the host default.
    const ok = await this.#beat();
    void this.#sse.start();
    // Catch-up after the stream is open (or given up on): a mail arriving in between is then
    // either in the inbox listing or on the stream, never in neither (B-20).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      firstOpen,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FIRST_SSE_OPEN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    // The period starts before the catch-up, which awaits each backlog turn (G-25: stay online).
    this.#heartbeatTimer = setInterval(() => void this.#heartbeat(), this.#config.heartbeatMs);
    await this.#afterBeat(ok);
  }

  /** Graceful shutdown (B-15, P-7): stop reading, deny pending questions, stop turns, kill stragglers. */
  async stop(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#log.info({ workers: this.#workers.size }, 'shutting down');
    this.#stopping.abort();
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    this.#queue.close();
    await this.#sse?.close();
    const exits = [...this.#workers].map(
      (child) =>
        new Promise<void>((resolve) =>
          child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
        ),
    );
    this.#broadcast({ type: 'shutdown' });
    const grace = setTimeout(() => {
      for (const child of this.#workers) this.#kill(child);
    }, WORKER_STOP_GRACE_MS);
    await Promise.all(exits);
    clearTimeout(grace);
    this.#log.info('stopped');
  }

  #onNewMail(mail: NewMailEvent): void {
    if (!this.#seen.claim(mail.mail_id)) {
      this.#log.info({ mail_id: mail.mail_id }, 'duplicate new_mail ignored');
      return;
    }
    this.#log.info(
      { mail_id: mail.mail_id, session_id: mail.session_id, from: mail.from_name },
      'mail queued',
    );
    this.#queue
      .run(mail.session_id, () => this.#runMail(mail, false))
      .catch((err: unknown) => {
        this.#log.warn(
          { mail_id: mail.mail_id, err: String(err) },
          'mail not run (bridge shutting down); it stays unread for catch-up',
        );
      });
  }

  /**
   * The model catalogue (G-25) from a probe child, probed again only when pi's `models.json` or
   * `auth.json` changed (a probe loads pi: about 2 s of CPU).
   */
  async #catalogue(): Promise<HeartbeatRequest['models']> {
    const files = async (): Promise<string> =>
      (
        await Promise.all(
          ['models.json', 'auth.json'].map((f) =>
            stat(join(this.#config.agentDir, f)).then(
              (s) => `${s.mtimeMs}:${s.size}`,
              () => '-',
            ),
          ),
        )
      ).join('|');
    if (this.#catalogueCache?.files === (await files())) return this.#catalogueCache.models;
    const models = await this.#probe();
    // Stat after the probe: pi may have created auth.json.
    this.#catalogueCache = { files: await files(), models };
    return models;
  }

  /**
   * Fork a probe child (worker-main with a `probe` job, src/probe.ts): it checks that the permission
   * hook registers (P-8) and reads pi's catalogue. pi is never loaded in this process (B-12).
   */
  async #probe(): Promise<HeartbeatRequest['models']> {
    await this.#forkSlot();
    const job: ProbeJob = {
      type: 'probe',
      gatewayUrl: this.#config.gatewayUrl,
      agentKey: this.#config.agentKey,
      agentName: this.#config.agentName,
      dataDir: this.#config.dataDir,
      agentDir: this.#config.agentDir,
      locale: this.#config.locale,
    };
    const report = await new Promise<ProbeReport | undefined>((resolve) => {
      let result: ProbeReport | undefined;
      const child = fork(this.#config.workerPath, [], {
        detached: true,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        env: { ...process.env, PI_CODING_AGENT_DIR: this.#config.agentDir },
      });
      this.#workers.add(child);
      const timer = setTimeout(() => this.#kill(child), PROBE_TIMEOUT_MS);
      child.on('message', (m: WorkerMessage) => {
        if (m.type === 'ready') this.#send(child, job);
        else if (m.type === 'probe_result') result = m;
      });
      const done = (): void => {
        clearTimeout(timer);
        this.#workers.delete(child);
        resolve(result);
      };
      child.once('error', done);
      child.once('exit', done);
    });
    this.#enforcement = report?.enforcement ?? {
      mode: 'advisory',
      reason: 'permission hook check failed: the probe process gave no result',
    };
    if (this.#enforcement.mode === 'advisory')
      this.#log.error({ reason: this.#enforcement.reason }, 'mode enforcement advisory');
    else this.#log.info('permission hook verified: mode enforcement native');
    if (!report?.models)
      this.#log.warn(
        { err: report?.modelsError ?? 'no probe result' },
        'model catalogue unreadable: omitted from the heartbeat (G-25)',
      );
    return report?.models;
  }

  /** A heartbeat, then the catch-up check (B-20). */
  async #heartbeat(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    await this.#afterBeat(await this.#beat());
  }

  /** One heartbeat (G-25..G-27): session snapshot and model catalogue out, allowed models in. */
  async #beat(): Promise<boolean> {
    if (this.#stopping.signal.aborted) return false;
    const sessions = await listPiSessions(this.#config.agentDir);
    if (sessions === undefined) this.#log.warn('pi session folder unreadable: snapshot omitted (G-25)');
    const models = await this.#catalogue();
    const body: HeartbeatRequest = {
      mode_enforcement: this.#enforcement.mode,
      ...(this.#enforcement.reason ? { mode_enforcement_reason: this.#enforcement.reason } : {}),
      version: BRIDGE_VERSION,
      ...(sessions === undefined ? {} : { sessions }),
      ...(models === undefined ? {} : { models }),
    };
    try {
      const res = await this.#client.heartbeat(body);
      this.#allowedModels = res.allowed_models;
      return true;
    } catch (err) {
      this.#log.warn({ err: String(err) }, 'heartbeat failed');
      return false;
    }
  }

  /** Catch-up after a heartbeat (runs once, after the first successful one, B-20). */
  async #afterBeat(ok: boolean): Promise<void> {
    const result = await this.#catchUp.afterHeartbeat(ok);
    if (result.status === 'ran')
      this.#log.info(
        {
          delivered: result.delivered.map((m) => m.id),
          skipped: result.skipped,
          failed: result.failed.length,
        },
        'catch-up done',
      );
    else if (result.status === 'list_failed')
      this.#log.warn({ err: String(result.error) }, 'catch-up: inbox unreadable');
  }

  /** Run one mail: redelivered workers (B-14), timeout (B-7), failure mail when all is lost (B-9). */
  async #runMail(mail: NewMailEvent, backlog: boolean): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    const result = await redeliver((attempt) => this.#runWorker(mail, backlog, attempt), {
      shouldRetry: (err) => err instanceof WorkerLostError && !this.#stopping.signal.aborted,
      onRetry: ({ attempt, error, delayMs }) =>
        this.#log.warn(
          { mail_id: mail.mail_id, attempt, delay_ms: delayMs, err: String(error) },
          'worker lost; redelivering',
        ),
    });
    if (result.ok) {
      const outcome = result.value;
      if ('timedOut' in outcome) {
        this.#log.error({ mail_id: mail.mail_id, killed: outcome.killed }, 'turn timed out');
        await this.#sendFailure(mail, 'timeout', `no result within ${this.#config.turnTimeoutMs} ms`);
      } else if (outcome.report.ok)
        this.#log.info(
          {
            mail_id: mail.mail_id,
            model: outcome.report.model,
            relay: outcome.report.relay,
            worker_max_rss_kb: outcome.report.maxRssKb,
          },
          'turn done',
        );
      else
        this.#log.error(
          {
            mail_id: mail.mail_id,
            kind: outcome.report.kind,
            cause: outcome.report.cause,
            failure_mail: outcome.report.failureMailSent,
            worker_max_rss_kb: outcome.report.maxRssKb,
          },
          'turn failed',
        );
      return;
    }
    if (this.#stopping.signal.aborted) {
      this.#log.warn(
        { mail_id: mail.mail_id },
        'turn stopped by shutdown; the mail stays for catch-up if unread',
      );
      return;
    }
    this.#log.error(
      { mail_id: mail.mail_id, attempts: result.attempts, err: String(result.lastError) },
      'worker given up',
    );
    await this.#sendFailure(
      mail,
      'worker_lost',
      String((result.lastError as Error)?.message ?? result.lastError),
      result.attempts,
    );
  }

  async #sendFailure(
    mail: NewMailEvent,
    kind: 'timeout' | 'worker_lost',
    cause: string,
    attempts?: number,
  ): Promise<void> {
    try {
      const fm = buildFailureMail({
        kind,
        mail,
        cause,
        agentName: this.#config.agentName,
        timeoutMs: this.#config.turnTimeoutMs,
        ...(attempts === undefined ? {} : { attempts }),
        locale: resolveLocale(this.#config.locale),
      });
      const res = await this.#client.send({ ...fm, from_session_id: mail.session_id });
      this.#log.info({ mail_id: mail.mail_id, kind, status: res.status }, 'failure mail sent');
    } catch (err) {
      this.#log.error({ mail_id: mail.mail_id, kind, err: String(err) }, 'failure mail not sent');
    }
  }

  /**
   * Resolves in an event-loop turn of its own, one caller per turn: a `fork` blocks the loop for
   * 5–15 ms (more with pi loaded), so three mails arriving in one SSE chunk must not fork in one turn.
   */
  #forkSlot(): Promise<void> {
    const slot = this.#lastFork.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.#lastFork = slot;
    return slot;
  }

  /** One worker process for one mail; resolves with its report or a timeout, rejects when it is lost. */
  async #runWorker(mail: NewMailEvent, backlog: boolean, attempt: number): Promise<WorkerOutcome> {
    await this.#forkSlot();
    if (this.#stopping.signal.aborted) throw new WorkerLostError('the bridge is stopping');
    const job: WorkerJob = {
      type: 'job',
      mail,
      backlog,
      gatewayUrl: this.#config.gatewayUrl,
      agentKey: this.#config.agentKey,
      agentName: this.#config.agentName,
      dataDir: this.#config.dataDir,
      agentDir: this.#config.agentDir,
      allowedModels: this.#allowedModels,
      hostDefault: this.#config.hostDefault,
      attempt,
      locale: this.#config.locale,
    };
    const spawnedAt = Date.now();
    // detached: the worker leads its own process group, so a kill also ends its tool processes.
    const child = fork(this.#config.workerPath, [], {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, PI_CODING_AGENT_DIR: this.#config.agentDir },
    });
    this.#workers.add(child);
    this.#log.info({ mail_id: mail.mail_id, attempt, pid: child.pid }, 'worker spawned');
    let report: TurnReport | undefined;
    const done = new Promise<TurnReport>((resolve, reject) => {
      child.on('message', (m: WorkerMessage) => {
        switch (m.type) {
          case 'ready':
            child.send(job);
            break;
          case 'result':
            report = m;
            break;
          case 'reconnect':
            this.#reconnect(m.url, m.key);
            break;
          case 'log':
            this.#log[m.level](
              { ...m.fields, worker: child.pid, since_spawn_ms: Date.now() - spawnedAt },
              m.msg,
            );
            break;
        }
      });
      child.once('error', (err) => reject(new WorkerLostError(`worker could not run: ${err.message}`)));
      child.once('exit', (code, signal) => {
        this.#workers.delete(child);
        if (report) resolve(report);
        else reject(new WorkerLostError(`worker exited (code ${code}, signal ${signal}) before reporting`));
      });
    });
    return settleWithTimeout(done, {
      timeoutMs: this.#config.turnTimeoutMs,
      stop: () => this.#send(child, { type: 'abort', reason: 'turn timeout' }),
      kill: () => this.#kill(child),
    }).then((r) => {
      if (r.ok) return { report: r.value };
      if (r.reason === 'timeout') return { timedOut: true as const, killed: r.killed };
      throw r.error;
    });
  }

  /** B-18: the tool already probed the new Gateway; switch the live client and the stream. */
  #reconnect(url: string, key: string): void {
    this.#config = { ...this.#config, gatewayUrl: url, agentKey: key };
    this.#client = this.#client.withConfig({ baseUrl: url, key });
    this.#sse?.reconfigure({ url, key });
    this.#log.info({ url }, 'reconnected to another Gateway');
  }

  #send(child: ChildProcess, message: DaemonMessage): void {
    if (child.connected)
      child.send(message, (err) => err && this.#log.warn({ err: err.message }, 'ipc send failed'));
  }

  #broadcast(message: DaemonMessage): void {
    for (const child of this.#workers) this.#send(child, message);
  }

  #kill(child: ChildProcess): void {
    if (child.pid === undefined || child.exitCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
}
