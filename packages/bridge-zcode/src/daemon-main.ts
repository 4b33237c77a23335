#!/usr/bin/env node
/**
 * `agentmail-zcode`: the ZCode bridge daemon, configured by environment variables only (see
 * config.ts). Logs are pino JSON lines on stderr, one per event (field `event`). SIGTERM and SIGINT
 * stop it gracefully (B-15): running `zcode` processes are stopped as groups and pending
 * permissions denied; exit code 0 then, 2 on a configuration error or a key the Gateway refuses, 1 when it cannot start or lost
 * the bridge lock. The main is host-tools' `runDriverMain`.
 */
import { runDriverMain } from '@agentmail/host-tools/driver';
import { readZcodeConfig } from './config.js';
import { createZcodeBridge, selfCheck } from './daemon.js';

await runDriverMain({
  name: 'agentmail-zcode',
  readConfig: readZcodeConfig,
  selfCheck,
  createBridge: createZcodeBridge,
});
