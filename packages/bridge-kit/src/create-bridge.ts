/**
 * `createBridge`: the bridge kit's entry point (docs/BRIDGE-CONTRACT.md). A bridge gives its
 * platform, its settings and an adapter for its host; the kit runs everything else.
 */
import { join } from 'node:path';
import type { PermissionDecisionEvent } from '@agentmail/protocol';
import {
  AgentMailError,
  ERROR_CODES,
  PendingPermissions,
  type Platform,
  resolveLocale,
} from '@agentmail/shared-policy';
import type { GatewayClient, SseSleep } from '@agentmail/shared-policy/client';
import type { HostSandbox, HostSnapshot, TurnAdapter } from './adapter.js';
import { type BridgeConfig, checkBridgeConfig, questionTimeoutOf } from './bridge-config.js';
import { BridgeRuntime } from './bridge-runtime.js';
import { type BridgeEvent, BridgeEventBus, type EmitEvent } from './events.js';
import { ExplicitSendRecord } from './explicit-sends.js';
import { GrantStore } from './grant-store.js';
import { heartbeatSnapshots } from './heartbeat-snapshot.js';
import { type HostEventLevel, logBridgeEvents } from './log-events.js';
import type { BridgeLogger } from './logger.js';
import { TurnRpcServer } from './rpc/server.js';
import type { BridgeHost, BridgeRuntimeConfig, MailRun } from './runtime-host.js';
import { bridgeSecrets, sandboxStatus, turnSandbox } from './sandbox/sandbox.js';
import { type SandboxCheck, verifySandbox } from './sandbox/verify.js';
import { SessionBindings } from './session-bindings.js';
import { startWithRetry } from './start-retry.js';
import type { TurnGate } from './turn-gate.js';
import { runTurnJob, type TurnJob } from './turn-job.js';
import { type ActiveTurn, TurnRegistry } from './turn-registry.js';
import type { MailTurnReport } from './turn-report.js';
import { turnRpcHandlers } from './turn-rpc-handlers.js';

export { START_RETRY_INITIAL_MS, START_RETRY_MAX_MS } from './start-retry.js';

/** What a delegated turn gets besides its job (see {@link BridgeAdapter.delegateTurn}). */
export interface DelegatedTurn {
  /** Aborted on timeout (`'timeout'`) or shutdown (`'shutdown'`): stop the turn's process. */
  signal: AbortSignal;
  /** The relay's commit gate: forward the child's commit requests here (one outcome per mail). */
  gate: TurnGate;
  /** Re-emit the child's events on the bridge's bus. */
  emit: EmitEvent;
}

/**
 * What a bridge implements for its host (docs/BRIDGE-CONTRACT.md). Exactly one of `turns` (the
 * kit runs each turn in this process) and `delegateTurn` (the bridge runs it elsewhere, e.g. a child
 * process that calls `runTurnJob`).
 */
export interface BridgeAdapter {
  /** The host's heartbeat facts (G-25, P-8). A throw fails that heartbeat (the next one retries). */
  snapshot(): Promise<HostSnapshot>;
  /** In-process turns: open sessions and run attempts. */
  turns?: TurnAdapter;
  /**
   * Delegated turns (B-12): run `job` elsewhere and return its report. Throw `TurnLostError` when
   * the turn's process died before reporting (redelivered, B-14).
   */
  delegateTurn?(job: TurnJob, turn: DelegatedTurn): Promise<MailTurnReport>;
  /** A `permission_decision` event (G-21) — delegated bridges forward it to their turn processes. */
  onDecision?(event: PermissionDecisionEvent): void;
  /** After connect_to_server switched Gateway (B-18). */
  onReconnect?(url: string, key: string): void;
  /** Shutdown: turns are aborted and pending asks denied; stop the host's processes (B-15). */
  stop?(): Promise<void> | void;
  /** The bridge lock was lost (the process was frozen past its staleness); the bridge has stopped. */
  onLockLost?(): void;
  /**
   * This process now holds the bridge lock, before it registers and runs a turn: end what an
   * earlier process of this bridge left running (a crash's host runs, B-15). A throw fails `start()`.
   */
  onLead?(): Promise<void> | void;
  /**
   * How the host's turns can be sandboxed (P-1, P-12). With `AGENTMAIL_SANDBOX=workspace` the kit
   * runs the self-check on this policy at start; once verified, each job carries the sandbox and
   * the listed tools run unasked in `workspace` mode. @default none (reported as unverified)
   */
  sandbox?: HostSandbox;
}

