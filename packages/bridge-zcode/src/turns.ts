/**
 * The ZCode `TurnAdapter`: one headless `zcode --prompt` run per attempt (docs/BRIDGE-CONTRACT.md),
 * its outcome from ZCode's own `turn.completed` / `turn.failed` events, the closing `result` line
 * and the exit code (B-7), its session from ZCode's session database (B-4).
 */
import { dirname } from 'node:path';
import type { AttemptOutcome, EmitEvent, TurnAdapter, TurnRpcEnv } from '@agentmail/bridge-kit';
import {
  hostRunEnv,
  hostRunsDir,
  runHostCli,
  type SetupCheckResult,
  stderrSummary,
} from '@agentmail/host-tools/driver';
import { formatText, type Locale, normalizePermissionMode, resolveLocale } from '@agentmail/shared-policy';
import type { WorkspaceMode, ZcodeBridgeConfig } from './config.js';
import { HOST_NAME, PLATFORM } from './constants.js';
import type { ZcodeEvent } from './events.js';
import { GUARDED_TOOLS } from './host.js';
import { isZcodeSessionId, parseStreamLine } from './stream-json.js';
import { findZcodeSession, readSessionModel, readZcodeModels } from './zcode-home.js';

/** A ZCode `--mode` the driver passes. */
export type ZcodeMode = 'build' | 'plan' | 'yolo';

/**
 * ZCode's mode for a mail's permission mode (SPEC P-1, P-2): `full` → `yolo` (nothing asks),
 * `plan` → `plan` (ZCode refuses side-effecting built-ins, allows non-destructive MCP tools),
 * `workspace` — and anything unknown, `FULL` included — → `build` with the plugin's PreToolUse gate,
 * or `plan` when the fallback is configured (`mappedDown`). Only `full` can give `yolo`.
 */
export function zcodeModeFor(
  mode: unknown,
  workspaceMode: WorkspaceMode,
): { zcodeMode: ZcodeMode; mappedDown: boolean } {
  const m = normalizePermissionMode(mode);
  if (m === 'full') return { zcodeMode: 'yolo', mappedDown: false };
  if (m === 'plan') return { zcodeMode: 'plan', mappedDown: false };
  return { zcodeMode: workspaceMode, mappedDown: workspaceMode === 'plan' };
}

/** What one run is told. */
export interface RunArgsInput {
  prompt: string;
  cwd: string;
  mode: ZcodeMode;
  resume?: string;
}

/**
 * The arguments of one run: only flags ZCode's strict parser has (an unknown one exits 1: no
 * `--model`, `--max-turns`, `--settings`). `--mode` is always passed — with `--prompt` ZCode
 * defaults to `yolo`, which bypasses every permission check. The prompt is `--prompt=<text>`: a
 * prompt starting with `-` is then not mistaken for an option.
 */
export function runArgs(input: RunArgsInput): string[] {
  return [
    `--prompt=${input.prompt}`,
    '--output-format',
    'stream-json',
    '--no-color',
    '--cwd',
    input.cwd,
    '--mode',
    input.mode,
    ...(input.resume ? ['--resume', input.resume] : []),
  ];
}

/**
 * The environment of one run (SPEC B-21, host-tools `hostRunEnv`): no `AGENTMAIL_*` of the daemon
 * (the agent key stays in the bridge), the turn's RPC variables, the plugin's Node.js first on
 * PATH (the plugin runs `node`), and the model through `ZCODE_MODEL` (ZCode has no `--model`; B-8).
 */
export function runEnv(
  config: Pick<ZcodeBridgeConfig, 'nodeBin' | 'locale' | 'turnTimeoutMs'>,
  rpcEnv: TurnRpcEnv | undefined,
  model?: string,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return hostRunEnv(base, {
    rpcEnv,
    locale: config.locale,
    permissionWaitMs: config.turnTimeoutMs,
    extra: {
      PATH: `${dirname(config.nodeBin)}:${base.PATH ?? ''}`,
      ...(model ? { ZCODE_MODEL: model } : {}),
    },
  });
}

/** The setup as last checked (SPEC P-8): a failing check fails the turn before any run. */
export type SetupCheck = () => Promise<SetupCheckResult>;

/**
 * The ZCode turn adapter over `config`; host events go to `emit`; `setup` is consulted before
 * every attempt (fail closed before ZCode is ever run).
 */
