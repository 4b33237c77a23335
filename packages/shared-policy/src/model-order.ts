import { AgentMailError } from './errors.js';

/** Most allowed models tried for one mail (see SPEC B-8, G-26). @default 10 */
export const MAX_ALLOWED_MODELS = 10;

/** The log line of a turn that runs on the host's default model (see SPEC B-8). */
export const HOST_DEFAULT_LOG_LINE =
  'no allowed models configured: using the host default, not chosen by the platform';

/** A model key split into its parts. */
export interface ModelRef {
  provider: string;
  model: string;
}

/**
 * Split a `provider/model` key at the **first** `/` (see SPEC G-26): `openrouter/meta/llama-3`
 * is provider `openrouter`, model `meta/llama-3`.
 * @throws AgentMailError `AM_MODEL_KEY_INVALID` when there is no `/`, or the provider or model part is empty.
 */
export function splitModelKey(key: string): ModelRef {
  const slash = key.indexOf('/');
  const provider = slash < 0 ? '' : key.slice(0, slash).trim();
  const model = slash < 0 ? '' : key.slice(slash + 1).trim();
  if (provider === '' || model === '') {
    throw new AgentMailError(
      'AM_MODEL_KEY_INVALID',
      `model key "${key}" must be "provider/model" with both parts non-empty (split at the first "/")`,
    );
  }
  return { provider, model };
}

/** One model attempt: an admin-chosen model, or the host's own default. */
export type ModelAttempt =
  | { kind: 'configured'; key: string; provider: string; model: string }
  | { kind: 'host_default'; provider?: string; model?: string };

/** Why an allowed model is not tried. */
export interface ModelSkip {
  key: string;
  reason: 'invalid_key' | 'duplicate' | 'over_limit' | 'not_in_catalogue';
}

/** Input of {@link modelAttemptOrder}. */
export interface ModelOrderInput {
  /** The admin's ordered selection (`allowed_models` of the heartbeat answer), `provider/model`. */
  allowed: readonly string[];
  /** The host's catalogue as `provider/model` keys; `undefined` when the bridge could not read it (then nothing is skipped for it). */
  catalogue?: readonly string[] | undefined;
  /** The host's default model key, when known (for the log only). */
  hostDefault?: string | undefined;
}

/** Result of {@link modelAttemptOrder}. */
export interface ModelOrder {
  attempts: ModelAttempt[];
  skipped: ModelSkip[];
  usedHostDefault: boolean;
  /** A line to log loudly when the host default is used or a configured model was skipped. */
  logLine?: string;
}

/**
 * The models to try, in order, for a new session (see SPEC B-8):
 * - the admin's allowed models in order, at most {@link MAX_ALLOWED_MODELS}; a key missing from
 *   a known catalogue is skipped at once, as are malformed keys and duplicates;
 * - none configured → one `host_default` attempt, `usedHostDefault`, and {@link HOST_DEFAULT_LOG_LINE};
 * - configured but every one skipped → no attempts (the caller sends the all-models-failed
 *   failure mail; it does not fall back to a model the admin did not choose).
 *
 * Switching to the next attempt means a fresh platform session; resumed sessions never switch
 * (the caller's rule).
 *
 * @example modelAttemptOrder({ allowed: ['openai/gpt-5', 'x/y'], catalogue: ['openai/gpt-5'] })
 */
export function modelAttemptOrder(input: ModelOrderInput): ModelOrder {
  if (input.allowed.length === 0) {
    const attempt: ModelAttempt = { kind: 'host_default' };
    let logLine = HOST_DEFAULT_LOG_LINE;
    if (input.hostDefault !== undefined) {
      logLine += ` (${input.hostDefault})`;
      try {
        const ref = splitModelKey(input.hostDefault);
        attempt.provider = ref.provider;
        attempt.model = ref.model;
      } catch {
        // an unparsable host default is still the host's choice; leave the parts out
      }
    }
    return { attempts: [attempt], skipped: [], usedHostDefault: true, logLine };
  }

  const catalogue = input.catalogue === undefined ? undefined : new Set(input.catalogue.map((k) => k.trim()));
  const attempts: ModelAttempt[] = [];
  const skipped: ModelSkip[] = [];
  const seen = new Set<string>();
  const skipReason = (key: string, index: number): ModelSkip['reason'] | undefined => {
    if (index >= MAX_ALLOWED_MODELS) return 'over_limit';
    let ref: ModelRef;
    try {
      ref = splitModelKey(key);
    } catch {
      return 'invalid_key';
    }
    const canonical = `${ref.provider}/${ref.model}`;
    if (seen.has(canonical)) return 'duplicate';
    seen.add(canonical);
    if (catalogue !== undefined && !catalogue.has(canonical)) return 'not_in_catalogue';
    attempts.push({ kind: 'configured', key: canonical, ...ref });
    return undefined;
  };
  for (const [index, key] of input.allowed.entries()) {
    const skip = skipReason(key, index);
    if (skip !== undefined) skipped.push({ key, reason: skip });
  }
  const order: ModelOrder = { attempts, skipped, usedHostDefault: false };
  if (skipped.length > 0) {
    order.logLine = `allowed models skipped: ${skipped.map((s) => `${s.key} (${s.reason})`).join(', ')}${
      attempts.length === 0 ? '; no model left to try' : ''
    }`;
  }
  return order;
}
