#!/usr/bin/env node
/**
 * `agentmail-claude`: the Claude Code bridge daemon, configured by environment variables only
 * (see config.ts). Logs are pino JSON lines on stderr, one per event (field `event`). SIGTERM and
 * SIGINT stop it gracefully (B-15): running `claude` processes are stopped as groups and pending
 * permissions denied; exit code 0 then, 2 on a configuration error or a key the Gateway refuses, 1 when it cannot start or
 * lost the bridge lock (a supervisor restarts it as a standby, G-22). The main is host-tools'
 * `runDriverMain`.
 */
import { runDriverMain } from '@agentmail/host-tools/driver';
import { readClaudeConfig } from './config.js';
import { createClaudeBridge, selfCheck } from './daemon.js';

await runDriverMain({
  name: 'agentmail-claude',
  readConfig: readClaudeConfig,
  selfCheck,
  createBridge: createClaudeBridge,
});
