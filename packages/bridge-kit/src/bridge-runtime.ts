/**
 * The connection loop every bridge runs (see SPEC B-1, B-2, B-7, B-12..B-15, B-18, B-20, G-25):
 * register, heartbeat, the event stream, catch-up, de-duplication, the per-session queue, turn
 * timeouts, redelivery and shutdown. It is the engine of {@link createBridge}; the host runs turns
 * behind {@link BridgeHost}. Everything it does is a typed event on its bus (logging subscribes).
 */
import type { HeartbeatRequest, MailSummary, NewMailEvent } from '@agentmail/protocol';
import {
  backlogEvent,
  CatchUp,
  type CatchUpResult,
  messageOf,
  SeenMails,
  SessionQueue,
  STOP_GRACE_MS,
} from '@agentmail/shared-policy';
import { ApiClient, GatewayClient, SseClient, undiciTransport } from '@agentmail/shared-policy/client';
import { BridgeLock } from './bridge-lock.js';
import type { BridgeEvent, CatchUpTrigger, EmitEvent } from './events.js';
import { MailDelivery } from './mail-delivery.js';
import type { BridgeHost, BridgeRuntimeConfig } from './runtime-host.js';
import { StartedTurns } from './turn-journal.js';
import { withdrawalsSettled } from './withdraw.js';

export { FAILPOINT_VARIABLE } from './mail-delivery.js';
export {
  type BridgeHost,
  type BridgeRuntimeConfig,
  type HeartbeatSnapshot,
  type MailRun,
  TurnLostError,
} from './runtime-host.js';

/**
 * How long a stopping bridge waits for its goodbye (`POST /agent/offline`, SPEC H-3) before it
 * stops anyway, in ms. @default 2_000
 */
export const OFFLINE_NOTICE_TIMEOUT_MS = 2_000;

/** How long `start()` waits for the first event stream to open before the catch-up runs anyway, in ms (B-1, B-20). @default 10_000 */
export const FIRST_SSE_OPEN_WAIT_MS = 10_000;

/**
 * The bridge's connection loop (see SPEC B-1, B-2, B-12..B-15, B-18, B-20):
 * - `start()`: register → first heartbeat → SSE (with `Last-Event-ID` on reconnects) → wait for
 *   the first open (bounded) → periodic heartbeat → catch-up (B-20) → `ready`;
 * - each mail is claimed once in a {@link SeenMails} shared by SSE and catch-up, then run in a
 *   per-session {@link SessionQueue} (serial per session, parallel across sessions up to `concurrency`);
 * - a turn gets `turnTimeoutMs`: then its signal is aborted (`'timeout'`); a turn that ends within
 *   `stopGraceMs` reports its own outcome, one that does not is given up (its relay can no longer
 *   commit) with a `timeout` failure mail (B-7, B-9) — one outcome per mail;
 * - a {@link TurnLostError} is redelivered (1 s, 2 s; 3 attempts), then a `worker_lost` failure mail (B-14);
 * - a handled mail (its turn, or its failure mail) is marked read, so a restart does not run it again;
 * - `stop()` stops reading, says the agent is offline (`POST /agent/offline`, H-3), aborts every
 *   turn (`'shutdown'`), calls the host's shutdown hook and waits at most `stopGraceMs` for the
 *   turns (B-15).
 */
export class BridgeRuntime {
  readonly #host: BridgeHost;
  readonly #emitter: EmitEvent;
  #config: BridgeRuntimeConfig;
  #client: GatewayClient;
  readonly #seen = new SeenMails();
  readonly #queue: SessionQueue;
  readonly #catchUp: CatchUp<MailSummary>;
  readonly #stopping = new AbortController();
  /** Runs each queued mail: its turn, redelivery, failure mails, settling (B-7, B-9, B-14, B-20). */
  readonly #delivery: MailDelivery;
  #sse: SseClient | undefined;
  #heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  #allowedModels: readonly string[] = [];
  #lock: BridgeLock | undefined;
  /** Registered (this process is the agent's bridge): only then does a stop say goodbye (H-3). */
  #registered = false;
  /** The bridge lock went to another process, which is the agent's bridge now: no goodbye. */
  #lockLost = false;