/** Options of {@link createBridge}. */
export interface CreateBridgeOptions {
  platform: Platform;
  /** Bridge version for register and heartbeat, e.g. `agentmail-bridge-pi/0.1.0`. */
  version: string;
  /** From `readBridgeConfig` (or the bridge's own reader on top of it). */
  config: BridgeConfig;
  adapter: BridgeAdapter;
  /** When given, every event is logged (one JSON line each, `event: <type>`). */
  log?: BridgeLogger;
  /** The log level of the bridge's own events (default info), see {@link HostEventLevel}. */
  hostEventLevel?: HostEventLevel;
  /**
   * A start that failed permanently (a 4xx: wrong key, a name the key is not bound to) throws
   * from `start()` (`'throw'`, a daemon exits with a clear line) or keeps retrying (`'retry'`, a
   * plugin that cannot exit its host). Transient failures (Gateway not up yet) are always retried.
   * @default 'throw'
   */
  onPermanentStartError?: 'throw' | 'retry';
  /** Take the bridge lock in the data directory (one bridge per agent, G-22). @default true */
  lock?: boolean;
  /**
   * Serve the turn RPC (SPEC B-21) on `<dataDir>/run/bridge.sock` for hosts whose tools and
   * hooks run in separate processes: each in-process turn gets a token (`ActiveTurn.rpcEnv`) its
   * host processes use to get their context, run mail tools, ask permissions and questions and
   * record sends — with the bridge's key, which never leaves the bridge. @default false
   */
  rpc?: boolean;
  /** Timing overrides (tests). */
  timing?: {
    stopGraceMs?: number;
    firstSseOpenWaitMs?: number;
    redeliveryBackoffMs?: readonly number[];
    sseSleep?: SseSleep;
    lockStaleMs?: number;
    lockRetryMs?: number;
    startRetryInitialMs?: number;
  };
}

/** The running mail turns as a host hook sees them: the turn of a platform session, if any. */
export type TurnLookup = Pick<TurnRegistry, 'byPlatformSession'>;

/**
 * A running bridge (see {@link createBridge}): what a bridge uses of the kit — the event bus,
 * start and stop, the turn of a session for its tool and permission hooks, the tool context of a
 * person's own session, and the Gateway switch. `H` is the bridge's own host events (e.g. pi's
 * `worker_spawned`), emitted on the same bus with {@link Bridge.emit}. The kit's own parts
 * (bindings, grants, the client, …) stay inside; its tests reach them through {@link bridgeInternals}.
 */
export interface Bridge<H extends { type: string } = never> {
  /** Every lifecycle event (subscribe / next); logging is one subscriber. */
  readonly events: BridgeEventBus<BridgeEvent | H>;
  /** Emit a kit or host event on the bus (a delegated turn's events, the host's own). */
  emit(event: BridgeEvent | H): void;
  /** Running mail turns: a host hook finds the turn of its session here (a person's session has none). */
  readonly activeTurns: TurnLookup;
  /** Aborted once the bridge stops. */
  readonly stopSignal: AbortSignal;
  /**
   * Connect (B-1, B-20): take the bridge lock (standby until then), register, heartbeat, event
   * stream, start catch-up; resolves at `ready` (or when stopped). A Gateway that is not up yet
   * is retried with backoff (1 s doubling to 30 s, event `start_failed`).
   * @throws the Gateway client's error for a permanent failure when `onPermanentStartError` is `'throw'`.
   */
  start(): Promise<void>;
  /**
   * Shutdown (B-15, P-7): stop reading, abort turns, deny pending asks, the adapter's `stop`,
   * release the lock. Idempotent: a second call returns the first call's promise.
   */
  stop(): Promise<void>;
  /** B-18: switch Gateway (connect_to_server already probed the new one). */
  reconnect(url: string, key: string): void;
  /** A turn's context for a mail-tool call from a session without a running mail turn (a person's own). */
  standaloneToolContext(): ActiveTurn['toolContext'];
}

