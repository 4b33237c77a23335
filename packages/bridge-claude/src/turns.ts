/**
 * The Claude Code `TurnAdapter`: one headless `claude -p` run per attempt (docs/BRIDGE-CONTRACT.md),
 * its outcome from the final `result` line (B-7), its session from the transcripts (B-4).
 */
import { realpathSync } from 'node:fs';
import type { EmitEvent, TurnAdapter, TurnRpcEnv } from '@agentmail/bridge-kit';
import { HOOK_READY_MARKER } from '@agentmail/host-tools';
import { hostRunEnv, hostRunsDir, type SetupCheckResult, stderrSummary } from '@agentmail/host-tools/driver';
import { formatText, type Locale, resolveLocale } from '@agentmail/shared-policy';
import { runClaude } from './claude-run.js';
import type { ClaudeBridgeConfig } from './config.js';
import { HOST_NAME, MAIL_TOOL_PREFIX, MCP_SERVER_NAME, PLATFORM, PLUGIN_NAME } from './constants.js';
import type { ClaudeEvent } from './events.js';
import { GUARDED_TOOLS } from './host.js';
import type { InitLine, StreamLine } from './stream-json.js';
import { findTranscript, readSessionModel, readTranscriptHead } from './transcripts.js';

/** How long a run waits at its start for the plugin's mail-tool server to connect (ms). */
export const MCP_CONNECT_WAIT_MS = 30_000;

/**
 * Variables every run gets: `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` stops the vendor DNS
 * lookups and `HEAD /api/hello` (the separate telemetry switches do not); `ENABLE_TOOL_SEARCH`
 * off sends the MCP tools' schemas up front instead of hiding them behind a search tool.
 *
 * `MCP_CONNECTION_NONBLOCKING=false` with `MCP_CONNECT_TIMEOUT_MS`: by default `claude -p`
 * does not wait for a plugin's MCP server — one that needs more than about a second to start
 * (a cold machine under load: ~9 s seen) is `pending` at `init`, and the run's tool set never
 * gains it, so the setup check (P-8) failed the mail. Blocking, the run waits for the server up to
 * {@link MCP_CONNECT_WAIT_MS}; a fast start costs nothing (measured: init at ~1.0–1.3 s either way).
 */
export const RUN_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  ENABLE_TOOL_SEARCH: 'false',
  MCP_CONNECTION_NONBLOCKING: 'false',
  MCP_CONNECT_TIMEOUT_MS: String(MCP_CONNECT_WAIT_MS),
};

/**
 * The environment of one run (SPEC B-21): the daemon's own, without any `AGENTMAIL_*` variable
 * (the agent key above all: Claude Code's Bash, hooks and MCP servers all see this environment),
 * plus the turn's RPC variables, the plugin's Node.js, the locale and the permission wait.
 */
export function runEnv(
  config: Pick<ClaudeBridgeConfig, 'nodeBin' | 'locale' | 'turnTimeoutMs'>,
  rpcEnv: TurnRpcEnv | undefined,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return hostRunEnv(base, {
    rpcEnv,
    locale: config.locale,
    permissionWaitMs: config.turnTimeoutMs,
    extra: { ...RUN_ENV, AGENTMAIL_NODE: config.nodeBin },
  });
}

/** What one run is told. */
export interface RunArgsInput {
  prompt: string;
  pluginDir: string;
  model?: string;
  resume?: string;
  /** Do not write a transcript (the self-check). */
  ephemeral?: boolean;
}

/**
 * The arguments of one run. Never `--bare` (it disables every hook). `--permission-mode default`
 * whatever the person's settings say: the plugin's PreToolUse hook decides the guarded tools, and
 * Claude Code's own rules deny the rest in `-p`. The MCP tools are allowed by their server prefix
 * (denied by default in `-p`, even read-only ones). The prompt comes after `--` (it may start with `-`).
 */
