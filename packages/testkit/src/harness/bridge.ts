/**
 * How the harness starts a bridge: the adapter a bridge package writes once (how to start it,
 * what its platform calls its tools), and the environment the harness hands it.
 */
import type { ChildProcess } from 'node:child_process';
import type { ManagedProcess } from './processes.js';

/** The platform's own names of the tools the conformance scenarios make the model call (SPEC P-3). */
export interface BridgeToolNames {
  /** The shell tool (guarded), e.g. pi `bash`. */
  shell: string;
  /** The read-a-file tool (not guarded), e.g. pi `read`. */
  readFile: string;
  /** The write-a-file tool (guarded), e.g. pi `write`. */
  writeFile?: string;
  /** The edit-a-file tool (guarded), e.g. pi `edit`. */
  editFile?: string;
}

/**
 * What the harness gives {@link HostHarness.start}. The bridge must talk to the Gateway only
 * through `gatewayUrl` (a pass-through proxy the harness watches) and to the model only through
 * `modelBaseUrl`.
 */
export interface BridgeEnv {
  /** Gateway origin for the bridge (`AGENTMAIL_GATEWAY_URL`). */
  gatewayUrl: string;
  /** The agent identity (`AGENTMAIL_AGENT_NAME`, `AGENTMAIL_AGENT_KEY`). */
  agentName: string;
  agentKey: string;
  /** The adapter's platform, as registered. */
  platform: string;
  /** OpenAI-compatible base URL of the scripted model, `http://127.0.0.1:<port>/v1`. */
  modelBaseUrl: string;
  /**
   * Provider id to configure for the scripted model; allowed-model keys the scenarios set are
   * `<modelProvider>/<model id>` (SPEC G-26). Any API key is accepted.
   */
  modelProvider: string;
  /** The model to use when the admin allows none (the host default, SPEC B-8). */
  modelId: string;
  /** Every model id the scripted server lists; configure them all in the host's catalogue. */
  modelIds: readonly string[];
  /** Existing directory the scenarios' mails are addressed to (`<agent>@<workdir>.new`). */
  workdir: string;
  /**
   * The bridge's own directory (configuration, session files, cursor, grants); kept across
   * {@link Stack.stopBridge} / {@link Stack.startBridge} within one stack.
   */
  stateDir: string;
  /**
   * A process environment to pass on: the test process's environment without any `AGENTMAIL_*`
   * variable, `HOME` set inside `stateDir`, plus `AGENTMAIL_GATEWAY_URL`, `AGENTMAIL_AGENT_NAME`,
   * `AGENTMAIL_AGENT_KEY`, `AGENTMAIL_REPLY_PROVIDER` (= `modelProvider`) and
   * `AGENTMAIL_REPLY_MODEL` (= `modelId`).
   */
  processEnv: NodeJS.ProcessEnv;
  /**
   * The turn timeout the scenario asks for, in ms (SPEC B-7), when it asks for one; also in
   * `processEnv` as `AGENTMAIL_TURN_TIMEOUT_MS`. A bridge must read it (from here or the
   * environment): a turn still running after it is stopped and answered with a failure mail.
   * `undefined`: the bridge's own default.
   */
  turnTimeoutMs?: number;
  /**
   * Spawns a process the harness owns: its own process group (killed as a group on stop and
   * close), output captured for failure messages. Use it to start the bridge.
   */
  spawn(
    command: string,
    args: readonly string[],
    options?: { env?: NodeJS.ProcessEnv; cwd?: string },
  ): ManagedProcess;
}

/**
 * The host harness of a bridge: how the conformance scenarios start its real host and bridge and
 * what the host calls its tools. A bridge package writes one (in its `harness/` directory) and
 * passes it to `conformanceSuite(harness)`. Not the kit's `BridgeAdapter` (what a bridge
 * implements for `createBridge`): this one is test-side only.
 *
 * @example
 * export const piAdapter: HostHarness = {
 *   platform: 'pi',
 *   toolNames: { shell: 'bash', readFile: 'read', writeFile: 'write', editFile: 'edit' },
 *   start: (env) => env.spawn(process.execPath, [daemonJs], { env: { ...env.processEnv, PI_BASE_URL: env.modelBaseUrl } }),
 * };
 */
