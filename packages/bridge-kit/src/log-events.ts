/**
 * Logging as one subscriber of the bridge's events: one JSON line per event (pino-compatible
 * logger), with the event's fields and `event: <type>`. The message text is for people reading
 * the log; code and tests use the `event` field (and the typed bus), never the text.
 */
import type { BridgeEvent, BridgeEventBus } from './events.js';
import type { BridgeLogger } from './logger.js';

/** A log level of a bridge event line. */
export type BridgeLogLevel = 'info' | 'warn' | 'error';
type Level = BridgeLogLevel;

/**
 * The level of a bridge's own (host) event, by its content, or undefined for info; e.g. a
 * driver's failed setup check (`self_check` with `ok: false`) at warn.
 */
export type HostEventLevel = (
  event: { type: string } & Record<string, unknown>,
) => BridgeLogLevel | undefined;

/** Level and message of each event type; `satisfies` keeps the table complete. */
const LINES = {
  standby: [
    'info',
    'standby: another process is the AgentMail bridge of this agent; this one takes over when it stops',
  ],
  lock_taken: ['info', 'bridge lock taken'],
  lock_lost: ['error', 'bridge lock lost: this process stops acting as the bridge'],
  start_failed: ['error', 'AgentMail start failed'],
  registered: ['info', 'registered'],
  heartbeat_failed: ['warn', 'heartbeat failed'],
  snapshot_partial: ['warn', 'part of the heartbeat snapshot unreadable: omitted (G-25)'],
  stream_open: ['info', 'event stream open'],
  stream_problem: ['warn', 'event stream problem'],
  catch_up_done: ['info', 'catch-up done'],
  catch_up_failed: ['warn', 'catch-up: inbox unreadable'],
  ready: ['info', 'AgentMail ready: start catch-up done'],
  reconnected: ['info', 'reconnected to another Gateway'],
  mail_queued: ['info', 'mail queued'],
  mail_duplicate: ['info', 'duplicate mail ignored'],
  mail_not_run: ['warn', 'mail not run; it stays unread for catch-up'],
  mail_read_failed: ['warn', 'handled mail not marked read'],
  turn_started: ['info', 'turn started'],
  workspace_fallback: ['warn', 'working directory falls back'],
  binding_gone: ['warn', 'bound platform session is gone; the mail starts a new one'],
  model_order: ['info', 'model order'],
  attempt_failed: ['warn', 'model attempt failed'],
  attempt_not_discarded: ['warn', 'failed attempt not discarded'],
  turn_done: ['info', 'turn done'],
  turn_failed: ['error', 'turn failed'],
  turn_timed_out: ['error', 'turn timed out'],
  turn_lost: ['warn', 'turn lost; redelivering'],
  turn_given_up: ['error', 'turn given up'],
  turn_interrupted: ['warn', 'turn stopped by shutdown; the mail stays unread for catch-up'],
  relayed: ['info', 'relayed'],
  relay_skipped: ['info', 'no relay'],
  relay_failed: ['error', 'relay failed'],
  failure_mail_sent: ['info', 'failure mail sent'],
  failure_mail_failed: ['error', 'failure mail not sent'],
  naming_synced: ['info', 'naming synced'],
  naming_sync_skipped: ['info', 'naming sync skipped'],
  naming_sync_failed: ['warn', 'naming sync failed'],
  enforcement: ['info', 'mode enforcement'],
  sandbox_checked: ['info', 'workspace sandbox checked'],
  permission_refused: ['info', 'tool refused by permission mode'],
  permission_asked: ['info', 'permission requested'],
  permission_decided: ['info', 'permission decided'],
  permission_failed: ['warn', 'permission request failed'],
  grant_not_stored: ['warn', 'could not store the "always" grant'],
  permission_withdrawn: ['info', 'permission request withdrawn (nobody waits for it any more)'],
  decision_unclaimed: ['info', 'permission decision for no waiting call'],
  rpc_problem: ['warn', 'turn rpc problem'],
  stopping: ['info', 'shutting down'],
  stopped: ['info', 'stopped'],
} as const satisfies Record<BridgeEvent['type'], readonly [Level, string]>;

/** Events logged at a higher level than the table's, by content. */
function levelOf(event: BridgeEvent): Level {
  if (event.type === 'enforcement') return event.mode === 'advisory' ? 'error' : 'info';
  if (event.type === 'sandbox_checked') return event.verified ? 'info' : 'warn';
  if (event.type === 'model_order') return event.host_default ? 'warn' : 'info';
  return LINES[event.type][0];
}

/**
 * Write one log line per event of `bus` to `log` (`{ event: type, ...fields }`); host events
 * (types not in {@link BridgeEvent}) are logged at the level `hostLevel` gives (default info)
 * with their type as the message.
 * @returns the unsubscribe function.
 * @example const off = logBridgeEvents(bridge.events, pino({ base: { service: 'agentmail-pi' } }, pino.destination(2)));
 */
export function logBridgeEvents<E extends { type: string }>(
  bus: BridgeEventBus<E>,
  log: BridgeLogger,
  hostLevel?: HostEventLevel,
): () => void {
  return bus.subscribe((event) => {
    const { type, ...fields } = event as { type: string } & Record<string, unknown>;
    const line = (LINES as Record<string, readonly [Level, string] | undefined>)[type];
    const level = line
      ? levelOf(event as unknown as BridgeEvent)
      : (hostLevel?.(event as { type: string } & Record<string, unknown>) ?? 'info');
    const msg =
      type === 'model_order'
        ? String(fields.line)
        : type === 'stream_open' && fields.connection === 1
          ? 'AgentMail connected: event stream open'
          : (line?.[1] ?? type.replaceAll('_', ' '));
    log[level]({ event: type, ...fields }, msg);
  });
}

/** Event types a host's own log shows although they are info (the bridge's milestones). */
const HOST_LOG_MILESTONES: ReadonlySet<string> = new Set([
  'registered',
  'ready',
  'stopped',
  'lock_taken',
  'standby',
]);

/** One line for a host's own log. */
export interface HostLogEntry {
  level: Level;
  /** The event type, or `AgentMail connected` for the first event-stream open. */
  message: string;
}

/**
 * What a host's own log (opencode's app log, DSH's `ctx.logger`) shows of a bridge event, beside
 * the full JSON log: the first event-stream open as `AgentMail connected` (mail can arrive from
 * then on), the milestones at info, every warning and error of the kit at its level; undefined for
 * the rest and for host events (a bridge adds its own).
 * @example const entry = hostLogEntry(event); if (entry) hostLog[entry.level](`agentmail: ${entry.message}`);
 */
export function hostLogEntry(event: { type: string; connection?: unknown }): HostLogEntry | undefined {
  if (event.type === 'stream_open')
    return event.connection === 1 ? { level: 'info', message: 'AgentMail connected' } : undefined;
  if (!(event.type in LINES)) return undefined;
  if (HOST_LOG_MILESTONES.has(event.type)) return { level: 'info', message: event.type };
  const level = levelOf(event as BridgeEvent);
  return level === 'info' ? undefined : { level, message: event.type };
}
