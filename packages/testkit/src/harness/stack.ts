/**
 * The end-to-end stack: a real Gateway as a child process (a {@link Testbed}: `agentmail serve` on a
 * temp data dir and a random loopback port, shared by the stacks of a test file or made for one
 * stack), the scripted model server, a watching proxy for the bridge, a person with an open event
 * stream, an agent key, and the bridge under test as a child process (a {@link BridgeHost}).
 * Lanes (`stack.lane()`) share one running bridge between stacks, each with its own person.
 */
import {
  type AllowedModelsResponse,
  formatAddress,
  type Mail,
  type MailSummary,
  type PermissionView,
} from '@agentmail/protocol';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { DEFAULT_MODEL_ID } from '../reply-writer.js';
import type { RecordedRequest } from '../request.js';
import type { RequestMatch, RequestPredicate, Scenario } from '../scenario.js';
import { AgentMailbox } from './agent-mailbox.js';
import type { BridgeEnv, BridgeSettings, HostHarness } from './bridge.js';
import { type AgentIdentity, BridgeHost } from './bridge-host.js';
import type { GatewayProxy } from './gateway-proxy.js';
import type { ModelView, ScriptedModel } from './model-view.js';
import {
  type AwaitMailOptions,
  type AwaitPermissionOptions,
  DEFAULT_AWAIT_TIMEOUT_MS,
  type Decision,
  PersonClient,
  type SendOptions,
  type SentMail,
} from './person.js';
import type { ManagedProcess, ProcessExit } from './processes.js';
import { startTestbed, type Testbed } from './testbed.js';

export type { AgentIdentity } from './bridge-host.js';
export { GATEWAY_START_TIMEOUT_MS } from './testbed.js';

/** Provider id of the scripted model in allowed-model keys (`scripted/<id>`). @default 'scripted' */
export const DEFAULT_MODEL_PROVIDER = 'scripted';

/** Options of {@link startStack}. */
export interface StackOptions {
  /**
   * Run on this testbed's Gateway (shared with the file's other stacks; the stack's agent and
   * person names then get a unique suffix, e.g. `alice-3f9a01`). @default a testbed of its own,
   * closed with the stack
   */
  testbed?: Testbed;
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
  /** Extra arguments for `agentmail serve` (only without `testbed`). */
  gatewayArgs?: readonly string[];
  /** @default GATEWAY_START_TIMEOUT_MS (only without `testbed`) */
  startTimeoutMs?: number;
  /** Aborting it closes the stack. */
  signal?: AbortSignal;
}

/** Options of {@link Stack.lane}. */
export interface LaneOptions {
  /** Base of the lane's person name (a unique suffix is added). @default 'alice' */
  personName?: string;
  /**
   * `shared` (default): lanes run at the same time on the running bridge; a lane cannot stop it
   * or start it with other settings (`AM_TESTKIT_HOST_SHARED`). `exclusive`: one lane at a time
   * (the caller makes sure); it may stop and restart the bridge, and its first `startBridge`
   * reuses a bridge left running with equal settings.
   */
  mode?: 'shared' | 'exclusive';
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
  /**
   * The scripted model (in this process): add scenarios, read the journal. On a shared bridge
   * (lanes) the journal holds this stack's requests (those naming its person or peer agents) and
   * any nobody claims.
   */
  readonly model: ScriptedModel;
  /** The proxy between the bridge and the Gateway (event streams, cuts); lanes share it. */
  readonly proxy: GatewayProxy;
  /** The agent the bridge runs as. */
  readonly agent: AgentIdentity;
  /** The default person. */
  readonly person: PersonClient;
  /** Existing directory the mails are addressed to. */
  readonly workdir: string;
  /** The bridge's own directory, kept across bridge restarts. */
  readonly bridgeStateDir: string;
  /** Temp directory of the Gateway (data in `gateway-data/`): the testbed's. */
  readonly rootDir: string;
  readonly modelProvider: string;
  readonly #testbed: Testbed;
  readonly #ownsTestbed: boolean;
  readonly #host: BridgeHost;
  readonly #ownsHost: boolean;
  readonly #mode: 'own' | 'shared' | 'exclusive';
  readonly #view: ModelView;
  readonly #people = new Map<string, PersonClient>();
  readonly #agents = new Set<AgentMailbox>();
  #closed: Promise<void> | undefined;

