/**
 * The bridge's logging: every kit and opencode event as a pino JSON line on stderr (journald under
 * `opencode serve`), and the milestones plus every warning and error also in opencode's own log
 * (`client.app.log`), so `opencode serve --print-logs` and opencode's log files show the bridge
 * too. Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
import {
  type BridgeEvent,
  type BridgeEventBus,
  type BridgeLogger,
  createBridgeLogger,
  hostLogEntry,
} from '@agentmail/bridge-kit';
import type { OpencodeClient } from './opencode-facts.js';
import type { OpencodeEvent } from './permissions.js';

/** Service name in opencode's log. */
export const LOG_SERVICE = 'agentmail';

/** The stderr logger (pino). */
export function createLogger(level?: string): BridgeLogger {
  return createBridgeLogger('agentmail-opencode', level);
}

/**
 * Copy milestones, warnings and errors to opencode's own log; "AgentMail connected" when the event
 * stream first opens — the moment mail can arrive, before the start catch-up (which may wait on a
 * person's decision for a backlog mail).
 * @returns the unsubscribe function.
 */
export function feedOpencodeLog(
  bus: BridgeEventBus<BridgeEvent | OpencodeEvent>,
  client: OpencodeClient,
  agent: string,
): () => void {
  return bus.subscribe((event) => {
    const { type, ...extra } = event as { type: string } & Record<string, unknown>;
    const entry =
      hostLogEntry(event) ??
      (type === 'opencode_permission_reply_failed' ? { level: 'warn' as const, message: type } : undefined);
    if (entry === undefined) return;
    void client.app
      .log({
        body: {
          service: LOG_SERVICE,
          level: entry.level,
          message: entry.message,
          extra: { event: type, agent, ...extra },
        },
      })
      .catch(() => undefined);
  });
}
