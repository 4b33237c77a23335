/**
 * The connection loop every bridge runs (see SPEC B-1, B-2, B-7, B-12..B-15, B-18, B-20, G-25):
 * register, heartbeat, the event stream, catch-up, de-duplication, the per-session queue, turn
 * timeouts, redelivery and shutdown. The platform runs turns behind {@link BridgeHost}.
 */
import type {
  HeartbeatRequest,
  MailSummary,
  NewMailEvent,
  PermissionDecisionEvent,
} from '@agentmail/protocol';
import { backlogEvent } from '../backlog-event.js';
import { CatchUp, type CatchUpResult, SeenMails } from '../catch-up.js';
import { GatewayClient } from '../client/gateway-client.js';
import { SseClient, type SseSleep } from '../client/sse-client.js';
import { REDELIVERY_BACKOFF_MS, redeliver } from '../redelivery.js';
import { SessionQueue } from '../session-queue.js';
import { STOP_GRACE_MS, settleWithTimeout } from '../settle.js';
import { resolveLocale } from '../texts/index.js';
import { BridgeLock } from './bridge-lock.js';
import { sendFailureMail } from './failure-notice.js';
import type { BridgeLogger } from './logger.js';
import type { MailTurnReport } from './turn-report.js';

/** How long `start()` waits for the first event stream to open before the catch-up runs anyway, in ms (B-1, B-20). @default 10_000 */
export const FIRST_SSE_OPEN_WAIT_MS = 10_000;

/** Configuration of {@link BridgeRuntime}. */
export interface BridgeRuntimeConfig {
  gatewayUrl: string;
  agentKey: string;
  agentName: string;
  /** Registered platform name (`pi`, `opencode`, …). */
  platform: string;
  /** Bridge version for register and heartbeat. */
  version: string;
  /** Sessions in parallel (B-13). */
  concurrency: number;
  /** Heartbeat period, in ms (G-25). */
  heartbeatMs: number;
  /** Turn timeout, in ms (B-7). */
  turnTimeoutMs: number;
  /** After a timeout or shutdown abort, how long before giving up on the turn, in ms. @default STOP_GRACE_MS */
  stopGraceMs?: number;
  /** The catch-up waits at most this long for the first SSE open, in ms. @default FIRST_SSE_OPEN_WAIT_MS */
  firstSseOpenWaitMs?: number;
  /** Locale of failure mails. @default 'en' */
  locale?: string;
  /** Waits between redeliveries, in ms (B-14). @default REDELIVERY_BACKOFF_MS */
  redeliveryBackoffMs?: readonly number[];
  /** Reconnect sleep of the event stream (tests). @default the SseClient's */
  sseSleep?: SseSleep;
  /**
   * The bridge's data directory: when set, only the process holding the bridge lock there (one per
   * agent name, {@link BridgeLock}) acts as the bridge; `start()` of any other waits in standby
   * and takes over when the holder stops or dies (see SPEC G-22). Unset: no lock (tests).
   */
  lockDir?: string;
  /** A bridge lock not refreshed for this long is taken over, in ms. @default BRIDGE_LOCK_STALE_MS */
  lockStaleMs?: number;
  /** A standby tries to take the bridge lock this often, in ms. @default BRIDGE_LOCK_RETRY_MS */
  lockRetryMs?: number;
}

/** The platform's part of every heartbeat (G-25): omit what cannot be read. */
export interface HeartbeatSnapshot {
  sessions?: HeartbeatRequest['sessions'];
  models?: HeartbeatRequest['models'];
  mode_enforcement: 'native' | 'advisory';
  mode_enforcement_reason?: string;
}