  private constructor(init: {
    testbed: Testbed;
    ownsTestbed: boolean;
    host: BridgeHost;
    ownsHost: boolean;
    mode: 'own' | 'shared' | 'exclusive';
    view: ModelView;
    person: PersonClient;
  }) {
    this.#testbed = init.testbed;
    this.#ownsTestbed = init.ownsTestbed;
    this.#host = init.host;
    this.#ownsHost = init.ownsHost;
    this.#mode = init.mode;
    this.#view = init.view;
    this.gatewayUrl = init.testbed.gatewayUrl;
    this.adminToken = init.testbed.adminToken;
    this.rootDir = init.testbed.rootDir;
    this.bridgeGatewayUrl = init.host.proxy.url;
    this.model = init.view;
    this.proxy = init.host.proxy;
    this.agent = init.host.agent;
    this.workdir = init.host.workdir;
    this.bridgeStateDir = init.host.bridgeStateDir;
    this.modelProvider = init.host.modelProvider;
    this.person = init.person;
    this.#people.set(init.person.name, init.person);
  }

  /** The Gateway child process (the testbed's; a new one after {@link restartGateway}). */
  get gateway(): ManagedProcess {
    return this.#testbed.gateway;
  }

  /**
   * Restarts the Gateway on the same data directory and port ({@link Testbed.restartGateway}):
   * every client's connections drop and find it again. On a shared testbed every stack on it sees
   * the restart.
   */
  restartGateway(): Promise<void> {
    return this.#testbed.restartGateway();
  }

  /** @internal Used by {@link startStack}. */
  static async start(options: StackOptions = {}): Promise<Stack> {
    const ownsTestbed = options.testbed === undefined;
    const testbed =
      options.testbed ??
      (await startTestbed({
        ...(options.gatewayArgs === undefined ? {} : { gatewayArgs: options.gatewayArgs }),
        ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
      }));
    let host: BridgeHost | undefined;
    let person: PersonClient | undefined;
    try {
      // A testbed of its own: the names as given. A shared one: unique names (see uniqueName).
      const agentName = testbed.uniqueName(options.agentName ?? 'agent', ownsTestbed);
      const agent = await testbed.issueAgent(agentName, options.platform);
      host = await BridgeHost.start({
        agent,
        dir: ownsTestbed ? testbed.rootDir : await testbed.makeDir(`host-${agentName}`),
        ownsDir: !ownsTestbed,
        gatewayUrl: testbed.gatewayUrl,
        models: options.models ?? [DEFAULT_MODEL_ID],
        modelProvider: options.modelProvider ?? DEFAULT_MODEL_PROVIDER,
        scenarios: options.scenarios ?? [],
      });
      person = await connectPerson(testbed, options.personName ?? 'alice', ownsTestbed);
      const stack = new Stack({
        testbed,
        ownsTestbed,
        host,
        ownsHost: true,
        mode: 'own',
        view: host.models.view([person.name]),
        person,
      });
      stack.#closeOnAbort(options.signal);
      return stack;
    } catch (error) {
      await person?.close().catch(() => {});
      await host?.close();
      if (ownsTestbed) await testbed.close();
      throw error;
    }
  }

