/**
 * The end-to-end stack: a real Gateway as a child process (`agentmail serve` on a temp data dir
 * and a random loopback port), the scripted model server, a watching proxy for the bridge, a
 * person with an open event stream, an agent key, and the bridge under test as a child process.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AllowedModelsResponse,
  formatAddress,
  type Mail,
  type MailSummary,
  type PermissionView,
} from '@agentmail/protocol';
import type { PersonApi } from '@agentmail/shared-policy/client';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { ModelServer } from '../model-server.js';
import { DEFAULT_MODEL_ID } from '../reply-writer.js';
import type { RecordedRequest } from '../request.js';
import type { RequestMatch, RequestPredicate, Scenario } from '../scenario.js';
import { AgentMailbox } from './agent-mailbox.js';
import { harnessClient, personApi } from './api.js';
import {
  BRIDGE_READY_TIMEOUT_MS,
  type BridgeAdapter,
  type BridgeEnv,
  type BridgeSettings,
  QUESTION_TIMEOUT_ENV,
  TURN_TIMEOUT_ENV,
} from './bridge.js';
import { gatewayCliPath } from './gateway-build.js';
import { GatewayProxy } from './gateway-proxy.js';
import {
  type AwaitMailOptions,
  type AwaitPermissionOptions,
  DEFAULT_AWAIT_TIMEOUT_MS,
  type Decision,
  PersonClient,
  type SendOptions,
  type SentMail,
} from './person.js';
import { cleanEnv, ManagedProcess, type ProcessExit } from './processes.js';

/** Time the Gateway child may take to print its listening line, in ms. @default 30_000 */
export const GATEWAY_START_TIMEOUT_MS = 30_000;

/** Provider id of the scripted model in allowed-model keys (`scripted/<id>`). @default 'scripted' */
export const DEFAULT_MODEL_PROVIDER = 'scripted';

/** Options of {@link startStack}. */
export interface StackOptions {
  /** Name of the agent the bridge runs as. @default 'agent' */
  agentName?: string;
  /** Register the agent with this platform at start, so mail to it is accepted before any bridge ran. */
  platform?: string;
  /** Name of the default person. @default 'alice' */
  personName?: string;
  /** Model ids the scripted server lists. @default [DEFAULT_MODEL_ID] */
  models?: readonly string[];
  /** Provider id bridges configure for the scripted model. @default DEFAULT_MODEL_PROVIDER */
  modelProvider?: string;
  /** Initial model scenarios (more with `stack.model.addScenarios`). */
  scenarios?: readonly Scenario[];
  /** Extra arguments for `agentmail serve`. */
  gatewayArgs?: readonly string[];
  /** @default GATEWAY_START_TIMEOUT_MS */
  startTimeoutMs?: number;
  /** Aborting it closes the stack. */
  signal?: AbortSignal;
}

/** An agent identity created by the harness. */
export interface AgentIdentity {
  name: string;
  key: string;
}

/** Who acts in a person call: a person client, a person's name, or the default person. */
export type PersonRef = PersonClient | string | undefined;

/**
 * A running stack; see {@link startStack}. Every process it started ends with {@link close}.
 * @example
 * const stack = await startStack({ platform: 'pi' });
 * try {
 *   await stack.startBridge(adapter);
 *   const sent = await stack.sendAs(stack.person, stack.taskAddress(), { subject: 'hi', body: '…' });
 *   const reply = await stack.awaitReply({ inReplyTo: sent.mail_id });
 * } finally {
 *   await stack.close();
 * }
 */
