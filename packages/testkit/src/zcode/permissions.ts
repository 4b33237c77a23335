/**
 * ZCode's permission rules for the stand-in's tools, in the order of v3.15.1
 * `core/src/permission/service.ts` (jimpablo/ZCode @aac47556) `checkPermission`:
 * user-interaction tools ask → `yolo`/`guarded` allow → `disallowedTools` deny → `plan`
 * (read-only non-destructive tools and non-destructive MCP tools allowed, everything else denied
 * "Plan mode only allows read-only, non-destructive tools") → `edit` (file edits allowed) →
 * `build` (read-only allowed; high risk and side effects ask). MCP tools: `readOnly =
 * readOnlyHint === true`, `destructive = destructiveHint === true`, `needsApproval` always
 * (yeyuan98/ZCode `core/src/mcp/index.ts`), so `build` asks for every MCP call.
 * Then a PreToolUse hook's answer is applied (`applyPreToolPermissionDecision`, research §4): its
 * `allow` lifts an ask, its `ask` overrides an allow; a mode's deny stays a deny.
 * `guarded` is treated as `yolo` (its per-command danger rules are not emulated).
 */

/** A collaboration mode of `--mode`. */
export type CollaborationMode = 'build' | 'edit' | 'plan' | 'yolo' | 'guarded';

/** What the rules need to know of a tool. */
export interface ToolCapability {
  readOnly: boolean;
  destructive: boolean;
  needsApproval: boolean;
  sideEffectScope: 'none' | 'workspace' | 'network' | 'userInteraction';
  riskLevel: 'low' | 'medium' | 'high';
  /** `edit` for the file-edit tools, `mcp` for MCP tools. */
  permission?: 'edit' | 'mcp';
}

/** The outcome of the rules. */
export interface PermissionDecision {
  decision: 'allow' | 'ask' | 'deny';
  reason: string;
  ruleId: string;
}

/** The rules for one call. */
export function checkPermission(
  toolName: string,
  capability: ToolCapability,
  mode: CollaborationMode,
  disallowed: ReadonlySet<string>,
): PermissionDecision {
  if (capability.sideEffectScope === 'userInteraction')
    return disallowed.has(toolName)
      ? {
          decision: 'deny',
          reason: `Tool ${toolName} is explicitly disallowed`,
          ruleId: 'rule.disallowedTools',
        }
      : {
          decision: 'ask',
          reason: `Tool ${toolName} requires user interaction`,
          ruleId: 'tool.userInteraction',
        };
  if (mode === 'yolo' || mode === 'guarded')
    return { decision: 'allow', reason: 'Yolo mode bypasses permission prompts', ruleId: 'mode.yolo' };
  if (disallowed.has(toolName))
    return {
      decision: 'deny',
      reason: `Tool ${toolName} is explicitly disallowed`,
      ruleId: 'rule.disallowedTools',
    };
  if (mode === 'plan') {
    if (capability.readOnly && !capability.destructive)
      return {
        decision: 'allow',
        reason: 'Plan mode allows read-only tool execution',
        ruleId: 'mode.plan.readOnly',
      };
    if (capability.permission === 'mcp' && !capability.destructive)
      return {
        decision: 'allow',
        reason: 'Plan mode allows non-destructive MCP tool execution',
        ruleId: 'mode.plan.mcp',
      };
    return {
      decision: 'deny',
      reason: 'Plan mode only allows read-only, non-destructive tools',
      ruleId: 'mode.plan.nonReadOnly',
    };
  }
  if (mode === 'edit' && capability.permission === 'edit' && capability.sideEffectScope === 'workspace')
    return { decision: 'allow', reason: 'Edit mode allows file edit tools', ruleId: 'mode.edit.fileEdit' };
  if (capability.readOnly && !capability.destructive && !capability.needsApproval)
    return { decision: 'allow', reason: 'Build mode allows read-only tools', ruleId: 'mode.build.readOnly' };
  if (capability.riskLevel === 'high')
    return {
      decision: 'ask',
      reason: 'High risk tools require explicit approval',
      ruleId: 'mode.build.highRisk',
    };
  if (capability.needsApproval || capability.destructive || capability.sideEffectScope !== 'none')
    return {
      decision: 'ask',
      reason: 'Tool has side effects and requires approval',
      ruleId: 'mode.build.sideEffect',
    };
  return {
    decision: 'allow',
    reason: 'Build mode allows low-risk tool execution',
    ruleId: 'mode.build.lowRisk',
  };
}

/** A PreToolUse hook's answer laid over the rules' decision. */
export function applyPreToolDecision(
  decision: PermissionDecision,
  hook: 'allow' | 'ask' | 'deny' | undefined,
  reason: string | undefined,
): PermissionDecision {
  if (hook === 'allow' && decision.decision === 'ask')
    return {
      decision: 'allow',
      reason: reason ?? 'Allowed by PreToolUse hook',
      ruleId: 'hook.PreToolUse.allow',
    };
  if (hook === 'ask' && decision.decision === 'allow')
    return {
      decision: 'ask',
      reason: reason ?? 'PreToolUse hook asked for approval',
      ruleId: 'hook.PreToolUse.ask',
    };
  return decision;
}