/** One delivery of a mail to the platform. */
export interface MailRun {
  mail: NewMailEvent;
  /** A catch-up delivery (B-20). */
  backlog: boolean;
  /** 1-based delivery attempt (B-14). */
  attempt: number;
  /** From the last heartbeat answer (G-27). */
  allowedModels: readonly string[];
  /** The live client (after B-18 switches). */
  client: GatewayClient;
  /** Aborted on turn timeout (reason `'timeout'`) and shutdown (`'shutdown'`). */
  signal: AbortSignal;
  /** The turn timeout the signal enforces, in ms (B-7): named in a timeout failure mail. */
  turnTimeoutMs: number;
}

/** Throw this from `runMail` when the platform lost the turn before it reported (worker died): redelivered with backoff (B-14). */
export class TurnLostError extends Error {
  override readonly name = 'TurnLostError';
}

/** The platform side of {@link BridgeRuntime}. */
export interface BridgeHost {
  /** The platform's snapshot for the next heartbeat (G-25). A throw fails that heartbeat. */
  heartbeat(): Promise<HeartbeatSnapshot>;
  /** Run one mail turn end to end (usually via runMailTurn). Should not throw except {@link TurnLostError}. */
  runMail(run: MailRun): Promise<MailTurnReport>;
  /** An SSE `permission_decision` (G-21). */
  onPermissionDecision?(event: PermissionDecisionEvent): void;
  /** After B-18 switched the live client and stream. */
  onReconnect?(url: string, key: string): void;
  /** Shutdown hook: resolve pending permissions as denied (P-7), stop turns (B-15). */
  onShutdown?(): Promise<void> | void;
  /** The bridge lock was lost (this process was frozen past its staleness): the runtime has stopped. */
  onLockLost?(): void;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The bridge's connection loop (see SPEC B-1, B-2, B-12..B-15, B-18, B-20):
 * - `start()`: register → first heartbeat → SSE (with `Last-Event-ID` on reconnects) → wait for
 *   the first open (bounded) → periodic heartbeat → catch-up (B-20);
 * - each mail is claimed once in a {@link SeenMails} shared by SSE and catch-up, then run in a
 *   per-session {@link SessionQueue} (serial per session, parallel across sessions up to `concurrency`);
 * - a turn gets `turnTimeoutMs`: then its signal is aborted (`'timeout'`), and after `stopGraceMs`
 *   it is given up with a `timeout` failure mail (B-7, B-9);
 * - a {@link TurnLostError} is redelivered (1 s, 2 s; 3 attempts), then a `worker_lost` failure mail (B-14);
 * - `stop()` stops reading, aborts every turn (`'shutdown'`), calls the host's shutdown hook and
 *   waits at most `stopGraceMs` for the turns (B-15).
 *
 * Logs one line per decision ("mail queued", "duplicate new_mail ignored", "turn done", "turn failed", …).
 * @example
 * const runtime = new BridgeRuntime(config, { heartbeat, runMail: (run) => runMailTurn(..., platform) }, log);
 * await runtime.start();
 */
export class BridgeRuntime {
  readonly #host: BridgeHost;
  readonly #log: BridgeLogger;
  #config: BridgeRuntimeConfig;
  #client: GatewayClient;
  readonly #seen = new SeenMails();
  readonly #queue: SessionQueue;
  readonly #catchUp: CatchUp<MailSummary>;
  readonly #stopping = new AbortController();
  readonly #inflight = new Set<Promise<unknown>>();
  #sse: SseClient | undefined;
  #heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  #allowedModels: readonly string[] = [];
  #lock: BridgeLock | undefined;

