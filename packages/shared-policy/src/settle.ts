import { AgentMailError } from './errors.js';

/** Default turn timeout, in ms (10 min, see SPEC B-7). */
export const TURN_TIMEOUT_MS = 600_000;
/** Default time between a graceful stop and a kill, in ms. */
export const STOP_GRACE_MS = 5_000;

/** Options of {@link settleWithTimeout}. */
export interface SettleOptions {
  /** @default TURN_TIMEOUT_MS */
  timeoutMs?: number;
  /** Graceful stop (abort the turn); called once on timeout. Errors are swallowed. */
  stop: () => Promise<void> | void;
  /** Hard stop (kill the worker and its tool processes); called when `stop` did not settle the work within `graceMs`. Errors are swallowed. */
  kill: () => void;
  /** @default STOP_GRACE_MS */
  graceMs?: number;
}

/**
 * Outcome of {@link settleWithTimeout}: the work's value, its error, or a timeout (`killed` tells
 * whether the hard stop was needed). `late` marks a value or error that came during the grace
 * period after the timeout.
 */
export type SettleResult<T> =
  | { ok: true; value: T; late?: boolean }
  | { ok: false; reason: 'error'; error: unknown; late?: boolean }
  | { ok: false; reason: 'timeout'; killed: boolean };

function checkMs(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new AgentMailError(
      'AM_OPTION_OUT_OF_RANGE',
      `settleWithTimeout option "${name}" must be a finite number of ms >= 0 (got ${value})`,
    );
  }
}

/**
 * Wait for a turn with a timeout that always settles (see SPEC B-7). Never rejects.
 *
 * On timeout: call `stop()`; if the work has not settled `graceMs` later, call `kill()`; then
 * resolve `{ ok: false, reason: 'timeout' }` — whatever `stop`/`kill` do, even if they hang or
 * throw. If the work settles during the grace period, its own value (or error) is the result,
 * flagged `late`, without a kill: the work saw its stop and ended with its own outcome (a turn
 * that relayed its answer must not also be reported as timed out: one outcome per mail, B-7,
 * B-10). `work` is the platform's asynchronous outcome signal, not "the call returned".
 *
 * @throws AgentMailError `AM_OPTION_OUT_OF_RANGE` (synchronously) for a negative or non-finite `timeoutMs`/`graceMs`.
 * @example
 * const r = await settleWithTimeout(turnDone, { stop: () => session.abort(), kill: () => child.kill('SIGKILL') });
 */
export function settleWithTimeout<T>(work: Promise<T>, options: SettleOptions): Promise<SettleResult<T>> {
  const timeoutMs = options.timeoutMs ?? TURN_TIMEOUT_MS;
  const graceMs = options.graceMs ?? STOP_GRACE_MS;
  checkMs('timeoutMs', timeoutMs);
  checkMs('graceMs', graceMs);

  return new Promise((resolve) => {
    let settled = false; // the work settled
    let timedOut = false;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    let finishGrace: ((late: SettleResult<T>) => void) | undefined;

    const timer = setTimeout(() => {
      timedOut = true;
      try {
        Promise.resolve(options.stop()).catch(() => undefined);
      } catch {
        // a throwing stop must not prevent the kill
      }
      const done = (result: SettleResult<T>): void => {
        if (graceTimer !== undefined) clearTimeout(graceTimer);
        finishGrace = undefined;
        resolve(result);
      };
      finishGrace = done;
      graceTimer = setTimeout(() => {
        if (!settled) {
          try {
            options.kill();
          } catch {
            // resolve regardless
          }
        }
        done({ ok: false, reason: 'timeout', killed: !settled });
      }, graceMs);
    }, timeoutMs);

    work.then(
      (value) => {
        settled = true;
        if (timedOut) finishGrace?.({ ok: true, value, late: true });
        else {
          clearTimeout(timer);
          resolve({ ok: true, value });
        }
      },
      (error: unknown) => {
        settled = true;
        if (timedOut) finishGrace?.({ ok: false, reason: 'error', error, late: true });
        else {
          clearTimeout(timer);
          resolve({ ok: false, reason: 'error', error });
        }
      },
    );
  });
}
