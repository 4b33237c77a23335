import type { PermissionMode } from '@agentmail/protocol';
import { formatText, type Locale } from './texts/index.js';

export type { PermissionMode } from '@agentmail/protocol';

/** A platform id as a bridge registers it (`pi`, `claude-code`, …: its host descriptor's `platform`). */
export type Platform = string;

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
 * True when `toolName` is one of the host's `guardedTools` (see SPEC P-3): the names its host
 * descriptor lists (`host.json` of the bridge package, `HostDescriptor.guardedTools`).
 *
 * The comparison ignores case: a host that reports `Bash` where the descriptor says `bash` must
 * still be guarded (guarding too much fails closed; guarding too little would let a shell run
 * unasked). No list (a caller that does not know its host's names) guards every tool.
 */
export function isGuardedTool(guardedTools: readonly string[] | undefined, toolName: string): boolean {
  // No list, an empty one or one with a non-name in it (a host.json read without its schema): a
  // broken descriptor guards everything rather than nothing (fail closed).
  if (
    guardedTools === undefined ||
    guardedTools.length === 0 ||
    !guardedTools.every((g) => typeof g === 'string' && g !== '')
  )
    return true;
  const name = toolName.toLowerCase();
  return guardedTools.some((g) => g.toLowerCase() === name);
}

/** Input of {@link decideToolCall}. */
export interface ToolCallContext {
  /** The session's permission mode as received; normalised with {@link normalizePermissionMode}. */
  mode: string | null | undefined;
  /** The host's guarded tool names (its descriptor's `guardedTools`); undefined guards every tool (P-3). */
  guardedTools: readonly string[] | undefined;
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
 * @example decideToolCall({ mode: 'plan', guardedTools: ['bash'], toolName: 'bash' }) // { decision: 'deny', reason: '…' }
 */
export function decideToolCall(ctx: ToolCallContext): ToolCallDecision {
  if (ctx.forceGuarded !== true && !isGuardedTool(ctx.guardedTools, ctx.toolName))
    return { decision: 'allow' };
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
