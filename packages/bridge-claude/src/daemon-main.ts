#!/usr/bin/env node
/**
 * `agentmail-claude`: the Claude Code bridge daemon, configured by environment variables only
 * (see config.ts). Logs are pino JSON lines on stderr, one per event (field `event`). SIGTERM and
 * SIGINT stop it gracefully (B-15): running `claude` processes are stopped as groups and pending
 * permissions denied; exit code 0 then, 2 on a configuration error, 1 when it cannot start or
 * lost the bridge lock (a supervisor restarts it as a standby, G-22).
 */
import { homedir } from 'node:os';
import { pino } from 'pino';
import { readClaudeConfig } from './config.js';
import { createClaudeBridge, selfCheck } from './daemon.js';

const log = pino(
  { name: 'agentmail-claude', level: process.env.AGENTMAIL_LOG_LEVEL ?? 'info', base: { pid: process.pid } },
  pino.destination({ fd: 2, sync: true }),
);

let config: ReturnType<typeof readClaudeConfig>;
try {
  config = readClaudeConfig(process.env, process.env.HOME || homedir());
} catch (err) {
  log.fatal(
    { event: 'config_invalid', code: (err as { code?: string }).code, err: (err as Error).message },
    'bad configuration',
  );
  process.exit(2);
}

const stopping = new AbortController();
const started = Date.now();
const check = await selfCheck(config, stopping.signal);
const bridge = createClaudeBridge(config, { log, enforcement: check });
bridge.emit({
  type: 'self_check',
  ok: check.ok,
  ...(check.ok ? {} : { reason: check.reason }),
  duration_ms: Date.now() - started,
});

let exiting = false;
const stop = (signal: string): void => {
  if (exiting) return;
  exiting = true;
  stopping.abort();
  bridge.emit({ type: 'signal_received', signal });
  void bridge.stop().then(() => process.exit(0));
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
bridge.events.subscribe((e) => {
  if (e.type === 'lock_lost') process.exit(1);
});
bridge.start().catch((err: unknown) => {
  log.fatal({ event: 'start_failed_permanently', err: String(err) }, 'start failed');
  process.exit(1);
});
