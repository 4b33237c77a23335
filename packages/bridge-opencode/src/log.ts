/**
 * The bridge's logging: every kit and opencode event as a pino JSON line on stderr (journald under
 * `opencode serve`), and the milestones plus every warning and error also in opencode's own log
 * (`client.app.log`), so `opencode serve --print-logs` and opencode's log files show the bridge
 * too. Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
import { type BridgeLogger, createBridgeLogger, type HostLogSink, hostLogEntry } from '@agentmail/bridge-kit';
import type { OpencodeClient } from './opencode-facts.js';

/** Service name in opencode's log. */
export const LOG_SERVICE = 'agentmail';

/** The stderr logger (pino). */
export function createLogger(level?: string): BridgeLogger {
  return createBridgeLogger('agentmail-opencode', level);
}

/**
 * opencode's own log as the plugin's host log (the kit's `runPluginBridge`): milestones, warnings
 * and errors; "AgentMail connected" when the event stream first opens — the moment mail can
 * arrive, before the start catch-up (which may wait on a person's decision for a backlog mail).
 */
export function opencodeHostLog(client: OpencodeClient, agent: string): HostLogSink {
  return {
    entry: (event) =>
      hostLogEntry(event) ??
      (event.type === 'opencode_permission_reply_failed'
        ? { level: 'warn' as const, message: event.type }
        : undefined),
    write: async (entry, event) => {
      const { type, ...extra } = event;
      await client.app.log({
        body: {
          service: LOG_SERVICE,
          level: entry.level,
          message: entry.message,
          extra: { event: type, agent, ...extra },
        },
      });
    },
  };
}
