/**
 * Starting a bridge until it is up (SPEC B-1): a Gateway that is not up yet is retried with
 * backoff; a permanent refusal throws or is retried, as the bridge chose.
 */
import { AgentMailError, ERROR_CODES, messageOf } from '@agentmail/shared-policy';
import { isPermanent } from '@agentmail/shared-policy/client';
import type { EmitEvent } from './events.js';

/** First wait after a failed start, in ms; doubles up to {@link START_RETRY_MAX_MS}. @default 1_000 */
export const START_RETRY_INITIAL_MS = 1_000;
/** Longest wait between start attempts, in ms. @default 30_000 */
export const START_RETRY_MAX_MS = 30_000;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** A TLS handshake against a plain-HTTP Gateway (an https:// URL for an http server): never fixed by retrying. */
function isTlsMismatch(err: unknown): boolean {
  const text = `${messageOf(err)} ${messageOf((err as { cause?: unknown } | null)?.cause)}`;
  return /wrong version number|ERR_SSL|EPROTO|packet length too long/i.test(text);
}

/** Options of {@link startWithRetry}. */
export interface StartRetryOptions {
  /** The Gateway URL, named when it is an https:// URL of a plain-HTTP Gateway. */
  gatewayUrl: string;
  /** Aborted when the bridge stops: no further attempt, the wait ends. */
  signal: AbortSignal;
  emit: EmitEvent;
  /** First wait, in ms. @default START_RETRY_INITIAL_MS */
  initialMs?: number;
  /** A permanent failure throws (`'throw'`) or is retried (`'retry'`). @default 'throw' */
  onPermanent?: 'throw' | 'retry';
}

/**
 * Run `start` until it resolves or the signal aborts; after each failure event `start_failed`,
 * then a wait from `initialMs` doubling to {@link START_RETRY_MAX_MS}. A 4xx, a TLS handshake
 * against plain HTTP (as `AM_BRIDGE_CONFIG_INVALID`) and a turn-RPC socket that cannot be served
 * (`AM_RPC_*`) are permanent.
 * @throws the permanent failure when `onPermanent` is `'throw'`.
 */
export async function startWithRetry(start: () => Promise<void>, options: StartRetryOptions): Promise<void> {
  let delayMs = options.initialMs ?? START_RETRY_INITIAL_MS;
  while (!options.signal.aborted) {
    try {
      await start();
      return;
    } catch (thrown) {
      if (options.signal.aborted) return;
      const tls = isTlsMismatch(thrown);
      // A TLS handshake against plain HTTP, or a turn-RPC socket that cannot be served, is
      // never fixed by waiting.
      const permanent =
        isPermanent(thrown) ||
        tls ||
        (thrown as { code?: unknown }).code?.toString().startsWith('AM_RPC_') === true;
      const err = tls
        ? new AgentMailError(
            ERROR_CODES.BRIDGE_CONFIG_INVALID,
            `the Gateway at ${options.gatewayUrl} does not speak TLS (${messageOf(thrown)}): use an http:// URL for it, or put it behind an HTTPS proxy`,
            { cause: thrown },
          )
        : thrown;
      options.emit({ type: 'start_failed', error: messageOf(err), permanent, retry_ms: delayMs });
      if (permanent && (options.onPermanent ?? 'throw') === 'throw') throw err;
      await sleep(delayMs, options.signal);
      delayMs = Math.min(delayMs * 2, START_RETRY_MAX_MS);
    }
  }
}
