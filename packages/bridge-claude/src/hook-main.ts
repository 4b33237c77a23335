#!/usr/bin/env node
/**
 * The plugin's `hook.js` (`node hook.js <host id>` from the plugin's hooks config): one hook event,
 * decided by the host-tools runner with this host's profile (see hook-profile.ts).
 */
import { runHookMain } from '@agentmail/host-tools/hook';
import { CLAUDE_CODE_HOST } from './hook-profile.js';

await runHookMain(CLAUDE_CODE_HOST);
