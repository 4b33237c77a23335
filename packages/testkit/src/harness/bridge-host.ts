/**
 * One bridge under test and what belongs to it: its agent identity, the directory its mails are
 * addressed to, its own state directory, a scripted model server and a watching proxy to the
 * Gateway, and the bridge process itself. A stack owns one host; lanes (`stack.lane()`) share it.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { ModelServer } from '../model-server.js';
import { DEFAULT_MODEL_ID } from '../reply-writer.js';
import type { Scenario } from '../scenario.js';
import {
  BRIDGE_READY_TIMEOUT_MS,
  type BridgeEnv,
  type BridgeSettings,
  CONFORMANCE_LOCK_STALE_MS,
  type HostHarness,
  LOCK_STALE_ENV,
  QUESTION_TIMEOUT_ENV,
  TURN_TIMEOUT_ENV,
} from './bridge.js';
import { GatewayProxy } from './gateway-proxy.js';
import { ModelViews } from './model-view.js';
import { cleanEnv, ManagedProcess, type ProcessExit } from './processes.js';

/** An agent identity created by the harness. */
export interface AgentIdentity {
  name: string;
  key: string;
}

/** How a bridge was started: equal starts of a shared host reuse the running bridge. */
interface StartConfig {
  adapter: HostHarness;
  /** `extraEnv` and `settings`, as one stable string. */
  key: string;
}

/** What {@link BridgeHost.start} needs. */
export interface BridgeHostInit {
  agent: AgentIdentity;
  /** Directory of the host: `work/` and `bridge/` are made in it (removed by close when `ownsDir`). */
  dir: string;
  ownsDir: boolean;
  gatewayUrl: string;
  models: readonly string[];
  modelProvider: string;
  scenarios: readonly Scenario[];
}

/** See the module comment. Made by the stack; `close()` ends the bridge, the model server and the proxy. */
export class BridgeHost {
  readonly agent: AgentIdentity;
  /** Existing directory the mails are addressed to. */
  readonly workdir: string;
  /** The bridge's own directory, kept across bridge restarts. */
  readonly bridgeStateDir: string;
  /** The scripted model server and who owns which of its requests. */
  readonly models: ModelViews;
  /** The proxy between the bridge and the Gateway. */
  readonly proxy: GatewayProxy;
  readonly modelProvider: string;
  /** Every process started for this host's bridge (the bridge, anything `env.spawn` made). */
  readonly processes = new Set<ManagedProcess>();
  readonly #dir: string;
  readonly #ownsDir: boolean;
  #bridge: { process: ManagedProcess; config: StartConfig } | undefined;
  /** A start in progress (shared hosts: concurrent lanes wait for the same start). */
  #starting: { promise: Promise<ManagedProcess>; config: StartConfig } | undefined;
  #closed: Promise<void> | undefined;

  private constructor(init: BridgeHostInit, model: ModelServer, proxy: GatewayProxy) {
    this.agent = init.agent;
    this.#dir = init.dir;
    this.#ownsDir = init.ownsDir;
    this.workdir = join(init.dir, 'work');
    this.bridgeStateDir = join(init.dir, 'bridge');
    this.models = new ModelViews(model);
    this.proxy = proxy;
    this.modelProvider = init.modelProvider;
  }

  /** @internal Used by the stack. Everything started is undone if a step fails. */
  static async start(init: BridgeHostInit): Promise<BridgeHost> {
    // HOME of the bridge (see bridgeEnv): hosts write their own dot-directories there.
    for (const dir of [join(init.dir, 'work'), join(init.dir, 'bridge', 'home')])
      await mkdir(dir, { recursive: true });
    const model = await ModelServer.start({ models: init.models, scenarios: init.scenarios });
    try {
      const proxy = await GatewayProxy.start(init.gatewayUrl);
      return new BridgeHost(init, model, proxy);
    } catch (error) {
      await model.close();
      throw error;
    }
  }

