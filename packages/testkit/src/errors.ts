/**
 * Error registry of @agentmail/testkit. The test kit is a devDependency only, so its codes are
 * listed in the package README (section Errors) and in docs/errors.md.
 */
export const TESTKIT_ERROR_CODES = {
  WAIT_TIMEOUT: 'AM_TESTKIT_WAIT_TIMEOUT',
  SERVER_CLOSED: 'AM_TESTKIT_SERVER_CLOSED',
  SCENARIO_INVALID: 'AM_TESTKIT_SCENARIO_INVALID',
  CLI_USAGE: 'AM_TESTKIT_CLI_USAGE',
  GATEWAY_BUILD: 'AM_TESTKIT_GATEWAY_BUILD',
  PROCESS_START: 'AM_TESTKIT_PROCESS_START',
  API: 'AM_TESTKIT_API',
  STACK_CLOSED: 'AM_TESTKIT_STACK_CLOSED',
  HOST_SHARED: 'AM_TESTKIT_HOST_SHARED',
} as const satisfies Record<string, `AM_TESTKIT_${string}`>;

/** A code of {@link TESTKIT_ERROR_CODES}. */
export type TestkitErrorCode = (typeof TESTKIT_ERROR_CODES)[keyof typeof TESTKIT_ERROR_CODES];

/**
 * The one error class of the test kit. `code` is stable; `message` names what was awaited or
 * which field is bad, and the fix. Check by `code`, not only `instanceof`.
 */
export class TestkitError extends Error {
  readonly code: TestkitErrorCode;
  constructor(code: TestkitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TestkitError';
    this.code = code;
  }
}
