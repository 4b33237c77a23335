/**
 * Claude Code's hook contract for the host-tools hook runner (the profile this bridge's `hook.js`
 * runs with, `node hook.js claude-code`). Bundled into the hook process: imports the light hook
 * helpers and this bridge's descriptor only.
 */
import { type HostProfile, readClaudeStyleEvent, writeClaudeStyleAnswer } from '@agentmail/host-tools/hook';
import { HOST_NAME, PLATFORM } from './constants.js';
import { GUARDED_TOOLS } from './host.js';

/** Claude Code (`@anthropic-ai/claude-code`, checked on 2.1.328). */
export const CLAUDE_CODE_HOST: HostProfile = {
  id: PLATFORM,
  platform: PLATFORM,
  guardedTools: GUARDED_TOOLS,
  displayName: HOST_NAME,
  readEvent: readClaudeStyleEvent,
  write: writeClaudeStyleAnswer,
  mailDrivenPermissionRequest: 'decide',
  standalone: 'yield',
};
