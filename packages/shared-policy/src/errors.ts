/**
 * Error registry of @agentmail/shared-policy. One code per failure mode, `AM_<AREA>_<WHAT>`;
 * every code is listed in docs/errors.md (a test checks the codes are unique and documented).
 * Check errors by `code` (a host may load two copies of this package), not only `instanceof`.
 */
export const ERROR_CODES = {
  // ==== add codes below, one line each: KEY: 'AM_AREA_WHAT' ====
} as const satisfies Record<string, `AM_${string}`>;

/** A code of the registry. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** Options of {@link AgentMailError}. */
export interface AgentMailErrorOptions {
  /** HTTP status, when the failure came from (or maps to) an HTTP answer. */
  status?: number;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * Base of every error thrown by shared-policy. `code` is stable; `message` names the field or
 * input at fault and the fix.
 */
export class AgentMailError extends Error {
  readonly code: ErrorCode;
  readonly status: number | undefined;
  constructor(code: ErrorCode, message: string, options: AgentMailErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentMailError';
    this.code = code;
    this.status = options.status;
  }
}

/** True when `err` carries the given code (works across duplicate package copies). */
export function hasErrorCode(err: unknown, code: ErrorCode): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
