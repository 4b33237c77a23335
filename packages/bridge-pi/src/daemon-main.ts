#!/usr/bin/env node
/**
 * `agentmail-pi`: the pi bridge daemon, configured by environment variables only (see
 * {@link readConfig}). SIGTERM/SIGINT stop it gracefully (B-15); exit code 0 then, 2 on a
 * configuration error, 1 when it cannot start or lost the bridge lock. A second daemon for the
 * same agent and data directory waits as a standby (one log line) and takes over when the first
 * stops or dies (SPEC G-22, shared-policy BridgeLock). With `AGENTMAIL_LOOP_STATS=1`, SIGUSR2 logs the
 * event-loop delay since the previous report (see loop-stats.ts).
 */
import { fileURLToPath } from 'node:url';
import { readConfig } from './config.js';
import { PiBridgeDaemon } from './daemon.js';
import { createLogger } from './log.js';
import { LoopDelayMonitor, loopStatsEnabled } from './loop-stats.js';

const log = createLogger('agentmail-pi');
let daemon: PiBridgeDaemon;
try {
  daemon = new PiBridgeDaemon(
    readConfig(process.env, fileURLToPath(new URL('./worker-main.js', import.meta.url))),
    log,
  );
} catch (err) {
  log.fatal({ code: (err as { code?: string }).code, err: (err as Error).message }, 'bad configuration');
  process.exit(2);
}
const loop = loopStatsEnabled(process.env) ? new LoopDelayMonitor() : undefined;
if (loop) process.on('SIGUSR2', () => daemon.bridge.emit({ type: 'loop_delay', ...loop.take() }));
let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  daemon.bridge.emit({ type: 'signal_received', signal });
  void daemon.stop().then(() => {
    if (loop) daemon.bridge.emit({ type: 'loop_delay', ...loop.take() });
    process.exit(0);
  });
};
// SPEC G-22: another daemon took the bridge lock over (this one was frozen): exit 1, so a
// supervisor restarts it, as a standby.
daemon.lockLostHandler = () => process.exit(1);
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
daemon.start().catch((err: unknown) => {
  log.fatal({ err: String(err) }, 'start failed');
  process.exit(1);
});
