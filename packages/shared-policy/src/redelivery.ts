import { AgentMailError } from './errors.js';

/** Attempts to run a worker before giving up (see SPEC B-14). @default 3 */
export const REDELIVERY_ATTEMPTS = 3;
/** Waits between attempts, in ms; the last value repeats (see SPEC B-14). @default [1000, 2000] */
export const REDELIVERY_BACKOFF_MS: readonly number[] = Object.freeze([1_000, 2_000]);

/** Options of {@link redeliver}. */
export interface RedeliverOptions {
  /** @default REDELIVERY_ATTEMPTS */
  attempts?: number;
  /** Wait before attempt n+1 is `backoffMs[n-1]` (the last value repeats). @default REDELIVERY_BACKOFF_MS */
  backoffMs?: readonly number[];
  /** Sleep for `ms`; inject a fake in tests. @default a setTimeout-based sleep */
  sleep?: (ms: number) => Promise<void>;
  /** Whether an error is worth another attempt. @default every error */
  shouldRetry?: (error: unknown) => boolean;
  /** Called before each retry (log it). */
  onRetry?: (info: { attempt: number; error: unknown; delayMs: number }) => void;
}

/** Outcome of {@link redeliver}; `attempts` is how many runs were made. */
export type RedeliverResult<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; attempts: number; lastError: unknown };

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Run a worker and retry it, with bounded backoff, when it dies before reporting (rejects);
 * see SPEC B-14. After the last attempt it gives up with `{ ok: false, attempts, lastError }` —
 * the caller logs it and sends the failure mail. Never rejects.
 *
 * `runWorker` gets the 1-based attempt number. A worker that reports a failed turn should
 * resolve (with that report), not reject: only a lost worker is retried.
 *
 * @throws AgentMailError `AM_OPTION_OUT_OF_RANGE` (synchronously) when `attempts` is not an integer ≥ 1
 *   or a backoff value is negative.
 * @example const r = await redeliver((n) => runWorkerProcess(mail, n));
 */
export function redeliver<T>(
  runWorker: (attempt: number) => Promise<T>,
  options: RedeliverOptions = {},
): Promise<RedeliverResult<T>> {
  const attempts = options.attempts ?? REDELIVERY_ATTEMPTS;
  const backoffMs = options.backoffMs ?? REDELIVERY_BACKOFF_MS;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new AgentMailError(
      'AM_OPTION_OUT_OF_RANGE',
      `redeliver option "attempts" must be an integer >= 1 (got ${attempts})`,
    );
  }
  if (backoffMs.some((ms) => !Number.isFinite(ms) || ms < 0)) {
    throw new AgentMailError(
      'AM_OPTION_OUT_OF_RANGE',
      `redeliver option "backoffMs" must hold finite numbers of ms >= 0 (got [${backoffMs.join(', ')}])`,
    );
  }
  const sleep = options.sleep ?? realSleep;
  const shouldRetry = options.shouldRetry ?? (() => true);

  return (async (): Promise<RedeliverResult<T>> => {
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      try {
        return { ok: true, value: await runWorker(attempt), attempts: attempt };
      } catch (error) {
        lastError = error;
        if (attempt === attempts || !shouldRetry(error)) return { ok: false, attempts: attempt, lastError };
        const delayMs = backoffMs[Math.min(attempt - 1, backoffMs.length - 1)] ?? 0;
        try {
          options.onRetry?.({ attempt, error, delayMs });
        } catch {
          // a failing log hook must not stop the retry
        }
        try {
          await sleep(delayMs);
        } catch {
          // a failing sleep only shortens the wait
        }
      }
    }
    return { ok: false, attempts, lastError };
  })();
}
