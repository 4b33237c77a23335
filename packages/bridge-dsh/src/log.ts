/**
 * The bridge's logging: every kit and DSH-seam event as a pino JSON line on stderr (`event:
 * <type>`, the kit's one log subscriber), and the milestones plus every warning and error also in
 * DSH's own log (`ctx.logger`), so a person reading dsh's output sees "AgentMail connected" when
 * the bridge's event stream first opens. Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
import {
  type BridgeEvent,
  type BridgeEventBus,
  type BridgeLogger,
  createBridgeLogger,
  hostLogEntry,
} from '@agentmail/bridge-kit';
import { PLUGIN_NAME } from './constants.js';

/** The stderr JSON logger of the plugin. */
export function createLogger(level?: string): BridgeLogger {
  return createBridgeLogger('agentmail-dsh', level);
}

/** DSH's logger as the plugin sees it (`ctx.logger`): message-style methods. */
export interface DshLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Copy milestones, warnings and errors to DSH's own log (the kit's {@link hostLogEntry}):
 * "AgentMail connected" when the event stream first opens (mail can arrive from then on). Only the
 * event type and ids are written: mail text never reaches DSH's log (H-1).
 * @returns the unsubscribe function.
 */
export function feedDshLog(
  bus: BridgeEventBus<BridgeEvent | { type: string }>,
  logger: DshLogger,
  agent: string,
): () => void {
  return bus.subscribe((event) => {
    const entry = hostLogEntry(event);
    if (entry === undefined) return;
    const mail = (event as { mail_id?: unknown }).mail_id;
    const at = typeof mail === 'string' ? ` (mail ${mail})` : '';
    try {
      logger[entry.level](
        `${PLUGIN_NAME}: ${entry.message}${entry.message === 'AgentMail connected' ? ` as ${agent}` : at}`,
      );
    } catch {
      // DSH's logger failing must not break the bus
    }
  });
}