  /** The running bridge process, `undefined` when none runs. */
  get bridge(): ManagedProcess | undefined {
    const bridge = this.#bridge;
    return bridge !== undefined && bridge.process.exit === undefined ? bridge.process : undefined;
  }

  /** The adapter of the running bridge, `undefined` when none runs. */
  get adapter(): HostHarness | undefined {
    return this.bridge === undefined ? undefined : this.#bridge?.config.adapter;
  }

  /**
   * Starts the bridge and resolves once it holds its agent event stream (through the proxy).
   * With `reuse`, a bridge already running (or starting) from an equal start — same adapter,
   * `extraEnv` and `settings` — is returned instead; a different one is an error when `reuse` is
   * `'shared'` and is stopped first when it is `'restart'`. Without `reuse`, a running bridge is
   * an error.
   * @throws {TestkitError} `AM_TESTKIT_PROCESS_START` (it exited first, did not connect in time,
   * or one runs already), `AM_TESTKIT_HOST_SHARED` (a shared host asked for other settings).
   */
  async start(
    adapter: HostHarness,
    extraEnv: Readonly<Record<string, string>>,
    settings: BridgeSettings,
    reuse?: 'shared' | 'restart',
  ): Promise<ManagedProcess> {
    this.#assertOpen();
    const config: StartConfig = { adapter, key: JSON.stringify([extraEnv, settings]) };
    const same = (other: StartConfig): boolean =>
      other.adapter === config.adapter && other.key === config.key;
    const current = this.#starting ?? (this.bridge === undefined ? undefined : this.#bridge);
    if (current !== undefined) {
      if (reuse !== undefined && same(current.config))
        return 'promise' in current ? current.promise : current.process;
      if (reuse === 'shared')
        throw new TestkitError(
          TESTKIT_ERROR_CODES.HOST_SHARED,
          `this ${adapter.platform} bridge is shared with other stacks and runs with other settings; a lane cannot restart it.`,
        );
      if (reuse === undefined) {
        const running = 'promise' in current ? await current.promise : current.process;
        throw new TestkitError(
          TESTKIT_ERROR_CODES.PROCESS_START,
          `a ${current.config.adapter.platform} bridge is running already (pid ${running.pid}); call stopBridge() first.`,
        );
      }
      await this.stop();
    }
    const promise = this.#startNow(config, extraEnv, settings);
    this.#starting = { promise, config };
    try {
      return await promise;
    } finally {
      if (this.#starting?.promise === promise) this.#starting = undefined;
    }
  }

  async #startNow(
    config: StartConfig,
    extraEnv: Readonly<Record<string, string>>,
    settings: BridgeSettings,
  ): Promise<ManagedProcess> {
    const { adapter } = config;
    const env = this.bridgeEnv(adapter, extraEnv, settings);
    const before = this.proxy.eventStreams().length;
    const started = await adapter.start(env);
    const proc =
      started instanceof ManagedProcess
        ? started
        : ManagedProcess.adopt(`bridge-${adapter.platform}`, started);
    this.processes.add(proc);
    this.#bridge = { process: proc, config };
    const timeoutMs = adapter.readyTimeoutMs ?? BRIDGE_READY_TIMEOUT_MS;
    let onExit: Promise<never> | undefined;
    try {
      onExit = proc.exited.then((exit) => {
        throw new TestkitError(
          TESTKIT_ERROR_CODES.PROCESS_START,
          `the ${adapter.platform} bridge exited (code ${exit.code}, signal ${exit.signal}) before it opened its event stream; its output:\n${proc.tail()}`,
        );
      });
      await Promise.race([
        this.proxy.waitForEventStream((s) => s.seq > before && s.status === 200, timeoutMs),
        onExit,
      ]);
    } catch (error) {
      await proc.stop(adapter.stopGraceMs);
      this.#bridge = undefined;
      if (error instanceof TestkitError && error.code === TESTKIT_ERROR_CODES.WAIT_TIMEOUT)
        throw new TestkitError(
          TESTKIT_ERROR_CODES.PROCESS_START,
          `the ${adapter.platform} bridge did not open its event stream within ${timeoutMs} ms (${error.message}); its output:\n${proc.tail()}`,
        );
      throw error;
    } finally {
      onExit?.catch(() => {});
    }
    return proc;
  }

