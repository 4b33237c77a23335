/**
 * The Claude Code `HostHarness` of the testkit harness: the `agentmail-claude` daemon (bundled,
 * build.ts) run by environment variables only, driving the real pinned `claude` binary against the
 * scripted model's Anthropic endpoint. HOME, TMPDIR and the bridge's data directory live under the
 * stack's bridge state directory, so nothing of the person's own Claude Code is read or written;
 * Claude Code's retries are capped (the scenarios script every answer).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { askPersonQuestions, type BridgeEnv, type HostHarness, sharedBuild } from '@agentmail/testkit';
import { MAIL_TOOL_PREFIX } from '../src/constants.js';
import { type BuiltBridge, buildBridge } from './build.js';
import { claudeBinary } from './claude-bin.js';

const bundle = sharedBuild(buildBridge);

/** The bundled daemon and plugin, built on first use and shared by the test file. */
export const bundled: () => Promise<BuiltBridge> = bundle.get;

/** Removes the bundle (call in `afterAll`). */
export const removeBundle: () => Promise<void> = bundle.remove;

/** The isolated directories of one bridge state directory (HOME and TMPDIR created). */
export function claudeDirs(stateDir: string): { home: string; tmp: string; data: string } {
  const dirs = {
    home: join(stateDir, 'home'),
    tmp: join(stateDir, 'tmp'),
    data: join(stateDir, 'claude-data'),
  };
  // The data directory is left to the daemon: it must create it itself (its self-check runs there first).
  for (const d of [dirs.home, dirs.tmp]) mkdirSync(d, { recursive: true });
  return dirs;
}

/** How {@link createClaudeAdapter} runs the daemon. */
export interface ClaudeAdapterOptions {
  /** A plugin directory instead of the built copy (e.g. a broken one). */
  pluginDir?: string;
  /** Variables added last (they win). */
  env?: NodeJS.ProcessEnv;
}

/** The daemon's environment for a harness `env` (everything but the spawn). */
export async function daemonEnv(
  env: BridgeEnv,
  options: ClaudeAdapterOptions = {},
): Promise<NodeJS.ProcessEnv> {
  const { pluginDir } = await bundled();
  const dirs = claudeDirs(env.stateDir);
  const base: NodeJS.ProcessEnv = {};
  // The person's own Claude Code configuration must not leak in.
  for (const [k, v] of Object.entries(env.processEnv))
    if (!k.startsWith('ANTHROPIC_') && !k.startsWith('CLAUDE_')) base[k] = v;
  return {
    ...base,
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    ANTHROPIC_BASE_URL: env.modelBaseUrl.replace(/\/v1\/?$/, ''),
    ANTHROPIC_API_KEY: 'test-key',
    CLAUDE_CODE_MAX_RETRIES: '0',
    AGENTMAIL_CLAUDE_BIN: claudeBinary(),
    AGENTMAIL_CLAUDE_PLUGIN_DIR: options.pluginDir ?? pluginDir,
    AGENTMAIL_CLAUDE_PROVIDER: env.modelProvider,
    AGENTMAIL_CLAUDE_MODELS: env.modelIds.join(','),
    AGENTMAIL_CLAUDE_CODE_DATA_DIR: dirs.data,
    ...options.env,
  };
}

/**
 * A Claude Code adapter: Claude Code 2.1.328's tool names and argument shapes (its init line's
 * tool list; Bash takes `command` + `description`, Read `file_path`).
 */
export function createClaudeAdapter(options: ClaudeAdapterOptions = {}): HostHarness {
  return {
    platform: 'claude-code',
    toolNames: { shell: 'Bash', readFile: 'Read', writeFile: 'Write', editFile: 'Edit' },
    shellArgs: (command) => ({ command, description: 'Run the command' }),
    readFileArgs: (path) => ({ file_path: path }),
    mailTool: (name) => `${MAIL_TOOL_PREFIX}${name}`,
    // AskUserQuestion is disabled in -p: the kit's ask_person mail tool is the seam (P-10).
    questions: askPersonQuestions(`${MAIL_TOOL_PREFIX}ask_person`),
    // The self-check starts Claude Code once before the bridge connects (~1 s alone, more under load).
    readyTimeoutMs: 90_000,
    stepTimeoutMs: 60_000,
    // A turn starts Claude Code, its MCP server and hooks: ~1 s alone, 3–6 s under load (the bench).
    shortTurnTimeoutMs: 30_000,
    async start(env) {
      const { daemonJs } = await bundled();
      return env.spawn(process.execPath, [daemonJs], { env: await daemonEnv(env, options) });
    },
  };
}

/** The default adapter: the built plugin and daemon. */
export const claudeAdapter: HostHarness = createClaudeAdapter();