  /** @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `gatewayUrl` is not an http(s) URL. */
  constructor(config: BridgeRuntimeConfig, host: BridgeHost, log: BridgeLogger) {
    this.#config = config;
    this.#host = host;
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
            { mail_id: summary.id, err: messageOf(err) },
            'catch-up: full mail not readable; parent unknown',
          );
        }
        // The inbox item carries platform_session_id for an adopted session (G-37): the backlog
        // turn resumes it like a live one (B-4).
        const event = backlogEvent(
          { ...summary, permission_mode: delivery.permissionMode },
          { mail: { parent_from: parentFrom } },
        );
        await this.#queue.run(event.session_id, () => this.#runMail(event, true));
      },
    });
  }

  /** The live Gateway client (switched by {@link BridgeRuntime.reconnect}). */
  get client(): GatewayClient {
    return this.#client;
  }

  /** The admin's model selection from the last heartbeat answer (G-27). */
  get allowedModels(): readonly string[] {
    return this.#allowedModels;
  }

  /**
   * Register, first heartbeat, SSE, catch-up (B-1, B-20); resolves after the catch-up pass.
   * @throws the Gateway client's error when the registration fails.
   */
  async start(): Promise<void> {
    if (!(await this.#lead())) return;
    const reg = await this.#client.register({
      name: this.#config.agentName,
      platform: this.#config.platform,
      version: this.#config.version,
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
      ...(this.#config.sseSleep ? { sleep: this.#config.sseSleep } : {}),
      onEvent: (event) => {
        if (event.type === 'new_mail') this.#onNewMail(event.data);
        else if (event.type === 'permission_decision') this.#host.onPermissionDecision?.(event.data);
      },
      onError: (err) => this.#log.warn({ code: err.code, err: err.message }, 'sse problem'),
      onOpen: (info) => {
        this.#log.info({ connection: info.connection, last_event_id: info.lastEventId }, 'sse open');
        opened();
        // No cursor: the Gateway replays nothing (G-22), so a mail created while the stream was
        // down (e.g. a Gateway restart) is only in the inbox: one more catch-up pass (B-20).
        // Before the start pass has begun this is a no-op (the start pass covers it).
        if (info.lastEventId === undefined)
          void this.#catchUp.again().then((r) => this.#logCatchUp(r, 'stream reopened without cursor'));
      },
    });
    // B-1: the first heartbeat comes before the event stream, so the first mail already runs with
    // the admin's model selection (G-27) instead of the host default.
    const ok = await this.#beat();
    void this.#sse.start();
    // Catch-up after the stream is open (or given up on): a mail arriving in between is then
    // either in the inbox listing or on the stream, never in neither (B-20).
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      firstOpen,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#config.firstSseOpenWaitMs ?? FIRST_SSE_OPEN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    // The period starts before the catch-up, which awaits each backlog turn (G-25: stay online).
    this.#heartbeatTimer = setInterval(() => void this.#heartbeat(), this.#config.heartbeatMs);
    await this.#afterBeat(ok);
  }

  /** Graceful shutdown (B-15, P-7): stop reading, abort turns, the host's hook, wait (bounded) for turns. */
  async stop(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#log.info({ turns: this.#inflight.size }, 'shutting down');
    this.#stopping.abort('shutdown');
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    this.#queue.close();
    await this.#sse?.close();
    try {
      await this.#host.onShutdown?.();
    } catch (err) {
      this.#log.warn({ err: messageOf(err) }, 'shutdown hook failed');
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.#inflight]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#config.stopGraceMs ?? STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    await this.#lock?.release();
    this.#log.info({}, 'stopped');
  }

  /**
   * SPEC G-22: one bridge per agent and data directory. Without `lockDir` true at once; else waits
   * as a standby (one log line) until the bridge lock is held (true) or the runtime stops (false).
   */
  async #lead(): Promise<boolean> {
    const dir = this.#config.lockDir;
    if (dir === undefined) return true;
    // Reused when start() is retried (a failed registration): the lock may already be ours.
    this.#lock ??= new BridgeLock({
      dir,
      agentName: this.#config.agentName,
      ...(this.#config.lockStaleMs === undefined ? {} : { staleMs: this.#config.lockStaleMs }),
      ...(this.#config.lockRetryMs === undefined ? {} : { retryMs: this.#config.lockRetryMs }),
      onLost: (err) => {
        this.#log.error(
          { lock: this.#lock?.path, err: messageOf(err) },
          'bridge lock lost: this process stops acting as the bridge',
        );
        void this.stop().then(() => this.#host.onLockLost?.());
      },
    });
    const lock = this.#lock;
    const before = lock.held;
    const since = Date.now();
    let waited = false;
    const held = await lock.acquire(this.#stopping.signal, (owner) => {
      waited = true;
      this.#log.info(
        { lock: lock.path, holder_pid: owner?.pid, holder_host: owner?.hostname },
        'standby: another process is the AgentMail bridge of this agent; this one takes over when it stops',
      );
    });
    if (held && this.#stopping.signal.aborted) {
      await lock.release(); // stop() ran while the lock was being taken
      return false;
    }
    if (before) return held;
    if (held && waited)
      this.#log.info(
        { lock: lock.path, waited_ms: Date.now() - since },
        'bridge lock taken over: this process is now the bridge',
      );
    else if (held) this.#log.info({ lock: lock.path }, 'bridge lock taken');
    return held;
  }

  /**
   * B-18: switch the live client and the event stream to a Gateway the connect_to_server tool
   * already probed; then the host's `onReconnect`.
   */
  reconnect(url: string, key: string): void {
    this.#config = { ...this.#config, gatewayUrl: url, agentKey: key };
    this.#client = this.#client.withConfig({ baseUrl: url, key });
    this.#sse?.reconfigure({ url, key });
    this.#log.info({ url }, 'reconnected to another Gateway');
    this.#host.onReconnect?.(url, key);
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
          { mail_id: mail.mail_id, err: messageOf(err) },
          'mail not run (bridge shutting down); it stays unread for catch-up',
        );
      });
  }

  async #heartbeat(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    await this.#afterBeat(await this.#beat());
  }

  /** One heartbeat (G-25..G-27): the host's snapshot out, allowed models in. */
  async #beat(): Promise<boolean> {
    if (this.#stopping.signal.aborted) return false;
    try {
      const snap = await this.#host.heartbeat();
      const body: HeartbeatRequest = {
        mode_enforcement: snap.mode_enforcement,
        ...(snap.mode_enforcement_reason ? { mode_enforcement_reason: snap.mode_enforcement_reason } : {}),
        version: this.#config.version,
        ...(snap.sessions === undefined ? {} : { sessions: snap.sessions }),
        ...(snap.models === undefined ? {} : { models: snap.models }),
      };
      const res = await this.#client.heartbeat(body);
      this.#allowedModels = res.allowed_models;
      return true;
    } catch (err) {
      this.#log.warn({ err: messageOf(err) }, 'heartbeat failed');
      return false;
    }
  }

  /** Catch-up after a heartbeat (the start pass after the first successful one, or a due pass whose listing failed, B-20). */
  async #afterBeat(ok: boolean): Promise<void> {
    this.#logCatchUp(await this.#catchUp.afterHeartbeat(ok), 'heartbeat');
  }

  #logCatchUp(result: CatchUpResult<MailSummary>, trigger: string): void {
    if (result.status === 'ran')
      this.#log.info(
        {
          trigger,
          delivered: result.delivered.map((m) => m.id),
          skipped: result.skipped,
          failed: result.failed.length,
        },
        'catch-up done',
      );
    else if (result.status === 'list_failed')
      this.#log.warn({ trigger, err: messageOf(result.error) }, 'catch-up: inbox unreadable');
  }

  /** One delivery with its timeout (B-7): the report, or 'timeout'; rejects with a lost turn. */
  async #deliver(mail: NewMailEvent, backlog: boolean, attempt: number): Promise<MailTurnReport | 'timeout'> {
    if (this.#stopping.signal.aborted) throw new TurnLostError('the bridge is stopping');
    const run = new AbortController();
    const onStop = (): void => run.abort('shutdown');
    this.#stopping.signal.addEventListener('abort', onStop, { once: true });
    const work = Promise.resolve().then(() =>
      this.#host.runMail({
        mail,
        backlog,
        attempt,
        allowedModels: this.#allowedModels,
        turnTimeoutMs: this.#config.turnTimeoutMs,
        client: this.#client,
        signal: run.signal,
      }),
    );
    this.#inflight.add(work);
    try {
      const r = await settleWithTimeout(work, {
        timeoutMs: this.#config.turnTimeoutMs,
        graceMs: this.#config.stopGraceMs ?? STOP_GRACE_MS,
        stop: () => run.abort('timeout'),
        kill: () => undefined, // the host stops its own processes on the aborted signal
      });
      if (r.ok) return r.value;
      if (r.reason === 'timeout') return 'timeout';
      throw r.error;
    } finally {
      this.#stopping.signal.removeEventListener('abort', onStop);
      void work.then(
        () => this.#inflight.delete(work),
        () => this.#inflight.delete(work),
      );
    }
  }

  /** Run one mail: redelivery (B-14), timeout (B-7), failure mail when all is lost (B-9). */
  async #runMail(mail: NewMailEvent, backlog: boolean): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    const result = await redeliver((attempt) => this.#deliver(mail, backlog, attempt), {
      backoffMs: this.#config.redeliveryBackoffMs ?? REDELIVERY_BACKOFF_MS,
      sleep,
      shouldRetry: (err) => err instanceof TurnLostError && !this.#stopping.signal.aborted,
      onRetry: ({ attempt, error, delayMs }) =>
        this.#log.warn(
          { mail_id: mail.mail_id, attempt, delay_ms: delayMs, err: messageOf(error) },
          'turn lost; redelivering',
        ),
    });
    if (result.ok) {
      const report = result.value;
      const interrupted = report === 'timeout' || (!report.ok && !report.failureMailSent);
      if (this.#stopping.signal.aborted && interrupted) {
        this.#log.warn(
          { mail_id: mail.mail_id },
          'turn stopped by shutdown; the mail stays unread for catch-up',
        );
        return;
      }
      // The mail got its turn (or its failure mail): it is no longer backlog (B-20), so a restart
      // does not run it again. An interrupted turn (shutdown, above), or a failure whose mail
      // could not be sent, leaves it unread: nothing is lost, the next catch-up runs it.
      if (!interrupted) await this.#markHandled(mail);
      if (report === 'timeout') {
        this.#log.error({ mail_id: mail.mail_id, timeout_ms: this.#config.turnTimeoutMs }, 'turn timed out');
        await this.#sendFailure(mail, 'timeout', `no result within ${this.#config.turnTimeoutMs} ms`);
      } else if (report.ok)
        this.#log.info(
          { mail_id: mail.mail_id, model: report.model, relay: report.relay, ...report.logFields },
          'turn done',
        );
      else
        this.#log.error(
          {
            mail_id: mail.mail_id,
            kind: report.kind,
            cause: report.cause,
            failure_mail: report.failureMailSent,
            ...report.logFields,
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
      { mail_id: mail.mail_id, attempts: result.attempts, err: messageOf(result.lastError) },
      'turn given up',
    );
    await this.#markHandled(mail);
    await this.#sendFailure(mail, 'worker_lost', messageOf(result.lastError), result.attempts);
  }

  /** Mark a handled mail read (B-20); a failure is logged, the next catch-up may then run it again. */
  async #markHandled(mail: NewMailEvent): Promise<void> {
    try {
      await this.#client.markRead([mail.mail_id]);
    } catch (err) {
      this.#log.warn({ mail_id: mail.mail_id, err: messageOf(err) }, 'handled mail not marked read');
    }
  }

  async #sendFailure(
    mail: NewMailEvent,
    kind: 'timeout' | 'worker_lost',
    cause: string,
    attempts?: number,
  ): Promise<void> {
    await sendFailureMail(this.#client, {
      kind,
      mail,
      cause,
      agentName: this.#config.agentName,
      locale: resolveLocale(this.#config.locale),
      timeoutMs: this.#config.turnTimeoutMs,
      ...(attempts === undefined ? {} : { attempts }),
      log: this.#log,
    });
  }
}