  /**
   * Stops the running bridge (SIGTERM to its process group, SIGKILL after the adapter's grace
   * time) and resolves with how it exited; `undefined` when none ran.
   */
  async stop(): Promise<ProcessExit | undefined> {
    const starting = this.#starting;
    if (starting !== undefined) await starting.promise.catch(() => undefined);
    const bridge = this.#bridge;
    if (bridge === undefined) return undefined;
    this.#bridge = undefined;
    return bridge.process.stop(bridge.config.adapter.stopGraceMs);
  }

  /** The environment a start hands the adapter. */
  bridgeEnv(
    adapter: Pick<HostHarness, 'platform'>,
    extraEnv: Readonly<Record<string, string>> = {},
    settings: BridgeSettings = {},
  ): BridgeEnv {
    const server = this.models.server;
    const modelIds = server.models;
    const modelId = modelIds[0] ?? DEFAULT_MODEL_ID;
    const processEnv = cleanEnv({
      HOME: join(this.bridgeStateDir, 'home'),
      AGENTMAIL_GATEWAY_URL: this.proxy.url,
      AGENTMAIL_AGENT_NAME: this.agent.name,
      AGENTMAIL_AGENT_KEY: this.agent.key,
      AGENTMAIL_REPLY_PROVIDER: this.modelProvider,
      AGENTMAIL_REPLY_MODEL: modelId,
      // A bridge killed by a scenario (kill -9, crash windows) keeps the next one waiting this long for
      // its lock, not the 15 s of a real machine: the takeover is what is tested, not its length.
      [LOCK_STALE_ENV]: String(CONFORMANCE_LOCK_STALE_MS),
      ...(settings.turnTimeoutMs === undefined ? {} : { [TURN_TIMEOUT_ENV]: String(settings.turnTimeoutMs) }),
      ...(settings.questionTimeoutMs === undefined
        ? {}
        : { [QUESTION_TIMEOUT_ENV]: String(settings.questionTimeoutMs) }),
      ...extraEnv,
    });
    return {
      gatewayUrl: this.proxy.url,
      agentName: this.agent.name,
      agentKey: this.agent.key,
      platform: adapter.platform,
      modelBaseUrl: server.baseUrl,
      modelProvider: this.modelProvider,
      modelId,
      modelIds,
      workdir: this.workdir,
      stateDir: this.bridgeStateDir,
      processEnv,
      ...(settings.turnTimeoutMs === undefined ? {} : { turnTimeoutMs: settings.turnTimeoutMs }),
      spawn: (command, args, options = {}) => {
        const proc = ManagedProcess.spawn(`bridge-${adapter.platform}`, command, args, {
          env: options.env ?? processEnv,
          cwd: options.cwd ?? this.bridgeStateDir,
        });
        this.processes.add(proc);
        return proc;
      },
    };
  }

  /** Ends the bridge and every process it started, the model server and the proxy. Never rejects; idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const steps: Array<() => Promise<unknown>> = [
        () => this.stop(),
        () => Promise.all([...this.processes].map((p) => p.stop())),
        () => this.models.server.close(),
        () => this.proxy.close(),
        async () => (this.#ownsDir ? rm(this.#dir, { recursive: true, force: true }) : undefined),
      ];
      for (const step of steps) await step().catch(() => {});
    })();
    return this.#closed;
  }

  #assertOpen(): void {
    if (this.#closed !== undefined)
      throw new TestkitError(TESTKIT_ERROR_CODES.STACK_CLOSED, 'the stack is closed; start a new one.');
  }
}