export interface HostHarness {
  /** Platform name the bridge registers with (the admin's model selection is per platform). */
  platform: string;
  toolNames: BridgeToolNames;
  /** Arguments of a shell tool call that runs `command`. @default `{ command }` */
  shellArgs?: (command: string) => Record<string, unknown>;
  /** Arguments of a read-file tool call for an absolute `path`. @default `{ path }` */
  readFileArgs?: (path: string) => Record<string, unknown>;
  /**
   * The name the model calls a mail tool by (SPEC B-17 names it, e.g. `read_mail`): hosts that
   * serve the mail tools over MCP prefix them (Claude Code: `mcp__plugin_agentmail_mail__read_mail`).
   * @default the mail tool's own name
   */
  mailTool?: (name: string) => string;
  /**
   * Starts the bridge and returns its process: preferably one made with `env.spawn`; a
   * `ChildProcess` spawned otherwise is adopted (spawn it `detached` so its whole group can be
   * killed). The bridge counts as started once it holds its event stream (SPEC B-1).
   */
  start(env: BridgeEnv): ManagedProcess | ChildProcess | Promise<ManagedProcess | ChildProcess>;
  /**
   * The host's tools (its shell above all) run as children of the bridge's own process (an
   * opencode plugin, a pi extension): that process's initial environment (`/proc/<pid>/environ`)
   * is the bridge's and keeps what it was started with, so the `key-out-of-shell` scenario does
   * not check the shell's parent (SPEC B-21). @default false
   */
  toolsInBridgeProcess?: boolean;
  /** Time from `start` until the bridge holds its event stream, in ms. @default 30_000 */
  readyTimeoutMs?: number;
  /** Time the bridge may take to exit after SIGTERM before it is killed, in ms. @default 10_000 */
  stopGraceMs?: number;
  /**
   * Time one scenario step may wait for the bridge (a reply, a permission request), in ms; raise
   * it for slow hosts. @default 30_000
   */
  stepTimeoutMs?: number;
  /**
   * The provider id under which the host lists the scripted model (catalogue keys, allowed-model
   * keys: `<modelProvider>/<model>`), when the host fixes it (DSH's OpenAI-compatible route is
   * `deepseek-official`). @default the stack's, `scripted`
   */
  modelProvider?: string;
  /**
   * The host's question seam (an `ask_user_question`-style tool, SPEC P-9), for the `question`
   * scenario; or why the host has none (the scenario is skipped with that reason).
   */
  questions?: BridgeQuestionTool | { unsupported: string };
  /**
   * The short turn timeout the `turn-timeout` scenario configures, in ms: long enough for one
   * ordinary turn of this bridge on a loaded machine (the scenario's next mail must still finish
   * within it), short enough to wait for. @default CONFORMANCE_TURN_TIMEOUT_MS (15_000)
   */
  shortTurnTimeoutMs?: number;
}

/** One question as the `question` scenario asks it: no `options` means free text. */
export interface NeutralQuestion {
  id: string;
  question: string;
  header?: string;
  options?: Array<{ label: string; description?: string }>;
}

/** How the model calls the host's question tool. */
export interface BridgeQuestionTool {
  /** Tool name, e.g. DSH `ask_user_question`. */
  tool: string;
  /** The tool call's arguments for `questions`. */
  args(questions: readonly NeutralQuestion[]): Record<string, unknown>;
  /**
   * The host's own question tools a mail turn must not offer: they would wait for a UI nobody
   * watches instead of asking by mail (SPEC P-9), e.g. opencode's `question`. @default []
   */
  hidden?: readonly string[];
}

/**
 * The kit's `ask_person` mail tool (SPEC P-10) as the question seam of a host without one of its
 * own: one question per call (`question`, option labels, `multi_select`). `name` is the tool's name
 * on the host (an MCP host prefixes it: `mailTool('ask_person')`). @default 'ask_person'. `hidden`:
 * the host's own question tools a mail turn leaves out ({@link BridgeQuestionTool.hidden}).
 * @throws Error when a scenario asks several questions in one call (ask_person takes one).
 */
export function askPersonQuestions(name = 'ask_person', hidden: readonly string[] = []): BridgeQuestionTool {
  return {
    tool: name,
    hidden,
    args(questions) {
      const [q, ...more] = questions;
      if (q === undefined || more.length > 0)
        throw new Error(`ask_person takes exactly one question per call (got ${questions.length})`);
      return {
        question: q.header ? `${q.header}: ${q.question}` : q.question,
        ...(q.options?.length ? { options: q.options.map((o) => o.label) } : {}),
      };
    },
  };
}

/**
 * Bridge settings a scenario chooses per start (see {@link BridgeEnv}); each one also reaches the
 * bridge as an `AGENTMAIL_*` variable of the shared naming scheme (SPEC §8).
 */
export interface BridgeSettings {
  /** Turn timeout, in ms (`AGENTMAIL_TURN_TIMEOUT_MS`, SPEC B-7). @default the bridge's own */
  turnTimeoutMs?: number;
  /** How long a question waits for its answer, in ms (`AGENTMAIL_QUESTION_TIMEOUT_MS`, SPEC P-9). @default the bridge's own */
  questionTimeoutMs?: number;
}

/** Environment variable carrying {@link BridgeSettings.turnTimeoutMs} (SPEC §8, B-7). */
export const TURN_TIMEOUT_ENV = 'AGENTMAIL_TURN_TIMEOUT_MS';

/** Environment variable carrying {@link BridgeSettings.questionTimeoutMs} (SPEC §8, P-9). */
export const QUESTION_TIMEOUT_ENV = 'AGENTMAIL_QUESTION_TIMEOUT_MS';

/** Environment variable of the bridge lock's stale time (SPEC G-22), which every harness bridge gets. */
export const LOCK_STALE_ENV = 'AGENTMAIL_BRIDGE_LOCK_STALE_MS';

/**
 * The bridge lock's stale time of every bridge the harness starts, in ms: a killed bridge's
 * successor waits up to this (plus a fifth) instead of 15 s. The holder refreshes at half of it,
 * so a test process's event loop may stall for 3 s before the lock counts as lost. @default 6_000
 */
export const CONFORMANCE_LOCK_STALE_MS = 6_000;

/** Default of {@link HostHarness.readyTimeoutMs}, in ms. */
export const BRIDGE_READY_TIMEOUT_MS = 30_000;