export function zcodeTurns(
  config: ZcodeBridgeConfig,
  emit: EmitEvent<ZcodeEvent>,
  setup: SetupCheck,
): TurnAdapter {
  const locale: Locale = resolveLocale(config.locale);
  return {
    platform: PLATFORM,
    guardedTools: GUARDED_TOOLS,
    findSession: async (ref) => findZcodeSession(config.zcodeHome, ref.platformSessionId),
    catalogue: async () => readZcodeModels(config.zcodeHome).map((m) => m.key),
    async runAttempt(attempt, ctx): Promise<AttemptOutcome> {
      const mailId = ctx.mail.mail_id;
      const ready = await setup();
      if (!ready.ok) return { ok: false, cause: ready.reason, setupProblem: true };
      const { zcodeMode, mappedDown } = zcodeModeFor(ctx.mail.permission_mode, config.workspaceMode);
      if (mappedDown)
        emit({
          type: 'zcode_mode_mapped',
          mail_id: mailId,
          mode: 'workspace',
          zcode_mode: zcodeMode,
          reason:
            'AGENTMAIL_ZCODE_WORKSPACE_MODE=plan: the PreToolUse gate is not trusted, so guarded built-ins are refused instead of asked',
        });
      const resume = attempt.kind === 'resume' ? attempt.session?.platformSessionId : undefined;
      // B-8: a resumed session keeps its model; a new one gets the attempt's (or ZCode's default).
      const model = attempt.model?.key ?? (resume ? readSessionModel(config.zcodeHome, resume) : undefined);
      const started = Date.now();
      let sessionId: string | undefined;
      let bound: Promise<void> | undefined;
      let turnStarted = false;
      let completed: { response: string; resultType: string } | undefined;
      let failed: { message: string } | undefined;
      let result: { response: string; sessionId: string } | undefined;
      const report = await runHostCli({
        bin: config.zcodeBin,
        args: runArgs({ prompt: ctx.prompt, cwd: ctx.cwd, mode: zcodeMode, ...(resume ? { resume } : {}) }),
        cwd: ctx.cwd,
        env: runEnv(config, ctx.turn.rpcEnv, model),
        signal: ctx.signal,
        runDir: hostRunsDir(config.dataDir),
        onSpawn: (pid) =>
          emit({
            type: 'zcode_spawned',
            mail_id: mailId,
            pid,
            zcode_mode: zcodeMode,
            resume: resume !== undefined,
            ...(model ? { model } : {}),
          }),
        onLine: (text) => {
          const line = parseStreamLine(text);
          if (line === undefined) return;
          const sid = line.kind === 'result' ? line.line.sessionId : line.sessionId;
          if (sessionId === undefined && isZcodeSessionId(sid)) {
            sessionId = sid;
            emit({ type: 'zcode_session', mail_id: mailId, session_id: sid });
            // B-4: bind a new session as soon as it exists (a redelivery then resumes it).
            if (resume === undefined)
              bound = ctx.sessionCreated({ platformSessionId: sid, name: ctx.mail.subject });
          }
          switch (line.kind) {
            case 'step':
              if (line.type === 'turn.started') turnStarted = true;
              emit({
                type: 'zcode_stream',
                mail_id: mailId,
                stream_type: line.type,
                ...(line.stepKind ? { kind: line.stepKind } : {}),
                ...(line.tool ? { tool: line.tool } : {}),
                ...(line.detail ? { detail: line.detail } : {}),
              });
              break;
            case 'turn_completed':
              completed = { response: line.response, resultType: line.resultType };
              failed = undefined;
              emit({
                type: 'zcode_stream',
                mail_id: mailId,
                stream_type: 'turn.completed',
                kind: line.resultType,
              });
              break;
            case 'turn_failed':
              failed = { message: line.message };
              emit({
                type: 'zcode_stream',
                mail_id: mailId,
                stream_type: 'turn.failed',
                detail: line.message.slice(0, 300),
              });
              break;
            case 'result':
              result = { response: line.line.response, sessionId: line.line.sessionId };
              break;
          }
        },
      });
      // The binding is stored before the kit goes on with the outcome (a throw fails the attempt).
      await bound;
      const ok =
        report.code === 0 &&
        result !== undefined &&
        failed === undefined &&
        (completed?.resultType ?? 'success') === 'success';
      emit({
        type: 'zcode_exited',
        mail_id: mailId,
        pid: report.pid,
        code: report.code,
        signal: report.signal,
        result: result === undefined ? 'missing' : ok ? 'success' : 'error',
        ...(report.stopped ? { stopped: report.stopped } : {}),
        duration_ms: Date.now() - started,
      });
      const common = sessionId ? { platformSessionId: sessionId } : {};
      if (report.spawnError !== undefined)
        return {
          ok: false,
          cause: formatText(
            'host.not_found',
            { host: HOST_NAME, detail: stderrSummary(report.stderrTail), variable: 'AGENTMAIL_ZCODE_BIN' },
            locale,
          ),
          setupProblem: true,
        };
      if (ok)
        return {
          ok: true,
          // No host entry id: the kit keys the relay by the mail (B-10, G-32).
          finalParts: [{ type: 'text', text: result?.response || completed?.response || '' }],
          ...common,
        };
      const detail = [
        failed?.message,
        completed && completed.resultType !== 'success' ? `result type ${completed.resultType}` : undefined,
        report.stopped === 'abort' ? 'stopped by the bridge' : undefined,
        stderrSummary(report.stderrTail) ||
          (result === undefined
            ? `exit code ${report.code ?? 'none'}${report.signal ? `, signal ${report.signal}` : ''}`
            : undefined),
      ]
        .filter((p): p is string => Boolean(p))
        .join('; ');
      return {
        ok: false,
        cause:
          result === undefined ? formatText('host.no_result', { host: HOST_NAME, detail }, locale) : detail,
        // ZCode failed before its turn began (model config missing, not logged in): the same for
        // every model, so no further model is tried and the mail names the set-up (B-9).
        ...(turnStarted || resume !== undefined || report.stopped ? {} : { setupProblem: true }),
        ...common,
      };
    },
  };
}
