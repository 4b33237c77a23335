/**
 * Plugin hooks as real processes, the way ZCode runs them (rayn1314/ZCode
 * `core/src/hooks/{configured-runner-callback,configured-runner-input,output}.ts`):
 * - `process` hooks run argv without a shell, `command` hooks through a shell; `${ZCODE_|CLAUDE_…}`
 *   variables are expanded in command and args; cwd = the session's; the environment is the
 *   process's with an overlay (`ZCODE_PROJECT_DIR`, `ZCODE_SESSION_ID`, `ZCODE_PLUGIN_{ROOT,DATA,ID,NAME}`,
 *   `CLAUDE_*` aliases);
 * - stdin: one JSON line, ZCode's camelCase fields plus the Claude-style aliases (`hook_event_name`,
 *   `session_id`, `permission_mode`, `transcript_path`, and for tool events `tool_name`,
 *   `tool_input`, `tool_use_id`);
 * - exit 0 with empty or non-`{` stdout: no decision; exit 0 with JSON: validated (unknown keys
 *   stripped; a wrong type or a wrong `hookEventName` is a hook failure = no decision); exit 2:
 *   block with stderr (else stdout) as the reason; any other exit: a failure, fail open;
 * - default timeout 60 s (`timeout` is seconds), output capped at 32 KiB;
 * - matcher: empty or `*` all, `^[A-Za-z0-9_|]+$` exact names, else an unanchored RegExp;
 * - several hooks: deny > ask > allow (`mergePermissionBehavior`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { HookEventName, LoadedPlugin, PluginHook } from './plugins.js';

/** Default hook timeout, in ms. @default 60_000 */
export const HOOK_TIMEOUT_MS = 60_000;
/** Hook output cap, in bytes. @default 32_768 */
export const HOOK_OUTPUT_MAX_BYTES = 32_768;

/** `matchesHookMatcher` of ZCode's `core/src/hooks/output.ts`. */
export function matchesHookMatcher(value: string | undefined, matcher: string | undefined): boolean {
  if (!matcher || matcher === '*') return true;
  if (!value) return false;
  if (/^[a-zA-Z0-9_|]+$/u.test(matcher)) return matcher.split('|').includes(value);
  try {
    return new RegExp(matcher).test(value);
  } catch {
    return false;
  }
}

const permissionDecision = z.enum(['allow', 'ask', 'deny']);
/** ZCode's `HookJSONOutputSchema`, as far as the stand-in reads it (zod strips unknown keys). */
const HookJsonOutput = z.object({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  reason: z.string().optional(),
  decision: z.enum(['approve', 'block']).optional(),
  systemMessage: z.string().optional(),
  additionalContext: z.string().optional(),
  hookSpecificOutput: z
    .discriminatedUnion('hookEventName', [
      z.object({
        hookEventName: z.literal('PreToolUse'),
        permissionDecision: permissionDecision.optional(),
        permissionDecisionReason: z.string().optional(),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
        additionalContext: z.string().optional(),
      }),
      z.object({
        hookEventName: z.literal('PermissionRequest'),
        decision: z
          .object({
            behavior: z.enum(['allow', 'deny']),
            message: z.string().optional(),
            updatedInput: z.record(z.string(), z.unknown()).optional(),
          })
          .optional(),
      }),
      ...(['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'Stop'] as const).map(
        (e) => z.object({ hookEventName: z.literal(e), additionalContext: z.string().optional() }),
      ),
    ])
    .optional(),
});
type HookJsonOutput = z.infer<typeof HookJsonOutput>;

/** The merged outcome of the hooks of one event. */
export interface HookRunResult {
  /** PreToolUse: the merged permission decision. */
  permissionBehavior?: 'allow' | 'ask' | 'deny';
  /** PreToolUse: why (the model reads it on deny). */
  reason?: string;
  updatedInput?: Record<string, unknown>;
  /** PermissionRequest: the first decision a hook gave. */
  permissionRequest?: {
    behavior: 'allow' | 'deny';
    message?: string;
    updatedInput?: Record<string, unknown>;
  };
  /** One line per hook that ran (the stand-in's diagnostics). */
  runs: Array<{
    hook: string;
    exitCode: number | null;
    outcome: 'decision' | 'none' | 'blocked' | 'failed';
    error?: string;
  }>;
}

/** The event a hook gets (ZCode's `HookInput`). */
export interface HookInput {
  hookEventName: HookEventName;
  sessionId: string;
  turnId?: string;
  traceId: string;
  cwd: string;
  mode: string;
  timestamp: number;
  source?: 'startup' | 'resume';
  toolName?: string;
  toolInput?: unknown;
  toolCallId?: string;
  riskLevel?: string;
  sideEffectScope?: string;
  reason?: string;
  requestId?: string;
}

function mergeBehavior(
  current: HookRunResult['permissionBehavior'],
  next: 'allow' | 'ask' | 'deny',
): 'allow' | 'ask' | 'deny' {
  if (current === 'deny' || next === 'deny') return 'deny';
  if (current === 'ask' || next === 'ask') return 'ask';
  return next;
}

/** The session and plugin variables of a hook: its string templates and its environment (Z2 configured-runner-input.ts). */
function hookVars(plugin: LoadedPlugin, input: HookInput): Record<string, string> {
  return {
    CLAUDE_CODE_SESSION_ID: input.sessionId,
    CLAUDE_PROJECT_DIR: input.cwd,
    CLAUDE_SESSION_ID: input.sessionId,
    ZCODE_PROJECT_DIR: input.cwd,
    ZCODE_SESSION_ID: input.sessionId,
    CLAUDE_PLUGIN_DATA: plugin.dataPath,
    CLAUDE_PLUGIN_ROOT: plugin.rootPath,
    ZCODE_PLUGIN_DATA: plugin.dataPath,
    ZCODE_PLUGIN_ROOT: plugin.rootPath,
  };
}

function expand(value: string, plugin: LoadedPlugin, input: HookInput): string {
  const vars = hookVars(plugin, input);
  return value.replace(/\$\{([A-Z_]+)\}/g, (m, k: string) => vars[k] ?? m);
}

interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  error?: string;
}