/** The kit's own parts of a bridge, for the kit's tests (not exported from the package entry). */
export interface BridgeInternals {
  readonly config: BridgeConfig;
  /** The live Gateway client (B-18 may switch it). */
  readonly client: GatewayClient;
  readonly activeTurns: TurnRegistry;
  /** "Always" grants of this bridge (P-4), `<dataDir>/grants.json`. */
  readonly grants: GrantStore;
  readonly bindings: SessionBindings;
  /** Permission waits of in-process turns (woken by `permission_decision`, closed on stop). */
  readonly pending: PendingPermissions;
  /** The admin's model selection from the last heartbeat (G-27). */
  readonly allowedModels: readonly string[];
}

const internalsOf = new WeakMap<object, BridgeInternals>();

/**
 * The internals of a bridge made by {@link createBridge}: a test-only accessor.
 * @throws Error when `bridge` was not made by `createBridge`.
 */
export function bridgeInternals<H extends { type: string }>(bridge: Bridge<H>): BridgeInternals {
  const found = internalsOf.get(bridge);
  if (!found) throw new Error('bridgeInternals: not a bridge made by createBridge');
  return found;
}

/** The kit's own parts of a running bridge, shared by its turns. */
interface KitParts {
  bindings: SessionBindings;
  grants: GrantStore;
  explicitSends: ExplicitSendRecord;
  registry: TurnRegistry;
  pending: PendingPermissions;
}

/** The runtime's configuration from the bridge's settings and the test timings. */
function runtimeConfigOf(options: CreateBridgeOptions): BridgeRuntimeConfig {
  const { config, platform } = options;
  const timing = options.timing ?? {};
  return {
    gatewayUrl: config.gatewayUrl,
    agentKey: config.agentKey,
    agentName: config.agentName,
    platform,
    version: options.version,
    concurrency: config.concurrency,
    heartbeatMs: config.heartbeatMs,
    turnTimeoutMs: config.turnTimeoutMs,
    locale: config.locale,
    ...(options.lock === false ? {} : { lockDir: config.dataDir }),
    dataDir: config.dataDir,
    ...(timing.stopGraceMs === undefined ? {} : { stopGraceMs: timing.stopGraceMs }),
    ...(timing.firstSseOpenWaitMs === undefined ? {} : { firstSseOpenWaitMs: timing.firstSseOpenWaitMs }),
    ...(timing.redeliveryBackoffMs === undefined ? {} : { redeliveryBackoffMs: timing.redeliveryBackoffMs }),
    ...(timing.sseSleep === undefined ? {} : { sseSleep: timing.sseSleep }),
    ...((timing.lockStaleMs ?? config.lockStaleMs) === undefined
      ? {}
      : { lockStaleMs: timing.lockStaleMs ?? config.lockStaleMs }),
    ...(timing.lockRetryMs === undefined ? {} : { lockRetryMs: timing.lockRetryMs }),
  };
}

/** One delivery as a {@link TurnJob}: plain JSON, for this process or a child (B-12). */
function turnJobOf(
  run: MailRun,
  platform: Platform,
  config: BridgeConfig,
  sandbox: { job: TurnJob['sandbox']; status: string | undefined },
): TurnJob {
  return {
    mail: run.mail,
    backlog: run.backlog,
    attempt: run.attempt,
    ...(run.retry ? { retry: true } : {}),
    platform,
    agentName: config.agentName,
    allowedModels: [...run.allowedModels],
    hostDefault: config.hostDefault,
    gatewayUrl: run.client.baseUrl,
    agentKey: run.client.key,
    dataDir: config.dataDir,
    locale: config.locale,
    turnTimeoutMs: run.turnTimeoutMs,
    questionTimeoutMs: questionTimeoutOf({ ...config, turnTimeoutMs: run.turnTimeoutMs }),
    ...(sandbox.job ? { sandbox: sandbox.job } : {}),
    ...(sandbox.status ? { sandboxStatus: sandbox.status } : {}),
  };
}

/**
 * The host side of the runtime: heartbeat snapshots (G-25, G-37), each mail's turn — in this
 * process on the adapter's `turns` (with its turn RPC token when `rpc`), or delegated — the
 * decisions (G-21), the Gateway switch (B-18), shutdown (B-15, P-7), the lock (G-22).
 */
