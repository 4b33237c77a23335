/**
 * ZCode's hook contract for the host-tools hook runner (the profile this bridge's `hook.js` runs
 * with): how ZCode hands a hook its event and where its permission system differs from Claude
 * Code's. Bundled into the hook process: imports types, the light hook helpers and this bridge's
 * descriptor only.
 */
import {
  type HookEvent,
  type HostProfile,
  readHookStdin,
  writeClaudeStyleAnswer,
} from '@agentmail/host-tools/hook';
import { HOOK_HOST_ID, HOST_NAME, PLATFORM } from './constants.js';
import { GUARDED_TOOLS } from './host.js';

/**
 * ZCode's hook stdin (read in v3.15.1 source, `core/src/hooks/configured-runner-input.ts`
 * `createCompatibleHookStdin`): its own camelCase fields are the main contract — `hookEventName,
 * sessionId, turnId?, cwd, mode` and, for tool events (PermissionRequest included),
 * `toolName, toolInput, toolCallId` — with Claude-style aliases added beside them.
 */
export function readZcodeEvent(value: unknown): HookEvent {
  return readHookStdin(value, {
    event: 'hookEventName',
    sessionId: 'sessionId',
    toolName: 'toolName',
    input: 'toolInput',
    toolCallId: 'toolCallId',
    promptId: 'turnId',
    hostMode: 'mode',
    callIdOn: ['PreToolUse', 'PermissionRequest'],
  });
}

// ZCode's read-only built-ins (v3.15.1 `core/src/permission/service.ts` isReadOnlyTool): `plan`
// allows these and non-destructive MCP tools, and refuses everything else.
const ZCODE_READ_ONLY = new Set([
  'Read',
  'Glob',
  'Grep',
  'WebSearch',
  'WebFetch',
  'TodoRead',
  'TodoWrite',
  'AskUserQuestion',
  'Agent',
  'Task',
  'Skill',
]);

/**
 * ZCode (z.ai; contract read in its v3.15.1 source, see research/zcode.md). It reads the same
 * `hookSpecificOutput` shapes as Claude Code (`core/src/hooks/output.ts`); what differs: in
 * `plan` it refuses side-effecting built-ins itself (a PreToolUse `allow` lifts only an ask), its
 * headless PermissionRequest hook races an immediate deny (`permission-responder-race.ts`), and
 * in a person's own ZCode the hook asks by mail with the person's key.
 */
export const ZCODE_HOST: HostProfile = {
  id: HOOK_HOST_ID,
  platform: PLATFORM,
  guardedTools: GUARDED_TOOLS,
  displayName: HOST_NAME,
  readEvent: readZcodeEvent,
  write: writeClaudeStyleAnswer,
  hostRefuses: (event) =>
    event.event === 'PreToolUse' &&
    event.hostMode === 'plan' &&
    !event.toolName.startsWith('mcp__') &&
    !ZCODE_READ_ONLY.has(event.toolName),
  mailDrivenPermissionRequest: 'none',
  standalone: 'own-stream',
};
