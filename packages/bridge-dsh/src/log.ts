/**
 * The bridge's logging: every kit and DSH-seam event as a pino JSON line on stderr (`event:
 * <type>`, the kit's one log subscriber), and the milestones plus every warning and error also in
 * DSH's own log (`ctx.logger`), so a person reading dsh's output sees "AgentMail connected" when
 * the bridge's event stream first opens. Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
import { type BridgeLogger, createBridgeLogger, type HostLogSink } from '@agentmail/bridge-kit';
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
 * DSH's own log as the plugin's host log (the kit's `runPluginBridge`, entries from the kit's
 * `hostLogEntry`): "AgentMail connected" when the event stream first opens (mail can arrive from
 * then on), milestones, warnings and errors. Only the event type and ids are written: mail text
 * never reaches DSH's log (H-1).
 */
export function dshHostLog(logger: DshLogger, agent: string): HostLogSink {
  return {
    write: (entry, event) => {
      const mail = event.mail_id;
      const at = typeof mail === 'string' ? ` (mail ${mail})` : '';
      logger[entry.level](
        `${PLUGIN_NAME}: ${entry.message}${entry.message === 'AgentMail connected' ? ` as ${agent}` : at}`,
      );
    },
  };
}