function bridgeHost(
  options: CreateBridgeOptions,
  parts: KitParts,
  rpc: TurnRpcServer<ActiveTurn> | undefined,
  emit: EmitEvent,
  reconnect: (url: string, key: string) => void,
): BridgeHost {
  const { adapter, platform, config } = options;
  const { pending } = parts;
  let rpcStarted: Promise<void> | undefined;
  const sandbox = hostSandbox(adapter.sandbox, platform, config, emit);
  const snapshots = heartbeatSnapshots(() => adapter.snapshot(), parts.bindings, emit);
  return {
    heartbeat: async () => ({ ...(await snapshots()), sandbox: await sandbox.status() }),
    runMail: async (run) => {
      // A sandbox the admin turned on is named in every request (why the person is asked, P-12).
      const status = config.sandbox === 'workspace' ? await sandbox.status() : undefined;
      const job = turnJobOf(run, platform, config, { job: await sandbox.job(), status });
      if (adapter.delegateTurn)
        return adapter.delegateTurn(job, { signal: run.signal, gate: run.gate, emit });
      return runTurnJob(job, adapter.turns as TurnAdapter, {
        released: run.released,
        pending,
        signal: run.signal,
        emit,
        commit: (fn) => run.gate.commit(fn),
        registry: parts.registry,
        explicitSends: parts.explicitSends,
        grants: parts.grants,
        bindings: parts.bindings,
        onReconnect: reconnect,
        ...(rpc
          ? {
              onTurn: (turn: ActiveTurn) => {
                const lease = rpc.openTurn(turn, { locale: turn.locale });
                turn.rpcEnv = lease.env;
                return () => lease.close();
              },
            }
          : {}),
      });
    },
    onPermissionDecision: (event) => {
      pending.resolve(event);
      adapter.onDecision?.(event);
    },
    onReconnect: (url, key) => adapter.onReconnect?.(url, key),
    onShutdown: async () => {
      pending.close();
      await rpc?.close();
      await adapter.stop?.();
    },
    onLockLost: () => adapter.onLockLost?.(),
    // The turn RPC belongs to the bridge: started once this process holds the lock, so a bad
    // socket path fails start() instead of every mail.
    onLead: async () => {
      await adapter.onLead?.();
      // P-12: the self-check runs at start, before the first heartbeat says the sandbox's state.
      await sandbox.check();
      if (!rpc) return;
      rpcStarted ??= rpc.start();
      await rpcStarted;
    },
  };
}

/**
 * Create a bridge: the kit's whole runtime over one host adapter (docs/BRIDGE-CONTRACT.md,
 * SPEC §6). It owns settings and the data directory, the bridge lock, register/heartbeat/SSE/
 * catch-up, start-retry with backoff, de-duplication, the per-session queue, timeouts,
 * redelivery, shutdown, the session bindings (Gateway session ↔ platform session, naming
 * baseline, set-aside attempts), the heartbeat snapshot's G-37 own-session filter and clamping,
 * the turn input, the model order, failure mails, the relay (exactly once, also without a host
 * entry id), naming sync and the permission flow of every turn.
 *
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` when the adapter has neither or both of `turns` and `delegateTurn`.
 * @example
 * const bridge = createBridge({ platform: 'opencode', version, config, adapter, log: pino() });
 * bridge.events.subscribe((e) => { if (e.type === 'ready') announce(); });
 * await bridge.start();
 */
