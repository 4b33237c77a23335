/**
 * Error registry of @agentmail/gateway. One code per failure mode, `AM_GW_<WHAT>`, each with its
 * HTTP status; every code is listed in docs/errors.md (a test checks they are unique and
 * documented). The status alone tells a client "retry later" (5xx, 408, 429) from "will never
 * succeed" (other 4xx) — see SPEC G-13.
 */
export const GATEWAY_ERRORS = {
  // ==== gateway codes, one line each: KEY: { code, status } ====
  BAD_REQUEST: { code: 'AM_GW_BAD_REQUEST', status: 400, error: 'invalid_request' },
  UNAUTHENTICATED: { code: 'AM_GW_UNAUTHENTICATED', status: 401, error: 'unauthorized' },
  KEY_BOUND_TO_OTHER_AGENT: { code: 'AM_GW_KEY_BOUND_TO_OTHER_AGENT', status: 403, error: 'forbidden' },
  FORBIDDEN: { code: 'AM_GW_FORBIDDEN', status: 403, error: 'forbidden' },
  NOT_FOUND: { code: 'AM_GW_NOT_FOUND', status: 404, error: 'not_found' },
  UNKNOWN_RECIPIENT: { code: 'AM_GW_UNKNOWN_RECIPIENT', status: 404, error: 'not_found' },
  UNKNOWN_ALIAS: { code: 'AM_GW_UNKNOWN_ALIAS', status: 404, error: 'not_found' },
  UNKNOWN_ATTACHMENT: { code: 'AM_GW_UNKNOWN_ATTACHMENT', status: 404, error: 'not_found' },
  NOT_REGISTERED: { code: 'AM_GW_NOT_REGISTERED', status: 409, error: 'conflict' },
  CONFLICT: { code: 'AM_GW_CONFLICT', status: 409, error: 'conflict' },
  ALIAS_ELSEWHERE: { code: 'AM_GW_ALIAS_ELSEWHERE', status: 409, error: 'conflict' },
  BUDGET_EXHAUSTED: { code: 'AM_GW_BUDGET_EXHAUSTED', status: 409, error: 'budget_exhausted' },
  HOP_LIMIT: { code: 'AM_GW_HOP_LIMIT', status: 409, error: 'hop_limit_reached' },
  NO_PERSON_REACHABLE: { code: 'AM_GW_NO_PERSON_REACHABLE', status: 409, error: 'no_person_reachable' },
  ALREADY_DECIDED: { code: 'AM_GW_ALREADY_DECIDED', status: 409, error: 'conflict' },
  NO_LONGER_WAITING: { code: 'AM_GW_NO_LONGER_WAITING', status: 409, error: 'conflict' },
  IDEMPOTENCY_KEY_REUSED: { code: 'AM_GW_IDEMPOTENCY_KEY_REUSED', status: 409, error: 'conflict' },
  ORIGIN_REFUSED: { code: 'AM_GW_ORIGIN_REFUSED', status: 403, error: 'forbidden' },
  PAYLOAD_TOO_LARGE: { code: 'AM_GW_PAYLOAD_TOO_LARGE', status: 413, error: 'payload_too_large' },
  URI_TOO_LONG: { code: 'AM_GW_URI_TOO_LONG', status: 414, error: 'invalid_request' },
  UNSUPPORTED_MEDIA_TYPE: { code: 'AM_GW_UNSUPPORTED_MEDIA_TYPE', status: 415, error: 'invalid_request' },
  SESSION_RATE_LIMIT: { code: 'AM_GW_SESSION_RATE_LIMIT', status: 429, error: 'rate_limited' },
  RATE_LIMIT: { code: 'AM_GW_RATE_LIMIT', status: 429, error: 'rate_limited' },
  INTERNAL: { code: 'AM_GW_INTERNAL', status: 500, error: 'internal' },
  RESPONSE_INVALID: { code: 'AM_GW_RESPONSE_INVALID', status: 500, error: 'internal' },
  STORAGE_BUSY: { code: 'AM_GW_STORAGE_BUSY', status: 503, error: 'unavailable' },
} as const satisfies Record<string, { code: `AM_GW_${string}`; status: number; error: string }>;

/** A key of {@link GATEWAY_ERRORS}. */
export type GatewayErrorKind = keyof typeof GATEWAY_ERRORS;

/** A code of the gateway registry. */
export type GatewayErrorCode = (typeof GATEWAY_ERRORS)[GatewayErrorKind]['code'];

/** Extra fields of a {@link GatewayError}: shown to the client beside `error`. */
export interface GatewayErrorFields {
  /** Longer explanation: what was wrong, naming the field or value. */
  detail?: string;
  /** What the client should do instead. */
  suggestion?: string;
  /** Extra wire fields (e.g. `permission_mode` on G-38's 409). */
  extra?: Readonly<Record<string, unknown>>;
  /** Seconds after which a retry may succeed; sent as the `retry-after` header (429). */
  retryAfterSeconds?: number;
  /** The underlying error (logged, never sent). */
  cause?: unknown;
}

/**
 * The one error the Gateway throws for a client-visible failure. The error handler turns it into
 * `{error: <wire name>, detail: <message + detail>, suggestion?, code, ...extra}` with `status`
 * (SPEC G-13).
 *
 * @example throw new GatewayError('UNKNOWN_ALIAS', 'unknown session alias "fix-it" for agent "pi"')
 */
export class GatewayError extends Error {
  /** Stable code, `AM_GW_<WHAT>`. */
  readonly code: GatewayErrorCode;
  /** HTTP status of the answer. */
  readonly status: number;
  /** Wire error name sent as `error` (see protocol `WIRE_ERRORS`). */
  readonly wireError: string;
  /** Longer explanation, sent as `detail`. */
  readonly detail: string | undefined;
  /** Advice, sent as `suggestion`. */
  readonly suggestion: string | undefined;
  /** Extra wire fields. */
  readonly extra: Readonly<Record<string, unknown>>;
  /** Seconds until a retry may succeed (`retry-after` header), when known. */
  readonly retryAfterSeconds: number | undefined;
  constructor(kind: GatewayErrorKind, message: string, fields: GatewayErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'GatewayError';
    this.code = GATEWAY_ERRORS[kind].code;
    this.status = GATEWAY_ERRORS[kind].status;
    this.wireError = GATEWAY_ERRORS[kind].error;
    this.detail = fields.detail;
    this.suggestion = fields.suggestion;
    this.extra = fields.extra ?? {};
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }
}

/** True when `err` is a {@link GatewayError} (checked by shape, so it works across copies). */
export function isGatewayError(err: unknown): err is GatewayError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'string' &&
    (err as { code: string }).code.startsWith('AM_GW_') &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}