function runOne(
  hook: PluginHook,
  plugin: LoadedPlugin,
  input: HookInput,
  stdin: string,
  signal: AbortSignal | undefined,
): Promise<ProcessResult> {
  const timeoutMs = hook.timeoutMs ?? (hook.timeout !== undefined ? hook.timeout * 1000 : HOOK_TIMEOUT_MS);
  const env = {
    ...process.env,
    ...hookVars(plugin, input),
    ZCODE_PLUGIN_ID: plugin.id,
    ZCODE_PLUGIN_NAME: plugin.name,
  };

  return new Promise((resolve) => {
    // The loser of the permission race is aborted before it even started.
    if (signal?.aborted) {
      resolve({ code: null, stdout: '', stderr: '', timedOut: false, error: 'aborted' });
      return;
    }
    const command = expand(hook.command, plugin, input);
    const child =
      hook.type === 'process'
        ? spawn(
            command,
            (hook.args ?? []).map((a) => expand(a, plugin, input)),
            { cwd: input.cwd, env },
          )
        : spawn(hook.shell ?? '/bin/sh', ['-c', command], { cwd: input.cwd, env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const cap = (acc: string, d: Buffer): string =>
      acc.length >= HOOK_OUTPUT_MAX_BYTES ? acc : (acc + d.toString()).slice(0, HOOK_OUTPUT_MAX_BYTES);
    child.stdout.on('data', (d: Buffer) => {
      stdout = cap(stdout, d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr = cap(stderr, d);
    });
    const kill = (): void => {
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr, timedOut, error: String(err) });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

/** The hooks of `plugins` registered for `event` whose matcher matches `matchValue`. */
export function matchingHooks(
  plugins: readonly LoadedPlugin[],
  event: HookEventName,
  matchValue: string | undefined,
): Array<{ plugin: LoadedPlugin; hook: PluginHook }> {
  const out: Array<{ plugin: LoadedPlugin; hook: PluginHook }> = [];
  for (const plugin of plugins) {
    if (!plugin.enabled) continue;
    for (const hook of plugin.hooks)
      if (hook.event === event && hook.runnable && matchesHookMatcher(matchValue, hook.matcher))
        out.push({ plugin, hook });
  }
  return out;
}

/**
 * Run every matching hook of `input.hookEventName` (in parallel) and merge their answers.
 * `signal` aborts them (the losing side of the permission race). Never throws.
 */
export async function runHooks(
  plugins: readonly LoadedPlugin[],
  input: HookInput,
  signal?: AbortSignal,
): Promise<HookRunResult> {
  const matchValue = input.hookEventName === 'SessionStart' ? input.source : input.toolName;
  const hooks = matchingHooks(plugins, input.hookEventName, matchValue);
  const result: HookRunResult = { runs: [] };
  if (hooks.length === 0) return result;
  const dir = await mkdtemp(join(tmpdir(), 'zcode-hook-'));
  const transcript = join(dir, 'transcript.jsonl');
  await writeFile(transcript, '');
  const compatible: Record<string, unknown> = {
    ...input,
    hook_event_name: input.hookEventName,
    permission_mode: input.mode,
    session_id: input.sessionId,
    transcript_path: transcript,
    transcriptPath: transcript,
    ...(input.toolName !== undefined
      ? { tool_name: input.toolName, tool_input: input.toolInput, tool_use_id: input.toolCallId }
      : {}),
  };
  const stdin = `${JSON.stringify(compatible)}\n`;
  try {
    const outputs = await Promise.all(
      hooks.map(({ plugin, hook }) => runOne(hook, plugin, input, stdin, signal)),
    );
    outputs.forEach((out, i) => {
      const hook = hooks[i]?.hook;
      const label = `${hooks[i]?.plugin.id}:${hook?.event}`;
      if (signal?.aborted) {
        result.runs.push({ hook: label, exitCode: out.code, outcome: 'failed', error: 'aborted' });
        return;
      }
      if (out.code === 2) {
        const reason = out.stderr.trim() || out.stdout.trim() || 'Hook blocked execution';
        result.runs.push({ hook: label, exitCode: 2, outcome: 'blocked' });
        if (input.hookEventName === 'PreToolUse') {
          result.permissionBehavior = 'deny';
          result.reason = reason;
        } else if (input.hookEventName === 'PermissionRequest')
          result.permissionRequest ??= { behavior: 'deny', message: reason };
        return;
      }
      if (out.code !== 0 || out.timedOut) {
        result.runs.push({
          hook: label,
          exitCode: out.code,
          outcome: 'failed',
          error: out.error ?? (out.timedOut ? 'timed out' : out.stderr.trim().slice(0, 500)),
        });
        return;
      }
      const trimmed = out.stdout.trim();
      if (!trimmed.startsWith('{')) {
        result.runs.push({ hook: label, exitCode: 0, outcome: 'none' });
        return;
      }
      let parsed: HookJsonOutput;
      try {
        const v = HookJsonOutput.safeParse(JSON.parse(trimmed));
        if (!v.success)
          throw new Error(
            `Hook stdout failed HookJSONOutput schema validation: ${v.error.issues[0]?.message}`,
          );
        parsed = v.data;
        if (parsed.hookSpecificOutput && parsed.hookSpecificOutput.hookEventName !== input.hookEventName)
          throw new Error('Hook returned wrong event name');
      } catch (err) {
        result.runs.push({ hook: label, exitCode: 0, outcome: 'failed', error: (err as Error).message });
        return;
      }
      apply(result, input.hookEventName, parsed);
      result.runs.push({ hook: label, exitCode: 0, outcome: 'decision' });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

function apply(result: HookRunResult, event: HookEventName, output: HookJsonOutput): void {
  const permissionEvent = event === 'PreToolUse' || event === 'PermissionRequest';
  if (output.continue === false && permissionEvent) {
    if (event === 'PreToolUse') {
      result.permissionBehavior = 'deny';
      const reason = output.stopReason ?? output.reason;
      if (reason !== undefined) result.reason = reason;
    } else
      result.permissionRequest ??= { behavior: 'deny', message: output.stopReason ?? output.reason ?? '' };
  }
  if (output.decision === 'approve' && permissionEvent) {
    if (event === 'PreToolUse') result.permissionBehavior = mergeBehavior(result.permissionBehavior, 'allow');
    else result.permissionRequest ??= { behavior: 'allow' };
  }
  if (output.decision === 'block' && permissionEvent) {
    if (event === 'PreToolUse') {
      result.permissionBehavior = 'deny';
      const reason = output.reason ?? output.stopReason;
      if (reason !== undefined) result.reason = reason;
    } else result.permissionRequest ??= { behavior: 'deny', message: output.reason ?? '' };
  }
  const specific = output.hookSpecificOutput;
  if (specific?.hookEventName === 'PreToolUse') {
    if (specific.permissionDecision) {
      result.permissionBehavior = mergeBehavior(result.permissionBehavior, specific.permissionDecision);
      if (specific.permissionDecisionReason) result.reason = specific.permissionDecisionReason;
    }
    if (specific.updatedInput) result.updatedInput = specific.updatedInput;
  }
  if (specific?.hookEventName === 'PermissionRequest' && specific.decision)
    result.permissionRequest ??= {
      behavior: specific.decision.behavior,
      ...(specific.decision.message !== undefined ? { message: specific.decision.message } : {}),
      ...(specific.decision.updatedInput ? { updatedInput: specific.decision.updatedInput } : {}),
    };
}
