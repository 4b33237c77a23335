#!/usr/bin/env node
/**
 * `agentmail-pi`: the pi bridge daemon, configured by environment variables only (see
 * {@link readConfig}). It checks its configuration and registers before it loads pi, so a wrong
 * setting or key fails at once; a Gateway that is not up yet is retried with backoff (1 s doubling
 * to 30 s). SIGTERM/SIGINT stop it gracefully (B-15); exit code 0 then, 2 on a configuration
 * error (a setting, or a key or name the Gateway refuses), 1 when it cannot start otherwise or lost
 * the bridge lock. A second daemon for the same agent and data directory waits as a standby (one
 * log line) and takes over when the first stops or dies (SPEC G-22, shared-policy BridgeLock).
 * With `AGENTMAIL_LOOP_STATS=1`, SIGUSR2 logs the event-loop delay since the previous report (see
 * loop-stats.ts).
 *
 * Logs are pino JSON lines on stderr (journald). On a terminal (stderr is a TTY) a failure to
 * start is also said as one plain line with its fix, and a Gateway that is not up yet as a plain
 * "waiting" line: a person starting the daemon by hand reads those, not JSON.
 */
import { fileURLToPath } from 'node:url';
import { createBridgeLogger, sayStartProgress, startRefusal, terminalLines } from '@agentmail/bridge-kit';
import { isPermanent } from '@agentmail/shared-policy/client';
import { type PiBridgeConfig, readConfig } from './config.js';
import { PiBridgeDaemon } from './daemon.js';
import { LoopDelayMonitor, loopStatsEnabled } from './loop-stats.js';

const log = createBridgeLogger('agentmail-pi');
const say = terminalLines('agentmail-pi');

let config: PiBridgeConfig;
let daemon: PiBridgeDaemon;
try {
  config = readConfig(process.env, fileURLToPath(new URL('./worker-main.js', import.meta.url)));
  daemon = new PiBridgeDaemon(config, log);
} catch (err) {
  log.fatal({ code: (err as { code?: string }).code, err: (err as Error).message }, 'bad configuration');
  say(`bad configuration: ${(err as Error).message}`);
  process.exit(2);
}
sayStartProgress(daemon.bridge.events, say, config);
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
daemon.start().catch(async (err: unknown) => {
  // A refusal for good (a wrong key, a name the key is not bound to) is a configuration error.
  const permanent = isPermanent(err);
  log.fatal({ err: String(err), permanent }, 'start failed');
  if (permanent) {
    const { line, fix } = startRefusal(err, config);
    say(line, fix);
  } else say(`cannot start: ${(err as Error).message}`);
  await daemon.stop().catch(() => undefined);
  process.exit(permanent ? 2 : 1);
});
