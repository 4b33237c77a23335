import type { KNOWN_PLATFORMS, PermissionMode } from '@agentmail/protocol';
import { formatText, type Locale } from './texts/index.js';

export type { PermissionMode } from '@agentmail/protocol';

/** A platform that has a bridge: `pi`, `opencode`, `dsh`, `zcode` or `claude-code`. */
export type Platform = (typeof KNOWN_PLATFORMS)[number];

/** The mode a session gets when none (or an unknown one) is given. @default 'workspace' (see SPEC P-1, P-2) */
export const DEFAULT_PERMISSION_MODE: PermissionMode = 'workspace';

const MODES: ReadonlySet<string> = new Set<PermissionMode>(['plan', 'workspace', 'full']);

/**
 * Normalise a permission mode from the wire or from configuration.
 *
 * Matching is exact: `'plan' | 'workspace' | 'full'` pass through; anything else (`'FULL'`,
 * `' full'`, `null`, a number …) becomes {@link DEFAULT_PERMISSION_MODE}, never `full` (see SPEC P-2).
 *
 * @example normalizePermissionMode('FULL') // 'workspace'
 */
export function normalizePermissionMode(value: unknown): PermissionMode {
  return typeof value === 'string' && MODES.has(value) ? (value as PermissionMode) : DEFAULT_PERMISSION_MODE;
}

/**
 * Guarded tools of each platform, by the names the platform gives them: shell, file write, file
 * edit, patch apply (see SPEC P-3). Sources: research notes pi.md (`bash, write, edit`),
 * opencode.md (serve mode offers `bash, edit, write`; `patch`/`apply_patch`/`multiedit` are the
 * editing tools some model families get), dsh 0.1.0-rc.8 packages `dsh-tool-bash`,
 * `dsh-tool-pwsh`, `dsh-tool-fs` (`write`, `edit`) and `dsh-tool-str-replace-editor`.
 * ZCode is a closed client with Claude-Code-style tool names (`Bash`, `Write`, `Edit`,
 * `MultiEdit`, `NotebookEdit`); these are not verified against a real ZCode build yet. Claude Code
 * 2.1.328 offers `Bash`, `Write`, `Edit`, `NotebookEdit` in `-p` (its init event's tool list);
 * `MultiEdit` is kept for older versions that still have it.
 */
export const GUARDED_TOOLS: Readonly<Record<Platform, readonly string[]>> = Object.freeze({
  pi: Object.freeze(['bash', 'write', 'edit']),
  opencode: Object.freeze(['bash', 'write', 'edit', 'patch', 'apply_patch', 'multiedit']),
  dsh: Object.freeze(['bash', 'pwsh', 'write', 'edit', 'str_replace_editor']),
  zcode: Object.freeze(['Bash', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit']),
  'claude-code': Object.freeze(['Bash', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit']),
});

const GUARDED_LOWER: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries(GUARDED_TOOLS).map(([p, names]) => [p, new Set(names.map((n) => n.toLowerCase()))]),
);

/**
 * True when `toolName` is a guarded tool on `platform` (see SPEC P-3).
 *
 * The comparison ignores case: a host that reports `Bash` where the table says `bash` must still
 * be guarded (guarding too much fails closed; guarding too little would let a shell run unasked).
 * An unknown platform (a caller outside TypeScript) guards every tool.
 */
export function isGuardedTool(platform: Platform, toolName: string): boolean {
  const names = GUARDED_LOWER[platform];
  if (names === undefined) return true;
  return names.has(toolName.toLowerCase());
}

/** Input of {@link decideToolCall}. */
export interface ToolCallContext {
  /** The session's permission mode as received; normalised with {@link normalizePermissionMode}. */
  mode: string | null | undefined;
  platform: Platform;
  /** The tool name as the platform reports it. */
  toolName: string;
  /** The bridge verified that a sandbox confines this tool. @default false */
  sandboxVerified?: boolean;
  /** An "always" grant exists for (session, tool) (see {@link GrantStore}). @default false */
  alwaysGranted?: boolean;
  /**
   * Treat the tool as guarded whatever its name: the platform itself asked about this call (its
   * own permission config says "ask"), so letting it pass unasked would fail open. @default false
   */
  forceGuarded?: boolean;
  /** Locale of the `reason` text. @default 'en' */
  locale?: Locale;
}

/** What to do with a tool call: run it, refuse it (with a reason for the model), or ask a person. */
export interface ToolCallDecision {
  decision: 'allow' | 'deny' | 'ask';
  /** For `deny`: the text the model sees as the tool result. */
  reason?: string;
}

/**
 * Decide a tool call by permission mode (see SPEC P-1, P-3):
 * - unguarded tools → `allow` in every mode (unless `forceGuarded`);
 * - `plan` → guarded tools `deny`, with a reason telling the model to put its plan in the reply;
 * - `workspace` (also any unknown mode, P-2) → `ask`, unless `sandboxVerified` or `alwaysGranted`;
 * - `full` → `allow`.
 *
 * @example decideToolCall({ mode: 'plan', platform: 'pi', toolName: 'bash' }) // { decision: 'deny', reason: '…' }
 */
export function decideToolCall(ctx: ToolCallContext): ToolCallDecision {
  if (ctx.forceGuarded !== true && !isGuardedTool(ctx.platform, ctx.toolName)) return { decision: 'allow' };
  const mode = normalizePermissionMode(ctx.mode);
  switch (mode) {
    case 'full':
      return { decision: 'allow' };
    case 'plan':
      return {
        decision: 'deny',
        reason: formatText('permission.plan.denied', { tool: ctx.toolName }, ctx.locale),
      };
    case 'workspace':
      return ctx.sandboxVerified === true || ctx.alwaysGranted === true
        ? { decision: 'allow' }
        : { decision: 'ask' };
  }
}
