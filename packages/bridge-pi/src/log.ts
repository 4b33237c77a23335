import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * The bridge's logger: pino JSON lines on **stderr** (journald), one line per decision
 * (see SPEC §8). Level from `AGENTMAIL_LOG_LEVEL` (default `info`).
 */
export function createLogger(name: string, level = process.env.AGENTMAIL_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}
