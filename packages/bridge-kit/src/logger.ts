/**
 * The logger type of the bridge kit.
 */

/** Structural logger (pino-compatible): bridges pass pino, tests a recorder. */
export interface BridgeLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