  /** @throws AgentMailError `AM_GATEWAY_URL_INVALID` when `gatewayUrl` is not an http(s) URL. */
  constructor(config: BridgeRuntimeConfig, host: BridgeHost, emit: EmitEvent) {
    this.#config = config;
    this.#host = host;
    this.#emitter = emit;
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
        } catch {
          // the full mail is unreadable: the parent is unknown, the prompt says a new task
        }
        // The inbox item carries platform_session_id for an adopted session (G-37): the backlog
        // turn resumes it like a live one (B-4).
        const event = backlogEvent(
          { ...summary, permission_mode: delivery.permissionMode },
          { mail: { parent_from: parentFrom } },
        );
        this.#emit({
          type: 'mail_queued',
          mail_id: event.mail_id,
          session_id: event.session_id,
          from: event.from_name,
          backlog: true,
        });
        await this.#queue.run(event.session_id, () => this.#delivery.run(event, true));
      },
    });
    this.#delivery = new MailDelivery({
      host,
      emit: (e) => this.#emit(e),
      config: () => this.#config,
      client: () => this.#client,
      allowedModels: () => this.#allowedModels,
      stopping: this.#stopping.signal,
      seen: this.#seen,
      catchUp: this.#catchUp,
      started: config.dataDir === undefined ? undefined : new StartedTurns(config.dataDir),
    });
  }

  #emit(event: BridgeEvent): void {
    this.#emitter(event);
  }

  /** The live Gateway client (switched by {@link BridgeRuntime.reconnect}). */
  get client(): GatewayClient {
    return this.#client;
  }

  /** The admin's model selection from the last heartbeat answer (G-27). */
  get allowedModels(): readonly string[] {
    return this.#allowedModels;
  }

  /** Aborted once {@link stop} began. */
  get stopSignal(): AbortSignal {
    return this.#stopping.signal;
  }

  /**
   * Register, first heartbeat, SSE, catch-up (B-1, B-20); resolves after the start catch-up pass
   * (event `ready`), or at once when the runtime stopped while waiting in standby.
   * @throws the Gateway client's error when the registration fails (nothing else is started then).
   */
  async start(): Promise<void> {
    if (!(await this.#lead())) return;
    await this.#host.onLead?.();
    if (this.#stopping.signal.aborted) return;
    const reg = await this.#client.register({
      name: this.#config.agentName,
      platform: this.#config.platform,
      version: this.#config.version,
      // This process holds the bridge lock: requests of an earlier process wait for nobody now.
      expire_pending: true,
    });
    this.#registered = true;
    this.#emit({
      type: 'registered',
      agent: reg.name,
      platform: this.#config.platform,
      created: reg.created,
    });
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
      onError: (err) => this.#emit({ type: 'stream_problem', code: err.code, error: err.message }),
      onOpen: (info) => {
        this.#emit({
          type: 'stream_open',
          connection: info.connection,
          url: info.url,
          ...(info.lastEventId === undefined ? {} : { last_event_id: info.lastEventId }),
        });
        opened();
        // No cursor: the Gateway replays nothing (G-22), so a mail created while the stream was
        // down (e.g. a Gateway restart) is only in the inbox: one more catch-up pass (B-20).
        // Before the start pass has begun this is a no-op (the start pass covers it).
        if (info.lastEventId === undefined)
          void this.#catchUp.again().then((r) => this.#reportCatchUp(r, 'stream_reopened'));
      },
    });
    // B-1: the first heartbeat comes before the event stream, so the first mail already runs with
    // the admin's model selection (G-27) instead of the host default.
    const ok = await this.#beat();
    void this.#sse.start();
    // Catch-up after the stream is open (or given up on): a mail arriving in between is then
    // either in the inbox listing or on the stream, never in neither (B-20).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopped = (): void => clearTimeout(timer);
    await Promise.race([
      firstOpen,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#config.firstSseOpenWaitMs ?? FIRST_SSE_OPEN_WAIT_MS);
        // stop() during start: do not wait out the first-open grace, and start nothing more.
        if (this.#stopping.signal.aborted) resolve();
        else this.#stopping.signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    ]);
    stopped();
    if (this.#stopping.signal.aborted) return;
    // The period starts before the catch-up, which awaits each backlog turn (G-25: stay online).
    this.#heartbeatTimer = setInterval(() => void this.#heartbeat(), this.#config.heartbeatMs);
    this.#reportCatchUp(await this.#catchUp.afterHeartbeat(ok), 'start');
    if (!this.#stopping.signal.aborted) this.#emit({ type: 'ready', agent: this.#config.agentName });
  }

  /** Graceful shutdown (B-15, P-7): stop reading, abort turns, the host's hook, wait (bounded) for turns. */
  async stop(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#emit({ type: 'stopping', turns: this.#delivery.inflight.size });
    this.#stopping.abort('shutdown');
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    this.#queue.close();
    await this.#sse?.close();
    // H-3: nothing reads the stream any more, so the agent is offline from now on; said while the
    // turns wind down, so it costs the stop no time.
    const goodbye = this.#sayOffline();
    try {
      await this.#host.onShutdown?.();
    } catch {
      // a failing hook must not keep the bridge from stopping
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.#delivery.inflight]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#config.stopGraceMs ?? STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    // Requests the stopped turns left pending are being withdrawn (bounded by WITHDRAW_TIMEOUT_MS),
    // beside the goodbye (bounded by OFFLINE_NOTICE_TIMEOUT_MS): neither waits for the other.
    await Promise.all([goodbye, withdrawalsSettled()]);
    await this.#lock?.release();
    this.#emit({ type: 'stopped' });
  }

  /**
   * SPEC H-3: tell the Gateway this bridge stops (`POST /agent/offline`), so the agent is offline at
   * once instead of for the rest of its online window. Only a registered bridge that still holds
   * the agent (a standby never registered; after a lost lock another process is the bridge). Best
   * effort and bounded ({@link OFFLINE_NOTICE_TIMEOUT_MS}): a Gateway that is gone or older (404)
   * sees the agent offline when the window ends.
   */
  async #sayOffline(): Promise<void> {
    if (!this.#registered || this.#lockLost) return;
    try {
      // The agent endpoints of the live client, with a short timeout of its own.
      const api = new ApiClient({
        transport: undiciTransport,
        baseUrl: this.#client.baseUrl,
        token: this.#client.key,
        timeoutMs: OFFLINE_NOTICE_TIMEOUT_MS,
      });
      await api.call('agentOffline', { body: { reason: 'shutdown' } });
    } catch {
      // best effort, see above
    }
  }

  /**
   * SPEC G-22: one bridge per agent and data directory. Without `lockDir` true at once; else waits
   * as a standby (event `standby`) until the bridge lock is held (true) or the runtime stops (false).
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
        this.#lockLost = true;
        this.#emit({ type: 'lock_lost', lock: this.#lock?.path ?? dir, error: messageOf(err) });
        void this.stop().then(() => this.#host.onLockLost?.());
      },
    });
    const lock = this.#lock;
    const before = lock.held;
    const since = Date.now();
    let waited = false;
    const held = await lock.acquire(this.#stopping.signal, (owner) => {
      waited = true;
      this.#emit({
        type: 'standby',
        lock: lock.path,
        ...(owner?.pid === undefined ? {} : { holder_pid: owner.pid }),
        ...(owner?.hostname === undefined ? {} : { holder_host: owner.hostname }),
      });
    });
    if (held && this.#stopping.signal.aborted) {
      await lock.release(); // stop() ran while the lock was being taken
      return false;
    }
    if (held && !before)
      this.#emit({ type: 'lock_taken', lock: lock.path, takeover: waited, waited_ms: Date.now() - since });
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
    this.#emit({ type: 'reconnected', url });
    this.#host.onReconnect?.(url, key);
  }

  #onNewMail(mail: NewMailEvent): void {
    if (!this.#seen.claim(mail.mail_id)) {
      this.#emit({ type: 'mail_duplicate', mail_id: mail.mail_id });
      return;
    }
    this.#emit({
      type: 'mail_queued',
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      from: mail.from_name,
      backlog: false,
    });
    this.#queue
      .run(mail.session_id, () => this.#delivery.run(mail, false))
      .catch((err: unknown) => {
        this.#emit({ type: 'mail_not_run', mail_id: mail.mail_id, reason: messageOf(err) });
      });
  }

  async #heartbeat(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#reportCatchUp(await this.#catchUp.afterHeartbeat(await this.#beat()), 'heartbeat');
  }

  /** One heartbeat (G-25..G-27): the host's snapshot out, allowed models in. */
  async #beat(): Promise<boolean> {
    if (this.#stopping.signal.aborted) return false;
    try {
      const snap = await this.#host.heartbeat();
      const body: HeartbeatRequest = {
        mode_enforcement: snap.mode_enforcement,
        ...(snap.mode_enforcement_reason ? { mode_enforcement_reason: snap.mode_enforcement_reason } : {}),
        ...(snap.sandbox ? { sandbox: snap.sandbox.slice(0, 500) } : {}),
        version: this.#config.version,
        ...(snap.sessions === undefined ? {} : { sessions: snap.sessions }),
        ...(snap.models === undefined ? {} : { models: snap.models }),
      };
      const res = await this.#client.heartbeat(body);
      this.#allowedModels = res.allowed_models;
      return true;
    } catch (err) {
      this.#emit({ type: 'heartbeat_failed', error: messageOf(err) });
      return false;
    }
  }

  #reportCatchUp(result: CatchUpResult<MailSummary>, trigger: CatchUpTrigger): void {
    if (result.status === 'ran')
      this.#emit({
        type: 'catch_up_done',
        trigger,
        delivered: result.delivered.map((m) => m.id),
        skipped: result.skipped.map((s) => ({ id: s.id, reason: s.reason })),
        failed: result.failed.length,
      });
    else if (result.status === 'list_failed')
      this.#emit({ type: 'catch_up_failed', trigger, error: messageOf(result.error) });
  }
}
