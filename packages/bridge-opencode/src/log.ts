/**
 * The bridge's logger: pino JSON lines on stderr (journald under `opencode serve`), one line per
 * decision (see SPEC §8). Lines at `warn` and above, and the "connected" line, are also written to
 * opencode's own log (`client.app.log`), so `opencode serve --print-logs` and opencode's log files
 * show the bridge too. Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
import type { BridgeLogger } from '@agentmail/shared-policy/bridge';
import { pino } from 'pino';
import type { OpencodeClient } from './bridge.js';

/** Service name in opencode's log. */
export const LOG_SERVICE = 'agentmail';

/** Messages copied to opencode's log at info level (the rest only from warn up). */
const MILESTONES = new Set([
  'AgentMail connected',
  'AgentMail catch-up done',
  'registered',
  'sse open',
  'stopped',
]);

/** A {@link BridgeLogger} over pino (stderr) that also feeds opencode's own log. */
export function createLogger(
  client: OpencodeClient,
  level = process.env.AGENTMAIL_LOG_LEVEL ?? 'info',
): BridgeLogger {
  const log = pino(
    { name: 'agentmail-opencode', level, base: { pid: process.pid } },
    pino.destination({ fd: 2, sync: true }),
  );
  const toOpencode = (lvl: 'info' | 'warn' | 'error', obj: object, msg: string | undefined): void => {
    if (lvl === 'info' && !MILESTONES.has(msg ?? '')) return;
    void client.app
      .log({ body: { service: LOG_SERVICE, level: lvl, message: msg ?? '', extra: { ...obj } } })
      .catch(() => undefined);
  };
  return {
    info(obj, msg) {
      log.info(obj, msg);
      toOpencode('info', obj, msg);
    },
    warn(obj, msg) {
      log.warn(obj, msg);
      toOpencode('warn', obj, msg);
    },
    error(obj, msg) {
      log.error(obj, msg);
      toOpencode('error', obj, msg);
    },
  };
}
