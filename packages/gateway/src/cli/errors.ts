import type { ErrorBody } from '@agentmail/protocol';

/**
 * Error registry of the `agentmail` CLI: one code per failure mode, `AM_CLI_<WHAT>`, each with
 * the process exit code it ends in. Exit 2 is a usage error (fix the command line), exit 1 a
 * refusal or failure (the server said no, could not be reached, or answered nonsense). Every
 * code is listed in docs/errors.md.
 */
export const CLI_ERRORS = {
  // ==== cli codes, one line each: KEY: { code, exit } ====
  USAGE: { code: 'AM_CLI_USAGE', exit: 2 },
  NO_TOKEN: { code: 'AM_CLI_NO_TOKEN', exit: 2 },
  CONFIG_INVALID: { code: 'AM_CLI_CONFIG_INVALID', exit: 2 },
  FILE_UNREADABLE: { code: 'AM_CLI_FILE_UNREADABLE', exit: 2 },
  FILE_EXISTS: { code: 'AM_CLI_FILE_EXISTS', exit: 2 },
  BODY_TOO_LARGE: { code: 'AM_CLI_BODY_TOO_LARGE', exit: 2 },
  NOT_UTF8: { code: 'AM_CLI_NOT_UTF8', exit: 2 },
  DATA_DIR_INVALID: { code: 'AM_CLI_DATA_DIR_INVALID', exit: 2 },
  SERVER_REFUSED: { code: 'AM_CLI_SERVER_REFUSED', exit: 1 },
  UNREACHABLE: { code: 'AM_CLI_UNREACHABLE', exit: 1 },
  NOT_A_GATEWAY: { code: 'AM_CLI_NOT_A_GATEWAY', exit: 1 },
  BAD_RESPONSE: { code: 'AM_CLI_BAD_RESPONSE', exit: 1 },
  SERVE_FAILED: { code: 'AM_CLI_SERVE_FAILED', exit: 1 },
  SERVICE_FILE_CHANGED: { code: 'AM_CLI_SERVICE_FILE_CHANGED', exit: 2 },
  SERVICE_SETUP_FAILED: { code: 'AM_CLI_SERVICE_SETUP_FAILED', exit: 1 },
  REPORTS_SPOOLED: { code: 'AM_CLI_REPORTS_SPOOLED', exit: 1 },
  DOCTOR_FAILED: { code: 'AM_CLI_DOCTOR_FAILED', exit: 1 },
  AGENT_KEY_ACTIVE: { code: 'AM_CLI_AGENT_KEY_ACTIVE', exit: 1 },
  WAIT_TIMEOUT: { code: 'AM_CLI_WAIT_TIMEOUT', exit: 1 },
  ANSWER_FAILED: { code: 'AM_CLI_ANSWER_FAILED', exit: 1 },
} as const satisfies Record<string, { code: `AM_CLI_${string}`; exit: 1 | 2 }>;

/** A key of {@link CLI_ERRORS}. */
export type CliErrorKind = keyof typeof CLI_ERRORS;

/** A code of the CLI registry. */
export type CliErrorCode = (typeof CLI_ERRORS)[CliErrorKind]['code'];

/** Extra fields of a {@link CliError}. */
export interface CliErrorFields {
  /** HTTP status of the server's answer (see SPEC G-13). */
  status?: number;
  /** The server's parsed error body `{error, detail?, suggestion?, …}` (see SPEC G-13). */
  body?: ErrorBody;
  /** More about what went wrong, printed under the message. */
  detail?: string;
  /** What to do about it, printed under the message (a CLI command where there is one, SPEC H-2). */
  suggestion?: string;
  /** Facts for scripts, added to the `--json` error object (e.g. the ids of the keys in the way). */
  extra?: Readonly<Record<string, unknown>>;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The one error class of the CLI. `code` is stable; `message` names the flag, file or request at
 * fault; `exitCode` is what the process ends with. A server refusal carries `status` and the
 * parsed `body` (see SPEC G-13).
 *
 * @example throw new CliError('USAGE', 'option "--subject" is required')
 */
export class CliError extends Error {
  /** Stable code, `AM_CLI_<WHAT>`. */
  readonly code: CliErrorCode;
  /** Process exit code: 2 usage, 1 refusal/failure. */
  readonly exitCode: 1 | 2;
  /** HTTP status, for errors that came from an answer. */
  readonly status: number | undefined;
  /** Parsed server error body, for errors that came from an answer. */
  readonly body: ErrorBody | undefined;
  /** More about the failure, printed under the message. */
  readonly detail: string | undefined;
  /** Advice printed under the message. */
  readonly suggestion: string | undefined;
  /** Facts for scripts, in the `--json` error object only. */
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  constructor(kind: CliErrorKind, message: string, fields: CliErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'CliError';
    this.code = CLI_ERRORS[kind].code;
    this.exitCode = CLI_ERRORS[kind].exit;
    this.status = fields.status;
    this.body = fields.body;
    this.detail = fields.detail;
    this.suggestion = fields.suggestion;
    this.extra = fields.extra;
  }
}

/** True when `err` is a {@link CliError} (checked by shape, so it works across copies). */
export function isCliError(err: unknown): err is CliError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'string' &&
    (err as { code: string }).code.startsWith('AM_CLI_') &&
    typeof (err as { exitCode?: unknown }).exitCode === 'number'
  );
}