  /**
   * Another stack on this stack's running bridge: the same Gateway, agent, working directory,
   * model server and proxy, with a person of its own (`<personName>-<hex>`) whose mails, requests
   * and model journal it sees. Closing a lane closes its people and agents, not the bridge (the
   * stack that made it does). See {@link LaneOptions.mode} for what a lane may do with the bridge.
   * @throws {TestkitError} `AM_TESTKIT_STACK_CLOSED`, `AM_TESTKIT_API`.
   */
  async lane(options: LaneOptions & { signal?: AbortSignal } = {}): Promise<Stack> {
    this.#assertOpen();
    const person = await connectPerson(this.#testbed, options.personName ?? 'alice', false);
    const lane = new Stack({
      testbed: this.#testbed,
      ownsTestbed: false,
      host: this.#host,
      ownsHost: false,
      mode: options.mode ?? 'shared',
      view: this.#host.models.view([person.name]),
      person,
    });
    lane.#closeOnAbort(options.signal);
    return lane;
  }

  /** The running bridge process, `undefined` when none runs. */
  get bridge(): ManagedProcess | undefined {
    return this.#host.bridge;
  }

  /** Every process the stack started that has not exited yet (the Gateway of its own testbed, the bridge, anything `env.spawn` made). */
  processes(): ManagedProcess[] {
    const all = [...(this.#ownsTestbed ? [this.gateway] : []), ...this.#host.processes];
    return all.filter((p) => p.exit === undefined);
  }

  /**
   * Address of the bridge's agent in `path` (default the stack's workdir) and `session`
   * (default `new`, a new session; `''` the default session; else an alias).
   */
  taskAddress(session = 'new', path: string = this.workdir): string {
    return formatAddress({ name: this.agent.name, path, session });
  }

  /**
   * Creates another person (admin API) and opens their event stream. On a shared testbed the name
   * gets a unique suffix (read it from the result's `name`).
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses (e.g. the name exists).
   */
  async addPerson(name: string): Promise<PersonClient> {
    this.#assertOpen();
    const person = await connectPerson(this.#testbed, name, this.#ownsTestbed);
    this.#view.claim(person.name);
    this.#people.set(person.name, person);
    return person;
  }

  /**
   * Issues a key for another agent (e.g. a peer that mails the bridge's agent), registers it with
   * `platform` (default `peer`) and opens its event stream. On a shared testbed the name gets a
   * unique suffix (read it from the result's `name`).
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses.
   */
  async addAgent(name: string, platform = 'peer'): Promise<AgentMailbox> {
    this.#assertOpen();
    const issued = await this.#testbed.issueAgent(
      this.#testbed.uniqueName(name, this.#ownsTestbed),
      platform,
    );
    this.#view.claim(issued.name);
    const agent = new AgentMailbox(this.gatewayUrl, issued.name, issued.key);
    this.#agents.add(agent);
    return agent;
  }

  /**
   * Sets the admin's ordered model selection of `platform` (SPEC G-26, B-8): bare ids become
   * `<modelProvider>/<id>`. Bridges read it from their heartbeat answer: set it before
   * {@link startBridge}. It holds for every agent of the platform on this Gateway (the other
   * stacks of a shared testbed too).
   */
  async setAllowedModels(platform: string, models: readonly string[]): Promise<AllowedModelsResponse> {
    const keys = models.map((m) => (m.includes('/') ? m : `${this.modelProvider}/${m}`));
    return this.#testbed.admin().setAllowedModels(platform, keys);
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
   * A lane (see {@link lane}) gets the running bridge when it was started the same way.
   * @throws {TestkitError} `AM_TESTKIT_PROCESS_START` when it exits first or does not connect within `adapter.readyTimeoutMs`;
   * `AM_TESTKIT_HOST_SHARED` when a shared lane asks for other settings than the running bridge's.
   */
  async startBridge(
    adapter: HostHarness,
    extraEnv: Readonly<Record<string, string>> = {},
    settings: BridgeSettings = {},
  ): Promise<ManagedProcess> {
    this.#assertOpen();
    const reuse = this.#mode === 'shared' ? 'shared' : this.#mode === 'exclusive' ? 'restart' : undefined;
    return this.#host.start(adapter, extraEnv, settings, reuse);
  }

  /**
   * Stops the running bridge (SIGTERM to its process group, SIGKILL after the adapter's grace
   * time) and resolves with how it exited; `undefined` when none ran.
   * @throws {TestkitError} `AM_TESTKIT_HOST_SHARED` on a shared lane (other lanes use the bridge).
   */
  async stopBridge(): Promise<ProcessExit | undefined> {
    if (this.#mode === 'shared')
      throw new TestkitError(
        TESTKIT_ERROR_CODES.HOST_SHARED,
        'this stack is a shared lane: other stacks use its bridge, so it cannot stop it; use a stack of its own.',
      );
    return this.#host.stop();
  }

  /** The environment {@link startBridge} hands the adapter (exposed for adapters' own tests). */
  bridgeEnv(
    adapter: Pick<HostHarness, 'platform'>,
    extraEnv: Readonly<Record<string, string>> = {},
    settings: BridgeSettings = {},
  ): BridgeEnv {
    return this.#host.bridgeEnv(adapter, extraEnv, settings);
  }

  /** The last output lines of the Gateway and the bridge, for failure messages. */
  logs(lines = 40): string {
    const parts = [`--- gateway (pid ${this.gateway.pid}) ---\n${this.gateway.tail(lines)}`];
    for (const proc of this.#host.processes)
      parts.push(`--- ${proc.name} (pid ${proc.pid}) ---\n${proc.tail(lines)}`);
    return parts.join('\n');
  }

  /**
   * Stops everything the stack owns: its people's and agents' event streams; the bridge and every
   * other process it started (process groups, SIGKILL after the grace time), the model server and
   * the proxy (not for a lane); the Gateway and the temp directory (when the testbed is its own).
   * Never rejects; idempotent.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const steps: Array<() => Promise<unknown>> = [
        async () => (this.#ownsHost ? this.#host.stop() : undefined),
        () => Promise.all([...this.#people.values()].map((p) => p.close())),
        () => Promise.all([...this.#agents].map((a) => a.close())),
        async () => (this.#ownsHost ? this.#host.close() : undefined),
        async () => (this.#ownsTestbed ? this.#testbed.close() : undefined),
      ];
      for (const step of steps) await step().catch(() => {});
    })();
    return this.#closed;
  }

  /** Same as {@link close}, for `await using stack = await startStack()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #closeOnAbort(signal: AbortSignal | undefined): void {
    if (signal === undefined) return;
    if (signal.aborted) void this.close();
    else signal.addEventListener('abort', () => void this.close(), { once: true });
  }

  #assertOpen(): void {
    if (this.#closed !== undefined || this.#testbed.closed)
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

/** Creates person `base` (exact, or with a unique suffix) and opens their event stream. */
async function connectPerson(testbed: Testbed, base: string, exact: boolean): Promise<PersonClient> {
  const name = testbed.uniqueName(base, exact);
  const user = await testbed.admin().createUser(name);
  return PersonClient.connect(testbed.gatewayUrl, name, user.token);
}

/**
 * Starts a stack: on `options.testbed`, or on a testbed of its own (builds, once per process, and
 * runs the Gateway CLI as a child process on a temp data directory and a random loopback port);
 * starts the scripted model server in this process and a watching proxy for bridges, creates the
 * default person (event stream open) and the agent's key (registered when `options.platform` is
 * given). Everything is undone if a step fails.
 * @throws {TestkitError} `AM_TESTKIT_GATEWAY_BUILD`, `AM_TESTKIT_PROCESS_START` / `AM_TESTKIT_WAIT_TIMEOUT` (Gateway did not start), `AM_TESTKIT_API`.
 * @example
 * const stack = await startStack({ platform: 'pi' });
 * onTestFinished(() => stack.close());
 */
export function startStack(options: StackOptions = {}): Promise<Stack> {
  return Stack.start(options);
}
