/**
 * The logger of the bridge kit: its structural type, and the one pino setup every bridge process
 * uses (JSON lines on stderr, SPEC §8).
 */
import { type Logger, pino } from 'pino';

/** Structural logger (pino-compatible): bridges pass pino, tests a recorder. */
export interface BridgeLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * The stderr logger of a bridge process: pino JSON lines on fd 2, written synchronously (a process
 * that exits right after a fatal line still has it in journald), each with `name` and `pid`.
 * @param name - the logger's `name` field, e.g. `agentmail-zcode`
 * @param level - pino level. @default `AGENTMAIL_LOG_LEVEL`, else `info`
 * @example const log = createBridgeLogger('agentmail-dsh'); createBridge({ …, log });
 */
export function createBridgeLogger(name: string, level = process.env.AGENTMAIL_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}
