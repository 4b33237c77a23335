/**
 * Error registry of @agentmail/shared-policy. One code per failure mode, `AM_<AREA>_<WHAT>`;
 * every code is listed in docs/errors.md (a test checks the codes are unique and documented).
 * Check errors by `code` (a host may load two copies of this package), not only `instanceof`.
 */
export const ERROR_CODES = {
  // ==== add codes below, one line each: KEY: 'AM_AREA_WHAT' ====
  ALIAS_SESSION_ID_MISSING: 'AM_ALIAS_SESSION_ID_MISSING',
  ALIAS_EXHAUSTED: 'AM_ALIAS_EXHAUSTED',
  RELAY_KEY_INVALID: 'AM_RELAY_KEY_INVALID',
  GATEWAY_HTTP: 'AM_GATEWAY_HTTP',
  GATEWAY_NETWORK: 'AM_GATEWAY_NETWORK',
  GATEWAY_RESPONSE_INVALID: 'AM_GATEWAY_RESPONSE_INVALID',
  GATEWAY_URL_INVALID: 'AM_GATEWAY_URL_INVALID',
  GATEWAY_PATH_RELATIVE: 'AM_GATEWAY_PATH_RELATIVE',
  GATEWAY_PATH_OUTSIDE_ROOT: 'AM_GATEWAY_PATH_OUTSIDE_ROOT',
  GATEWAY_DOWNLOAD_DIR_MISSING: 'AM_GATEWAY_DOWNLOAD_DIR_MISSING',
  GATEWAY_FILE_EXISTS: 'AM_GATEWAY_FILE_EXISTS',
  GATEWAY_FILE_UNREADABLE: 'AM_GATEWAY_FILE_UNREADABLE',
  GATEWAY_UPLOAD_TOO_LARGE: 'AM_GATEWAY_UPLOAD_TOO_LARGE',
  SSE_HTTP: 'AM_SSE_HTTP',
  SSE_CONNECTION: 'AM_SSE_CONNECTION',
  SSE_EVENT_INVALID: 'AM_SSE_EVENT_INVALID',
  SSE_EVENT_UNKNOWN: 'AM_SSE_EVENT_UNKNOWN',
  SSE_HANDLER_FAILED: 'AM_SSE_HANDLER_FAILED',
  TOOL_ARGS_INVALID: 'AM_TOOL_ARGS_INVALID',
  TOOL_CONTEXT_MISSING: 'AM_TOOL_CONTEXT_MISSING',
  QUESTION_UNANSWERED: 'AM_QUESTION_UNANSWERED',
  OPTION_OUT_OF_RANGE: 'AM_OPTION_OUT_OF_RANGE',
  STATE_FILE_RELATIVE: 'AM_STATE_FILE_RELATIVE',
  GRANT_WRITE_FAILED: 'AM_GRANT_WRITE_FAILED',
  SEND_RECORD_WRITE_FAILED: 'AM_SEND_RECORD_WRITE_FAILED',
  QUEUE_CLOSED: 'AM_QUEUE_CLOSED',
  MODEL_KEY_INVALID: 'AM_MODEL_KEY_INVALID',
  WORKSPACE_ROOT_RELATIVE: 'AM_WORKSPACE_ROOT_RELATIVE',
  WORKSPACE_FALLBACK_FAILED: 'AM_WORKSPACE_FALLBACK_FAILED',
  BRIDGE_CONFIG_INVALID: 'AM_BRIDGE_CONFIG_INVALID',
  BRIDGE_LOCK_FAILED: 'AM_BRIDGE_LOCK_FAILED',
  RPC_ENV_MISSING: 'AM_RPC_ENV_MISSING',
  RPC_TOKEN_INVALID: 'AM_RPC_TOKEN_INVALID',
  RPC_BRIDGE_UNREACHABLE: 'AM_RPC_BRIDGE_UNREACHABLE',
  RPC_REQUEST_INVALID: 'AM_RPC_REQUEST_INVALID',
  RPC_PARAMS_INVALID: 'AM_RPC_PARAMS_INVALID',
  RPC_HANDLER_FAILED: 'AM_RPC_HANDLER_FAILED',
  RPC_SERVER_CLOSED: 'AM_RPC_SERVER_CLOSED',
  RPC_TIMEOUT: 'AM_RPC_TIMEOUT',
  RPC_ABORTED: 'AM_RPC_ABORTED',
  RPC_SOCKET_PATH_TOO_LONG: 'AM_RPC_SOCKET_PATH_TOO_LONG',
  RPC_SOCKET_IN_USE: 'AM_RPC_SOCKET_IN_USE',
  RPC_SOCKET_DIR_INVALID: 'AM_RPC_SOCKET_DIR_INVALID',
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

/**
 * The message of a thrown value: an `Error`'s `message`, anything else as `String(value)` (a
 * host or library may throw a string or a plain object). Pure; never throws.
 * @example messageOf(new Error('boom')) // 'boom'
 */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
