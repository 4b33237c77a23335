/**
 * The bridge's logging: every kit and DSH-seam event as a pino JSON line on stderr (`event:
 * <type>`, the kit's one log subscriber), and the milestones plus every warning and error also in
 * DSH's own log (`ctx.logger`), so a person reading dsh's output sees "AgentMail connected" when
 * the bridge's event stream first opens. Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
import type { BridgeEvent, BridgeEventBus, BridgeLogger } from '@agentmail/shared-policy/bridge';
import { pino } from 'pino';
import { PLUGIN_NAME } from './constants.js';

/** The stderr JSON logger of the plugin. */
export function createLogger(level = process.env.AGENTMAIL_LOG_LEVEL ?? 'info'): BridgeLogger {
  return pino(
    { name: 'agentmail-dsh', level, base: { pid: process.pid } },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** DSH's logger as the plugin sees it (`ctx.logger`): message-style methods. */
export interface DshLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Event types copied to DSH's log at info level (warnings and errors are always copied). */
const MILESTONES = new Set(['registered', 'ready', 'stopped', 'lock_taken', 'standby']);
const WARNINGS = new Set([
  'start_failed',
  'heartbeat_failed',
  'snapshot_partial',
  'stream_problem',
  'catch_up_failed',
  'lock_lost',
  'turn_failed',
  'turn_timed_out',
  'turn_given_up',
  'relay_failed',
  'failure_mail_failed',
  'permission_failed',
]);

/**
 * Copy milestones, warnings and errors to DSH's own log; "AgentMail connected" when the event
 * stream first opens (mail can arrive from then on). Only the event type and scalar ids are
 * written: mail text never reaches DSH's log (H-1).
 * @returns the unsubscribe function.
 */
export function feedDshLog(
  bus: BridgeEventBus<BridgeEvent | { type: string }>,
  logger: DshLogger,
  agent: string,
): () => void {
  return bus.subscribe((event) => {
    const { type } = event;
    const e = event as { type: string; connection?: unknown; mail_id?: unknown; error?: unknown };
    try {
      if (type === 'stream_open' && e.connection === 1)
        logger.info(`${PLUGIN_NAME}: AgentMail connected as ${agent}`);
      else if (MILESTONES.has(type)) logger.info(`${PLUGIN_NAME}: ${type}`);
      else if (WARNINGS.has(type)) {
        const at = typeof e.mail_id === 'string' ? ` (mail ${e.mail_id})` : '';
        const line = `${PLUGIN_NAME}: ${type}${at}`;
        if (type === 'turn_failed' || type === 'lock_lost') logger.error(line);
        else logger.warn(line);
      }
    } catch {
      // DSH's logger failing must not break the bus
    }
  });
}
