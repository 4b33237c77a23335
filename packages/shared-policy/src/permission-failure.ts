import { isTransientStatus } from '@agentmail/protocol';
import { formatText, type Locale } from './texts/index.js';

/** Options of {@link classifyPermissionFailure}. */
export interface PermissionFailureOptions {
  /** The platform has a local prompt a person is looking at (not a mail-driven headless session). */
  hasLocalUi: boolean;
  /** Locale of the `reason` text. @default 'en' */
  locale?: Locale;
}

/**
 * What to do with a tool call whose permission request failed: run it (`allow`, only when the
 * Gateway says the session is in `full` mode), refuse it (`deny`, `reason` is the text the model
 * sees), or hand it to the platform's own local prompt (`yield`).
 */
export interface PermissionFailureDecision {
  decision: 'allow' | 'deny' | 'yield';
  reason: string;
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/**
 * True for a `POST /permission/request` (or send) answer `{ status: "duplicate_relay" }`, given
 * either the answer itself or an error whose `body` is that answer (see SPEC G-32, P-5).
 */
export function isDuplicateRelay(value: unknown): boolean {
  return (
    field(value, 'status') === 'duplicate_relay' ||
    field(field(value, 'body'), 'status') === 'duplicate_relay'
  );
}

/** The server's own words from a G-13 error body: `error — detail — suggestion`, or ''. */
function serverWords(body: unknown): string {
  if (typeof body === 'string') return body.trim().replace(/[.。]+$/u, '');
  return ['error', 'detail', 'suggestion']
    .map((k) => field(body, k))
    .filter((v): v is string => typeof v === 'string' && v.trim() !== '')
    .map((v) => v.trim().replace(/[.。]+$/u, ''))
    .join(' — ');
}

function causeOf(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  if (typeof err === 'string' && err) return err;
  return 'network error';
}

/**
 * Classify a failed permission request; it fails closed (see SPEC P-5, G-13).
 *
 * `err` is what the HTTP client threw: `status?: number` and the parsed `body?: unknown` (G-13);
 * a network error has no status. The `{ status: "duplicate_relay" }` answer of a 200 is accepted
 * here too (as the value itself or as an error's `body`).
 * - `duplicate_relay` → `deny`: the question was already asked;
 * - 409 → `deny` with the server's words (`error`, `detail`, `suggestion`), **except** when the
 *   body says `permission_mode: "full"` → `allow` (that mode never asks);
 * - 5xx, 408, 429, no status (network) → `yield` when `hasLocalUi`, else `deny`;
 * - any other 4xx → `deny`: refused, and retrying will not succeed;
 * - anything else (an error with a 1xx–3xx status) → `deny`.
 *
 * Never throws.
 *
 * @example classifyPermissionFailure({ status: 503 }, { hasLocalUi: false }).decision // 'deny'
 */
export function classifyPermissionFailure(
  err: unknown,
  options: PermissionFailureOptions,
): PermissionFailureDecision {
  const { locale } = options;
  if (isDuplicateRelay(err)) {
    return { decision: 'deny', reason: formatText('permission.failure.duplicate', {}, locale) };
  }
  const rawStatus = field(err, 'status');
  const status = typeof rawStatus === 'number' && Number.isFinite(rawStatus) ? rawStatus : undefined;
  const body = field(err, 'body');
  const words = serverWords(body) || formatText('permission.failure.no_details', {}, locale);

  if (status === 409) {
    if (field(body, 'permission_mode') === 'full') {
      return { decision: 'allow', reason: formatText('permission.failure.full_mode', {}, locale) };
    }
    return { decision: 'deny', reason: formatText('permission.failure.conflict', { words }, locale) };
  }
  if (status === undefined || isTransientStatus(status)) {
    const cause = status === undefined ? causeOf(err) : `HTTP ${status}`;
    return options.hasLocalUi
      ? { decision: 'yield', reason: formatText('permission.failure.yield', { cause }, locale) }
      : { decision: 'deny', reason: formatText('permission.failure.unavailable', { cause }, locale) };
  }
  if (status >= 400 && status < 500) {
    return { decision: 'deny', reason: formatText('permission.failure.refused', { status, words }, locale) };
  }
  return { decision: 'deny', reason: formatText('permission.failure.unexpected', { status }, locale) };
}
