/**
 * The errors of every Gateway HTTP client (SPEC G-13) and the one parser of error bodies.
 * Browser-safe: no Node built-in, no undici (see api-client.ts for why the core is fetch-based).
 */
import { ErrorBody, isTransientStatus } from '@agentmail/protocol';
import { AgentMailError, ERROR_CODES, hasErrorCode } from '../errors.js';

/** Longest part of a non-JSON error page kept as `detail`, in characters. @default 500 */
export const ERROR_DETAIL_MAX_CHARS = 500;

/** "detail; suggestion": a detail without its own closing punctuation gets a ";" before the advice. */
function detailAndSuggestion(detail: string | undefined, suggestion: string | undefined): string {
  const d = detail?.trim() ?? '';
  const s = suggestion?.trim() ?? '';
  if (d === '' || s === '') return d || s;
  return `${d}${/[.!?;:]$/.test(d) ? '' : ';'} ${s}`;
}

/**
 * An HTTP answer outside 2xx (see SPEC G-13). `status` decides retry vs give up
 * ({@link isTransient}); `body` is the parsed error body (a non-JSON body becomes
 * `{ error: 'http_<status>', detail: <text> }`). Code `AM_GATEWAY_HTTP`.
 */
export class GatewayHttpError extends AgentMailError {
  declare readonly code: typeof ERROR_CODES.GATEWAY_HTTP;
  declare readonly status: number;
  readonly body: ErrorBody;
  readonly method: string;
  /** The path asked for, parameters filled, without the query. */
  readonly path: string;
  constructor(method: string, path: string, status: number, body: ErrorBody) {
    const words = detailAndSuggestion(body.detail, body.suggestion);
    super(
      ERROR_CODES.GATEWAY_HTTP,
      `${method} ${path} failed with HTTP ${status} ${body.error}${words ? `: ${words}` : ''}`,
      { status },
    );
    this.name = 'GatewayHttpError';
    this.body = body;
    this.method = method;
    this.path = path;
  }
}

/**
 * The Gateway could not be reached or the call timed out: no status, always transient (see
 * SPEC G-13). Code `AM_GATEWAY_NETWORK`; `cause` is the underlying error (for a fetch failure,
 * its cause: `connect ECONNREFUSED …`, a `TimeoutError`, a reset).
 */
export class GatewayNetworkError extends AgentMailError {
  declare readonly code: typeof ERROR_CODES.GATEWAY_NETWORK;
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(ERROR_CODES.GATEWAY_NETWORK, `${method} ${path} did not get an answer (${why}); retry later`, {
      cause,
    });
    this.name = 'GatewayNetworkError';
    this.method = method;
    this.path = path;
  }
}

/** Why a 2xx answer was refused: not JSON at all, or JSON that breaks the endpoint's response schema. */
export type ResponseProblem =
  | { reason: 'not_json' }
  | {
      reason: 'schema';
      /** Dotted path of the first field at fault (`mails.0.id`), '' for the body itself. */
      field: string;
      /** What is wrong with it (the schema's message). */
      issue: string;
    };

/**
 * A 2xx answer that is not JSON or does not match the endpoint's response schema (the client
 * and the Gateway speak different versions, or the URL is not a Gateway). Carries the answer's
 * `status` (so {@link isPermanent} holds) and what was wrong. Code `AM_GATEWAY_RESPONSE_INVALID`.
 */
export class GatewayResponseError extends AgentMailError {
  declare readonly code: typeof ERROR_CODES.GATEWAY_RESPONSE_INVALID;
  declare readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly problem: ResponseProblem;
  constructor(method: string, path: string, status: number, problem: ResponseProblem, cause?: unknown) {
    super(
      ERROR_CODES.GATEWAY_RESPONSE_INVALID,
      problem.reason === 'not_json'
        ? `${method} ${path} answered ${status} with a body that is not JSON; check that the URL points at an AgentMail Gateway`
        : `${method} ${path} answered ${status} with a body that breaks the contract at "${problem.field || 'body'}" (${problem.issue}); update the bridge or the Gateway so their versions match`,
      { status, cause },
    );
    this.name = 'GatewayResponseError';
    this.method = method;
    this.path = path;
    this.problem = problem;
  }
}

/** Every error a Gateway call itself raises, discriminated by `code` (the caller's own abort is rethrown as it is). */
export type GatewayCallError = GatewayHttpError | GatewayNetworkError | GatewayResponseError;

/**
 * Parse the body of an error answer (SPEC G-13) into `{error, detail?, suggestion?, …}`; a
 * body that is not JSON or has no `error` (a proxy's HTML page) becomes `http_<status>` with the
 * start of its text (≤{@link ERROR_DETAIL_MAX_CHARS}) as `detail`. Never throws.
 * @example parseErrorBody(502, '<h1>Bad Gateway</h1>') // { error: 'http_502', detail: '<h1>Bad Gateway</h1>' }
 */
export function parseErrorBody(status: number, text: string): ErrorBody {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: keep the start of the text as detail
  }
  const detail = text.trim().slice(0, ERROR_DETAIL_MAX_CHARS);
  return detail ? { error: `http_${status}`, detail } : { error: `http_${status}` };
}

function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' && Number.isFinite(status) ? status : undefined;
}

/**
 * True when the failed call may succeed later: a network error or timeout (no status), or a
 * 5xx, 408 or 429 status — decided from the status alone (see SPEC G-13). Checks `code` and
 * `status`, not `instanceof`, so it works across duplicate package copies.
 */
export function isTransient(err: unknown): boolean {
  if (hasErrorCode(err, ERROR_CODES.GATEWAY_NETWORK)) return true;
  const status = statusOf(err);
  return status !== undefined && isTransientStatus(status);
}

/**
 * True when the call will never succeed as sent: it has an HTTP status that is not transient
 * (every other 4xx; also a 2xx whose body broke the contract). Network errors and errors
 * without a status are not permanent (see SPEC G-13).
 */
export function isPermanent(err: unknown): boolean {
  if (hasErrorCode(err, ERROR_CODES.GATEWAY_NETWORK)) return false;
  const status = statusOf(err);
  return status !== undefined && !isTransientStatus(status);
}