export class Stack {
  /** Gateway origin for direct calls (the harness's own). */
  readonly gatewayUrl: string;
  /** Gateway origin handed to bridges: the watching proxy. */
  readonly bridgeGatewayUrl: string;
  readonly adminToken: string;
  /** The scripted model server (in this process): add scenarios, read the journal. */
  readonly model: ModelServer;
  /** The proxy between the bridge and the Gateway (event streams, cuts). */
  readonly proxy: GatewayProxy;
  /** The Gateway child process. */
  readonly gateway: ManagedProcess;
  /** The agent the bridge runs as. */
  readonly agent: AgentIdentity;
  /** The default person. */
  readonly person: PersonClient;
  /** Existing directory the mails are addressed to. */
  readonly workdir: string;
  /** The bridge's own directory, kept across bridge restarts. */
  readonly bridgeStateDir: string;
  /** Temp directory holding everything of this stack (removed by close). */
  readonly rootDir: string;
  readonly modelProvider: string;
  readonly #people = new Map<string, PersonClient>();
  readonly #agents = new Set<AgentMailbox>();
  readonly #processes = new Set<ManagedProcess>();
  #bridge: { process: ManagedProcess; adapter: BridgeAdapter } | undefined;
  #closed: Promise<void> | undefined;

  private constructor(init: {
    gatewayUrl: string;
    adminToken: string;
    model: ModelServer;
    proxy: GatewayProxy;
    gateway: ManagedProcess;
    agent: AgentIdentity;
    person: PersonClient;
    workdir: string;
    bridgeStateDir: string;
    rootDir: string;
    modelProvider: string;
  }) {
    this.gatewayUrl = init.gatewayUrl;
    this.bridgeGatewayUrl = init.proxy.url;
    this.adminToken = init.adminToken;
    this.model = init.model;
    this.proxy = init.proxy;
    this.gateway = init.gateway;
    this.agent = init.agent;
    this.person = init.person;
    this.workdir = init.workdir;
    this.bridgeStateDir = init.bridgeStateDir;
    this.rootDir = init.rootDir;
    this.modelProvider = init.modelProvider;
    this.#people.set(init.person.name, init.person);
    this.#processes.add(init.gateway);
  }

  /** @internal Used by {@link startStack}. */
  static async start(options: StackOptions = {}): Promise<Stack> {
    const rootDir = await mkdtemp(join(tmpdir(), 'agentmail-stack-'));
    const dirs = {
      data: join(rootDir, 'gateway-data'),
      home: join(rootDir, 'home'),
      work: join(rootDir, 'work'),
      bridge: join(rootDir, 'bridge'),
      // HOME of the bridge (see bridgeEnv): hosts write their own dot-directories there.
      bridgeHome: join(rootDir, 'bridge', 'home'),
    };
    const cleanup: Array<() => Promise<unknown>> = [() => rm(rootDir, { recursive: true, force: true })];
    const undo = async (): Promise<void> => {
      for (const step of cleanup.reverse()) await step().catch(() => {});
    };
    try {
      for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });
      const mainJs = await gatewayCliPath();
      const gateway = ManagedProcess.spawn(
        'gateway',
        process.execPath,
        [
          mainJs,
          'serve',
          '--json',
          '--data-dir',
          dirs.data,
          '--host',
          '127.0.0.1',
          '--port',
          '0',
          '--log-level',
          'warn',
          '--requests-per-minute',
          '0',
          // Every answer and event is checked against the protocol schemas (a mismatch is a 500).
          '--check-responses',
          ...(options.gatewayArgs ?? []),
        ],
        { env: cleanEnv({ HOME: dirs.home }), cwd: rootDir },
      );
      cleanup.push(() => gateway.stop());
      const timeoutMs = options.startTimeoutMs ?? GATEWAY_START_TIMEOUT_MS;
      const listening = JSON.parse(await gateway.waitForLine(/"event":"listening"/, timeoutMs)) as {
        url: string;
      };
      const tokenLine = await gateway.waitForLine(/"event":"admin_token"/, timeoutMs);
      const adminToken = (JSON.parse(tokenLine) as { admin_token: string }).admin_token;
      const gatewayUrl = listening.url.replace('://localhost', '://127.0.0.1');

      const modelIds = options.models ?? [DEFAULT_MODEL_ID];
      const model = await ModelServer.start({ models: modelIds, scenarios: options.scenarios ?? [] });
      cleanup.push(() => model.close());
      const proxy = await GatewayProxy.start(gatewayUrl);
      cleanup.push(() => proxy.close());

