/**
 * The `agentmail-claude` bridge: the kit's `createBridge` with the turn RPC on (the plugin's
 * tool and hook processes reach the running turn through it, SPEC B-21), the Claude Code turn
 * adapter, and the heartbeat facts: the person's sessions from the transcripts (G-25, G-37), the
 * models the admin may choose from, and `mode_enforcement` from a startup self-check (P-8).
 */
import { mkdir } from 'node:fs/promises';
import type { Bridge, BridgeLogger } from '@agentmail/bridge-kit';
import { HOOK_SELF_CHECK_ENV } from '@agentmail/host-tools';
import { createDriverBridge, type SetupCheckResult, stderrSummary } from '@agentmail/host-tools/driver';
import { HEARTBEAT_MAX_SESSIONS } from '@agentmail/protocol';
import { resolveLocale } from '@agentmail/shared-policy';
import { runClaude } from './claude-run.js';
import type { ClaudeBridgeConfig } from './config.js';
import { BRIDGE_VERSION, PLATFORM } from './constants.js';
import type { ClaudeEvent } from './events.js';
import { SANDBOX_UNSUPPORTED } from './host.js';
import { listSessions } from './transcripts.js';
import { checkRunSetup, claudeTurns, runArgs, runEnv } from './turns.js';

/** The bridge's event bus type. */
export type ClaudeBridge = Bridge<ClaudeEvent>;

/** The outcome of {@link selfCheck}. */
export type SelfCheckResult = SetupCheckResult;

// Nothing listens on the discard port: the check ends before a model would be asked, offline.
const NO_MODEL_URL = 'http://127.0.0.1:9';

/**
 * Start Claude Code once with the plugin, without a mail and without a model, and read its
 * `init` line (SPEC P-8): the plugin must be loaded from the configured directory, its
 * SessionStart hook must have run (written the ready marker) and its MCP server must be
 * connected. The run is stopped at `init`, writes no transcript (`--no-session-persistence`) and
 * reaches no network (its model URL is a closed loopback port). Never throws.
 */
export async function selfCheck(config: ClaudeBridgeConfig, signal?: AbortSignal): Promise<SelfCheckResult> {
  let verdict: SelfCheckResult | undefined;
  // The check runs in the data directory, before anything else of the bridge created it.
  try {
    await mkdir(config.dataDir, { recursive: true });
  } catch (err) {
    return { ok: false, reason: `the data directory ${config.dataDir} cannot be created: ${String(err)}` };
  }
  const report = await runClaude({
    bin: config.claudeBin,
    args: runArgs({
      prompt: 'AgentMail self-check: answer nothing.',
      pluginDir: config.pluginDir,
      ephemeral: true,
    }),
    cwd: config.dataDir,
    env: {
      ...runEnv(config, undefined),
      [HOOK_SELF_CHECK_ENV]: '1',
      ANTHROPIC_BASE_URL: NO_MODEL_URL,
      ANTHROPIC_API_KEY: 'agentmail-self-check',
      CLAUDE_CODE_MAX_RETRIES: '0',
    },
    ...(signal ? { signal } : {}),
    checkSetup: (init, hooks) => {
      const problem = checkRunSetup(init, hooks, config.pluginDir, resolveLocale(config.locale));
      verdict = problem === undefined ? { ok: true } : { ok: false, reason: problem };
      return 'self-check done';
    },
  });
  if (verdict) return verdict;
  const tail = stderrSummary(report.stderrTail);
  return {
    ok: false,
    reason: `${config.claudeBin} ended before its init line (exit code ${report.code ?? 'none'}${tail ? `: ${tail}` : ''})`,
  };
}

/** Options of {@link createClaudeBridge}. */
export interface ClaudeBridgeOptions {
  log?: BridgeLogger;
  /** The self-check's outcome (P-8); run it before {@link Bridge.start}. */
  enforcement: SelfCheckResult;
}

/**
 * The bridge over `config` (not started).
 * @example
 * const check = await selfCheck(config);
 * const bridge = createClaudeBridge(config, { log, enforcement: check });
 * await bridge.start();
 */
export function createClaudeBridge(config: ClaudeBridgeConfig, options: ClaudeBridgeOptions): ClaudeBridge {
  const models = config.models.map((m) => ({ key: `${config.modelProvider}/${m}`, name: m }));
  // A failed self-check is repeated before the next turn: a plugin fixed meanwhile makes the
  // bridge native again; a broken one fails the turn before any `claude` run.
  return createDriverBridge<ClaudeEvent>({
    platform: PLATFORM,
    version: BRIDGE_VERSION,
    config,
    ...(options.log ? { log: options.log } : {}),
    enforcement: options.enforcement,
    recheck: (signal) => selfCheck(config, signal),
    turns: (emit, setup) => claudeTurns(config, emit, setup),
    sandbox: { unsupported: SANDBOX_UNSUPPORTED },
    snapshot: {
      sessions: async () => listSessions(config.claudeHome, HEARTBEAT_MAX_SESSIONS),
      models: async () => models,
    },
  });
}