export function runArgs(input: RunArgsInput): string[] {
  return [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--include-hook-events',
    '--plugin-dir',
    input.pluginDir,
    '--allowedTools',
    MAIL_TOOL_PREFIX.replace(/__$/, ''),
    '--permission-mode',
    'default',
    ...(input.model ? ['--model', input.model] : []),
    ...(input.resume ? ['--resume', input.resume] : []),
    ...(input.ephemeral ? ['--no-session-persistence'] : []),
    '--',
    input.prompt,
  ];
}

function samePath(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

/**
 * The setup check of a run at its `init` line (SPEC P-8, fail closed): the plugin is the one the
 * bridge gave, its SessionStart hook ran before `init` and reached the bridge (it writes
 * {@link HOOK_READY_MARKER}), and its mail-tool server is connected. Returns the reason a check
 * failed, in the texts of `locale`, or undefined.
 */
export function checkRunSetup(
  init: InitLine,
  hooksBefore: readonly StreamLine[],
  pluginDir: string,
  locale: Locale,
): string | undefined {
  const plugin = init.plugins.find((p) => p.name === PLUGIN_NAME && samePath(p.path, pluginDir));
  const ready = hooksBefore.some(
    (h) =>
      h.kind === 'hook_response' &&
      h.line.hook_event === 'SessionStart' &&
      h.line.stderr.includes(HOOK_READY_MARKER),
  );
  if (!plugin || !ready) {
    const detail = !plugin
      ? `plugin "${PLUGIN_NAME}" from ${pluginDir} is not loaded`
      : 'its SessionStart hook did not reach the bridge';
    return formatText('host.setup.hooks_missing', { host: HOST_NAME, detail }, locale);
  }
  const mcp = init.mcp_servers.find((s) => s.name === MCP_SERVER_NAME);
  if (mcp?.status !== 'connected')
    return formatText(
      'host.setup.tools_missing',
      { host: HOST_NAME, detail: `MCP server ${MCP_SERVER_NAME}: ${mcp?.status ?? 'not listed'}` },
      locale,
    );
  return undefined;
}

function causeOf(result: {
  result: string;
  terminal_reason?: string | undefined;
  api_error_status?: unknown;
}): string {
  const parts = [result.result.trim() || 'Claude Code reported an error'];
  if (result.terminal_reason) parts.push(`terminal reason: ${result.terminal_reason}`);
  if (result.api_error_status !== undefined && result.api_error_status !== null)
    parts.push(`API status ${String(result.api_error_status)}`);
  return parts.join('; ');
}

/**
 * The setup as last checked (SPEC P-8): a failed check is run again before a turn, which fails
 * with the check's reason (and no `claude` run at all) while it still fails.
 */
export type SetupCheck = () => Promise<SetupCheckResult>;

/**
 * The Claude Code turn adapter over `config`; host events go to `emit`; `setup` is consulted
 * before every attempt (fail closed before the model is ever asked).
 */
export function claudeTurns(
  config: ClaudeBridgeConfig,
  emit: EmitEvent<ClaudeEvent>,
  setup: SetupCheck,
): TurnAdapter {
  const locale: Locale = resolveLocale(config.locale);
  return {
    platform: PLATFORM,
    guardedTools: GUARDED_TOOLS,
    async findSession(ref) {
      const file =
        ref.locator &&
        (await readTranscriptHead(ref.locator).catch(() => undefined))?.sessionId === ref.platformSessionId
          ? ref.locator
          : await findTranscript(config.claudeHome, ref.platformSessionId);
      if (file === undefined) return undefined;
      const head = await readTranscriptHead(file);
      return head?.cwd === undefined ? {} : { cwd: head.cwd };
    },
    catalogue: async () => config.models.map((m) => `${config.modelProvider}/${m}`),
    async runAttempt(attempt, ctx) {
      const mailId = ctx.mail.mail_id;
      const ready = await setup();
      if (!ready.ok) return { ok: false, cause: ready.reason, setupProblem: true };
      const resume = attempt.kind === 'resume' ? attempt.session?.platformSessionId : undefined;
      // B-8: a resumed session keeps its model; Claude Code would otherwise take its default.
      const model =
        attempt.model?.model ??
        (resume
          ? await findTranscript(config.claudeHome, resume).then((f) => (f ? readSessionModel(f) : undefined))
          : undefined);
      const started = Date.now();
      let bound: Promise<void> | undefined;
      const report = await runClaude({
        bin: config.claudeBin,
        args: runArgs({
          prompt: ctx.prompt,
          pluginDir: config.pluginDir,
          ...(model ? { model } : {}),
          ...(resume ? { resume } : {}),
        }),
        cwd: ctx.cwd,
        env: runEnv(config, ctx.turn.rpcEnv),
        signal: ctx.signal,
        runDir: hostRunsDir(config.dataDir),
        onSpawn: (pid) =>
          emit({
            type: 'claude_spawned',
            mail_id: mailId,
            pid,
            resume: resume !== undefined,
            ...(model ? { model } : {}),
          }),
        checkSetup: (init, hooks) => {
          const problem = checkRunSetup(init, hooks, config.pluginDir, locale);
          if (problem !== undefined) return problem;
          // B-4: bind a new session as soon as it exists (a redelivery then resumes it).
          if (resume === undefined)
            bound = ctx.sessionCreated({ platformSessionId: init.session_id, name: ctx.mail.subject });
          emit({
            type: 'claude_ready',
            mail_id: mailId,
            session_id: init.session_id,
            model: init.model ?? '',
          });
          return undefined;
        },
        onLine: (line) => {
          if (line.kind === 'hook_response' && line.line.hook_event !== 'SessionStart')
            emit({
              type: 'claude_hook',
              mail_id: mailId,
              hook: line.line.hook_name,
              exit_code: line.line.exit_code ?? -1,
              outcome: line.line.outcome,
            });
        },
      });
      // The binding is stored before the kit goes on with the outcome (a throw fails the attempt).
      await bound;
      const r = report.result;
      emit({
        type: 'claude_exited',
        mail_id: mailId,
        pid: report.pid,
        code: report.code,
        signal: report.signal,
        result: r === undefined ? 'missing' : r.is_error ? 'error' : 'success',
        ...(r?.terminal_reason ? { terminal_reason: r.terminal_reason } : {}),
        ...(report.stopped ? { stopped: report.stopped } : {}),
        duration_ms: Date.now() - started,
      });
      const sessionId = r?.session_id || report.init?.session_id || resume;
      const common = {
        ...(sessionId ? { platformSessionId: sessionId } : {}),
        ...(attempt.model === undefined && report.init?.model
          ? { model: `${config.modelProvider}/${report.init.model}` }
          : {}),
      };
      if (report.setupProblem !== undefined)
        return { ok: false, cause: report.setupProblem, setupProblem: true, ...common };
      if (r === undefined) {
        const detail = [
          report.stopped === 'abort'
            ? 'stopped by the bridge'
            : `exit code ${report.code ?? 'none'}${report.signal ? `, signal ${report.signal}` : ''}`,
          stderrSummary(report.stderrTail),
        ]
          .filter(Boolean)
          .join('; ');
        return {
          ok: false,
          cause: formatText('host.no_result', { host: HOST_NAME, detail }, locale),
          ...common,
        };
      }
      if (r.is_error) return { ok: false, cause: causeOf(r), ...common };
      return {
        ok: true,
        finalParts: [{ type: 'text', text: r.result }],
        ...(report.lastAssistantUuid ? { lastEntryId: report.lastAssistantUuid } : {}),
        ...common,
      };
    },
    async disposeSession(ref) {
      // A failed attempt's own transcript (B-8): it must not come back as a person's session.
      const file = await findTranscript(config.claudeHome, ref.platformSessionId);
      if (file) await import('node:fs/promises').then((fs) => fs.rm(file, { force: true }));
    },
  };
}