      const admin = personApi({ url: gatewayUrl, token: adminToken });
      const personName = options.personName ?? 'alice';
      const user = await admin.createUser(personName);
      const person = await PersonClient.connect(gatewayUrl, personName, user.token);
      cleanup.push(() => person.close());
      const agentName = options.agentName ?? 'agent';
      const issued = await admin.issueAgentKey(agentName);
      if (options.platform !== undefined)
        await registerAgent(gatewayUrl, issued.key, agentName, options.platform);

      const stack = new Stack({
        gatewayUrl,
        adminToken,
        model,
        proxy,
        gateway,
        agent: { name: agentName, key: issued.key },
        person,
        workdir: dirs.work,
        bridgeStateDir: dirs.bridge,
        rootDir,
        modelProvider: options.modelProvider ?? DEFAULT_MODEL_PROVIDER,
      });
      const signal = options.signal;
      if (signal !== undefined) {
        if (signal.aborted) await stack.close();
        else signal.addEventListener('abort', () => void stack.close(), { once: true });
      }
      return stack;
    } catch (error) {
      await undo();
      throw error;
    }
  }

  /** The running bridge process, `undefined` when none runs. */
  get bridge(): ManagedProcess | undefined {
    return this.#bridge?.process;
  }

  /** Every process the stack started that has not exited yet (Gateway, bridge, anything `env.spawn` made). */
  processes(): ManagedProcess[] {
    return [...this.#processes].filter((p) => p.exit === undefined);
  }

  /**
   * Address of the bridge's agent in `path` (default the stack's workdir) and `session`
   * (default `new`, a new session; `''` the default session; else an alias).
   */
  taskAddress(session = 'new', path: string = this.workdir): string {
    return formatAddress({ name: this.agent.name, path, session });
  }

  /**
   * Creates another person (admin API) and opens their event stream.
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses (e.g. the name exists).
   */
  async addPerson(name: string): Promise<PersonClient> {
    this.#assertOpen();
    const user = await this.#admin().createUser(name);
    const person = await PersonClient.connect(this.gatewayUrl, name, user.token);
    this.#people.set(name, person);
    return person;
  }

  /**
   * Issues a key for another agent (e.g. a peer that mails the bridge's agent), registers it with
   * `platform` (default `peer`) and opens its event stream.
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses.
   */
  async addAgent(name: string, platform = 'peer'): Promise<AgentMailbox> {
    this.#assertOpen();
    const issued = await this.#admin().issueAgentKey(name);
    await registerAgent(this.gatewayUrl, issued.key, name, platform);
    const agent = new AgentMailbox(this.gatewayUrl, name, issued.key);
    this.#agents.add(agent);
    return agent;
  }

  /**
   * Sets the admin's ordered model selection of `platform` (SPEC G-26, B-8): bare ids become
   * `<modelProvider>/<id>`. Bridges read it from their heartbeat answer: set it before
   * {@link startBridge}.
   */
  async setAllowedModels(platform: string, models: readonly string[]): Promise<AllowedModelsResponse> {
    const keys = models.map((m) => (m.includes('/') ? m : `${this.modelProvider}/${m}`));
    return this.#admin().setAllowedModels(platform, keys);
  }

  /** Sends a mail as a person (default: the default person); see {@link PersonClient.send}. */
  sendAs(person: PersonRef, to: string, options: SendOptions): Promise<SentMail> {
    return this.#person(person).send(to, options);
  }

  /**
   * The first mail to the person (default person) meeting the conditions, e.g.
   * `{ inReplyTo: sent.mail_id }` or `{ threadOf, from }`; see {@link PersonClient.awaitMail}.
   * On a timeout the message also carries the bridge's last output lines.
   */
  async awaitReply(options: AwaitMailOptions & { person?: PersonRef } = {}): Promise<Mail> {
    try {
      return await this.#person(options.person).awaitMail(options);
    } catch (error) {
      throw this.#withLogs(error);
    }
  }

  /** The next permission request to the person; see {@link PersonClient.awaitPermission}. */
  async awaitPermission(
    options: AwaitPermissionOptions & { person?: PersonRef } = {},
  ): Promise<PermissionView> {
    try {
      return await this.#person(options.person).awaitPermission(options);
    } catch (error) {
      throw this.#withLogs(error);
    }
  }

  /**
   * The first model request (already recorded or to come) matching `match`; like
   * `stack.model.waitForRequest`, but a timeout message also carries the bridge's last output lines.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT`.
   */
  async awaitModelRequest(
    match: RequestMatch | RequestPredicate,
    timeoutMs: number = DEFAULT_AWAIT_TIMEOUT_MS,
  ): Promise<RecordedRequest> {
    try {
      return await this.model.waitForRequest(match, timeoutMs);
    } catch (error) {
      throw this.#withLogs(error);
    }
  }

  /** Decides an approval request as the person (default person). */
  async decide(requestId: string, decision: Decision, note?: string, person?: PersonRef): Promise<void> {
    await this.#person(person).decide(requestId, decision, note);
  }

  /** Every mail in the person's inbox (read and unread), newest first as the Gateway lists them. */
  async inbox(person?: PersonRef): Promise<MailSummary[]> {
    return (await this.#person(person).inbox({ status: 'all', limit: 100 })).mails;
  }

  /** The whole thread of a mail as the person sees it, oldest first. */
  thread(mailId: string, person?: PersonRef): Promise<Mail[]> {
    return this.#person(person).thread(mailId);
  }

  /**
   * Starts the bridge through `adapter.start` and resolves once it holds its agent event stream
   * (through the proxy). Only one bridge runs at a time. `extraEnv` is added to its
   * `processEnv`; `settings` become {@link BridgeEnv} fields and their `AGENTMAIL_*` variables.
   * @throws {TestkitError} `AM_TESTKIT_PROCESS_START` when it exits first or does not connect within `adapter.readyTimeoutMs`.
   */
  async startBridge(
    adapter: BridgeAdapter,
    extraEnv: Readonly<Record<string, string>> = {},
    settings: BridgeSettings = {},
  ): Promise<ManagedProcess> {
    this.#assertOpen();
    if (this.#bridge !== undefined && this.#bridge.process.exit === undefined)
      throw new TestkitError(
        TESTKIT_ERROR_CODES.PROCESS_START,
        `a ${this.#bridge.adapter.platform} bridge is running already (pid ${this.#bridge.process.pid}); call stopBridge() first.`,
      );
    const env = this.bridgeEnv(adapter, extraEnv, settings);
    const before = this.proxy.eventStreams().length;
    const started = await adapter.start(env);
    const proc =
      started instanceof ManagedProcess
        ? started
        : ManagedProcess.adopt(`bridge-${adapter.platform}`, started);
    this.#processes.add(proc);
    this.#bridge = { process: proc, adapter };
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
  async stopBridge(): Promise<ProcessExit | undefined> {
    const bridge = this.#bridge;
    if (bridge === undefined) return undefined;
    this.#bridge = undefined;
    return bridge.process.stop(bridge.adapter.stopGraceMs);
  }

  /** The environment {@link startBridge} hands the adapter (exposed for adapters' own tests). */
  bridgeEnv(
    adapter: Pick<BridgeAdapter, 'platform'>,
    extraEnv: Readonly<Record<string, string>> = {},
    settings: BridgeSettings = {},
  ): BridgeEnv {
    const modelIds = this.model.models;
    const modelId = modelIds[0] ?? DEFAULT_MODEL_ID;
    const processEnv = cleanEnv({
      HOME: join(this.bridgeStateDir, 'home'),
      AGENTMAIL_GATEWAY_URL: this.bridgeGatewayUrl,
      AGENTMAIL_AGENT_NAME: this.agent.name,
      AGENTMAIL_AGENT_KEY: this.agent.key,
      AGENTMAIL_REPLY_PROVIDER: this.modelProvider,
      AGENTMAIL_REPLY_MODEL: modelId,
      ...(settings.turnTimeoutMs === undefined ? {} : { [TURN_TIMEOUT_ENV]: String(settings.turnTimeoutMs) }),
      ...(settings.questionTimeoutMs === undefined
        ? {}
        : { [QUESTION_TIMEOUT_ENV]: String(settings.questionTimeoutMs) }),
      ...extraEnv,
    });
    return {
      gatewayUrl: this.bridgeGatewayUrl,
      agentName: this.agent.name,
      agentKey: this.agent.key,
      platform: adapter.platform,
      modelBaseUrl: this.model.baseUrl,
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
        this.#processes.add(proc);
        return proc;
      },
    };
  }

  /** The last output lines of the Gateway and the bridge, for failure messages. */
  logs(lines = 40): string {
    const parts = [`--- gateway (pid ${this.gateway.pid}) ---\n${this.gateway.tail(lines)}`];
    for (const proc of this.#processes)
      if (proc !== this.gateway) parts.push(`--- ${proc.name} (pid ${proc.pid}) ---\n${proc.tail(lines)}`);
    return parts.join('\n');
  }

  /**
   * Stops everything: the bridge and every other process the stack started (process groups,
   * SIGKILL after the grace time), the Gateway, the model server, the proxy, the event streams;
   * removes the temp directory. Never rejects; idempotent.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const bridge = this.#bridge;
      this.#bridge = undefined;
      const steps: Array<() => Promise<unknown>> = [
        async () => bridge?.process.stop(bridge.adapter.stopGraceMs),
        async () => Promise.all([...this.#processes].filter((p) => p !== this.gateway).map((p) => p.stop())),
        () => Promise.all([...this.#people.values()].map((p) => p.close())),
        () => Promise.all([...this.#agents].map((a) => a.close())),
        () => this.gateway.stop(),
        () => this.model.close(),
        () => this.proxy.close(),
        () => rm(this.rootDir, { recursive: true, force: true }),
      ];
      for (const step of steps) await step().catch(() => {});
    })();
    return this.#closed;
  }

  /** Same as {@link close}, for `await using stack = await startStack()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #admin(): PersonApi {
    return personApi({ url: this.gatewayUrl, token: this.adminToken });
  }

  #assertOpen(): void {
    if (this.#closed !== undefined)
      throw new TestkitError(TESTKIT_ERROR_CODES.STACK_CLOSED, 'the stack is closed; start a new one.');
  }

  #person(ref: PersonRef): PersonClient {
    if (ref === undefined) return this.person;
    if (typeof ref !== 'string') return ref;
    const found = this.#people.get(ref);
    if (found === undefined)
      throw new TestkitError(
        TESTKIT_ERROR_CODES.API,
        `no person named "${ref}" in this stack (known: ${[...this.#people.keys()].join(', ')}); create one with addPerson().`,
      );
    return found;
  }

  #withLogs(error: unknown): unknown {
    if (error instanceof TestkitError && error.code === TESTKIT_ERROR_CODES.WAIT_TIMEOUT)
      return new TestkitError(error.code, `${error.message}\n${this.logs()}`, { cause: error });
    return error;
  }
}

/** `POST /agent/register` with the agent's key (the harness's client: a refusal is `AM_TESTKIT_API`). */
async function registerAgent(gatewayUrl: string, key: string, name: string, platform: string): Promise<void> {
  await harnessClient({ url: gatewayUrl, token: key }).call('register', { body: { name, platform } });
}

/**
 * Starts a stack: builds (once per process) and runs the Gateway CLI as a child process on a temp
 * data directory and a random loopback port, starts the scripted model server in this process and
 * a watching proxy for bridges, creates the default person (event stream open) and the agent's key
 * (registered when `options.platform` is given). Everything is undone if a step fails.
 * @throws {TestkitError} `AM_TESTKIT_GATEWAY_BUILD`, `AM_TESTKIT_PROCESS_START` / `AM_TESTKIT_WAIT_TIMEOUT` (Gateway did not start), `AM_TESTKIT_API`.
 * @example
 * const stack = await startStack({ platform: 'pi' });
 * onTestFinished(() => stack.close());
 */
export function startStack(options: StackOptions = {}): Promise<Stack> {
  return Stack.start(options);
}