export function createBridge<H extends { type: string } = never>(options: CreateBridgeOptions): Bridge<H> {
  const { config, adapter, platform } = options;
  if ((adapter.turns === undefined) === (adapter.delegateTurn === undefined))
    throw new AgentMailError(
      ERROR_CODES.BRIDGE_CONFIG_INVALID,
      'createBridge: give the adapter exactly one of `turns` (in-process turns) and `delegateTurn` (delegated turns)',
    );
  checkBridgeConfig(config);
  const events = new BridgeEventBus<BridgeEvent | H>();
  if (options.log) logBridgeEvents(events, options.log, options.hostEventLevel);
  const emit: EmitEvent = (e) => events.emit(e);
  const stopping = new AbortController();
  const parts: KitParts = {
    bindings: new SessionBindings(config.dataDir),
    grants: new GrantStore({ file: join(config.dataDir, 'grants.json') }),
    explicitSends: new ExplicitSendRecord(),
    registry: new TurnRegistry(),
    pending: new PendingPermissions({
      signal: stopping.signal,
      onUnclaimed: (info) => emit({ type: 'decision_unclaimed', ...info }),
    }),
  };
  const locale = resolveLocale(config.locale);
  const rpc = options.rpc
    ? new TurnRpcServer<ActiveTurn>({
        dir: join(config.dataDir, 'run'),
        handlers: turnRpcHandlers(config.agentName, platform),
        emit,
      })
    : undefined;
  const runtime: BridgeRuntime = new BridgeRuntime(
    runtimeConfigOf(options),
    bridgeHost(options, parts, rpc, emit, (url, key) => runtime.reconnect(url, key)),
    emit,
  );

  let started: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  const bridge: Bridge<H> = {
    events,
    emit: (e) => events.emit(e),
    activeTurns: parts.registry,
    stopSignal: stopping.signal,
    start() {
      started ??= startWithRetry(() => runtime.start(), {
        gatewayUrl: config.gatewayUrl,
        signal: stopping.signal,
        emit,
        ...(options.timing?.startRetryInitialMs === undefined
          ? {}
          : { initialMs: options.timing.startRetryInitialMs }),
        ...(options.onPermanentStartError === undefined
          ? {}
          : { onPermanent: options.onPermanentStartError }),
      });
      return started;
    },
    stop() {
      // Every caller waits for the one stop (a plugin host may stop it from a signal handler and
      // again from its own unload: the second must not return before the lock is released).
      stopped ??= (async () => {
        stopping.abort('shutdown');
        await runtime.stop();
      })();
      return stopped;
    },
    reconnect: (url, key) => runtime.reconnect(url, key),
    standaloneToolContext: () => ({
      client: runtime.client,
      identity: { name: config.agentName, platform },
      locale,
      reconnect: ({ url, key }) => runtime.reconnect(url, key),
    }),
  };
  internalsOf.set(bridge, {
    config,
    get client() {
      return runtime.client;
    },
    activeTurns: parts.registry,
    grants: parts.grants,
    bindings: parts.bindings,
    pending: parts.pending,
    get allowedModels() {
      return runtime.allowedModels;
    },
  });
  return bridge;
}

/**
 * The bridge's workspace sandbox (P-1, P-12): off unless `AGENTMAIL_SANDBOX=workspace`; then the
 * start-time self-check on the host's policy decides once whether jobs carry it. Its state is
 * each heartbeat's `sandbox`.
 */
function hostSandbox(
  host: HostSandbox | undefined,
  platform: Platform,
  config: BridgeConfig,
  emit: EmitEvent,
): { check(): Promise<void>; status(): Promise<string>; job(): Promise<TurnJob['sandbox']> } {
  let checked: Promise<SandboxCheck> | undefined;
  const check = (): Promise<SandboxCheck> => {
    if (host === undefined || 'unsupported' in host || config.sandbox !== 'workspace') {
      const reason =
        host === undefined
          ? `${platform} runs its tools in its own process: AgentMail does not wrap them`
          : 'unsupported' in host
            ? host.unsupported
            : 'off (AGENTMAIL_SANDBOX=workspace turns it on)';
      return Promise.resolve({ state: { verified: false, reason }, canaries: [] });
    }
    const hidden = bridgeSecrets(config, process.env);
    checked ??= verifySandbox({
      // The very composition each turn uses (turnSandbox), on the canary workspace.
      policyFor: (ws) => turnSandbox({ bwrap: '', confines: [], hidden }, host.policy(ws)).policy,
      secrets: hidden.filter((p) => p !== config.dataDir),
      env: process.env,
    }).then((result) => {
      emit({
        type: 'sandbox_checked',
        verified: result.state.verified,
        ...(result.state.verified ? {} : { reason: result.state.reason }),
        canaries: result.canaries,
      });
      return result;
    });
    return checked;
  };
  return {
    check: async () => {
      await check();
    },
    status: async () => sandboxStatus((await check()).state),
    job: async () => {
      const result = await check();
      if (!result.state.verified || !result.bwrap || host === undefined || 'unsupported' in host)
        return undefined;
      return {
        bwrap: result.bwrap,
        confines: [...host.confines],
        hidden: bridgeSecrets(config, process.env),
      };
    },
  };
}
