#!/usr/bin/env node
/**
 * The plugin's `hook.js` (`node hook.js <host id>` from the plugin's hooks config): one hook event,
 * decided by the host-tools runner with this host's profile (see hook-profile.ts).
 */
import { runHookMain } from '@agentmail/host-tools/hook';
import { ZCODE_HOST } from './hook-profile.js';

await runHookMain(ZCODE_HOST);
