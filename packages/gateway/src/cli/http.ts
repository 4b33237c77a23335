/**
 * How the `agentmail` CLI talks to the Gateway: the shared typed client of shared-policy
 * (`PersonApi` over `ApiClient`, on undici), with the CLI's error codes and wording mapped onto its
 * errors in one place ({@link cliErrorOf}).
 */
import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import type { UploadAttachmentResponse } from '@agentmail/protocol';
import {
  ApiClient,
  type ApiRequestInfo,
  type GatewayCallError,
  PersonApi,
  type UploadFile,
  undiciTransport,
} from '@agentmail/shared-policy/client';
import type { Dispatcher } from 'undici';
import { CliError } from './errors.js';

/** Time a CLI request may take, headers and body together (uploads too), in ms. @default 30_000 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Where and as whom the CLI talks to the Gateway. */
export interface HumanApiOptions {
  /** Gateway base URL without the API prefix, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** User token (`Authorization: Bearer …`); admin routes need an admin user's token. */
  token?: string | undefined;
  /** Per-request timeout in ms. @default REQUEST_TIMEOUT_MS */
  timeoutMs?: number;
  /** undici dispatcher (tests, proxies). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
}

function describeNetworkError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = (err as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code;
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/**
 * The CLI's error for a failed Gateway call (see docs/errors.md):
 * - no answer → `AM_CLI_UNREACHABLE` naming the URL and the cause;
 * - a non-2xx answer → `AM_CLI_SERVER_REFUSED` with `status` and the parsed `body` (SPEC G-13);
 * - a 2xx answer that is not JSON or has another shape → `AM_CLI_BAD_RESPONSE` with `status`.
 */
export function cliErrorOf(error: GatewayCallError, request: ApiRequestInfo, baseUrl: string): CliError {
  const what = `${request.method} ${request.path}`;
  if (error.code === 'AM_GATEWAY_NETWORK')
    return new CliError(
      'UNREACHABLE',
      `cannot reach the Gateway at ${baseUrl} (${describeNetworkError(error.cause)})`,
      {
        suggestion: 'start it with `agentmail serve`, or point --url / AGENTMAIL_GATEWAY_URL at it',
        cause: error.cause,
      },
    );
  if (error.code === 'AM_GATEWAY_HTTP')
    return new CliError('SERVER_REFUSED', `${what} answered ${error.status} ${error.body.error}`, {
      status: error.status,
      body: error.body,
    });
  const problem = error.problem;
  if (problem.reason === 'not_json')
    return new CliError('BAD_RESPONSE', `${what} answered ${error.status} with invalid JSON`, {
      status: error.status,
      cause: error.cause,
    });
  const where = problem.field === '' ? 'the body' : `field "${problem.field}"`;
  return new CliError(
    'BAD_RESPONSE',
    `${what} answered ${error.status} with an unexpected shape: ${where}: ${problem.issue}`,
    {
      status: error.status,
      suggestion: 'the CLI and the Gateway versions may differ; upgrade both',
    },
  );
}

/** `AM_CLI_NO_TOKEN` before a call that needs a user token when none is configured. */
function requireToken(request: ApiRequestInfo): void {
  if (request.auth === 'none' || request.hasToken) return;
  throw new CliError(
    'NO_TOKEN',
    `${request.method} ${request.path} needs a user token and none is configured`,
    {
      suggestion: 'pass --token, set AGENTMAIL_TOKEN, or run `agentmail login --url <url> --token <token>`',
    },
  );
}

function cliClient(options: HumanApiOptions): ApiClient {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  try {
    return new ApiClient({
      transport: undiciTransport,
      baseUrl: options.baseUrl,
      token: options.token,
      timeoutMs,
      transferTimeoutMs: timeoutMs,
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
      hooks: {
        beforeRequest: requireToken,
        beforeError: (error, request) => cliErrorOf(error, request, options.baseUrl),
      },
    });
  } catch (err) {
    throw new CliError('CONFIG_INVALID', err instanceof Error ? err.message : String(err), {
      suggestion: 'fix --url / AGENTMAIL_GATEWAY_URL, or rewrite the config with `agentmail login`',
      cause: err,
    });
  }
}

/**
 * An attachment file of `send --attach`, opened for a streamed upload (relative paths are the
 * CLI's working directory's).
 * @throws CliError `AM_CLI_FILE_UNREADABLE` when the file cannot be opened.
 */
export async function readAttachment(filePath: string): Promise<UploadFile> {
  try {
    return { blob: await openAsBlob(filePath), filename: basename(filePath) };
  } catch (err) {
    throw new CliError('FILE_UNREADABLE', `cannot read attachment "${filePath}": ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * The person/admin API of shared-policy with the CLI's errors: every method throws
 * `AM_CLI_NO_TOKEN` (a route that needs a token, none configured), `AM_CLI_UNREACHABLE`,
 * `AM_CLI_SERVER_REFUSED` (with `status` and `body`, SPEC G-13) or `AM_CLI_BAD_RESPONSE`.
 *
 * @throws CliError `AM_CLI_CONFIG_INVALID` (constructor) when the URL is not http(s).
 * @example
 * const api = new HumanApi({ baseUrl: 'http://127.0.0.1:8787', token });
 * const { mails } = await api.inbox({ status: 'unread', limit: 10 });
 */
export class HumanApi extends PersonApi {
  /** Where and as whom this client talks (as given). */
  readonly options: HumanApiOptions;
  constructor(options: HumanApiOptions) {
    super(cliClient(options));
    this.options = options;
  }

  /**
   * `POST /me/attachments` of a file on disk, streamed.
   * @throws CliError `AM_CLI_FILE_UNREADABLE` when the file cannot be opened; and the errors above.
   */
  async uploadFile(filePath: string): Promise<UploadAttachmentResponse> {
    const { blob, filename } = await readAttachment(filePath);
    return this.upload(blob, filename);
  }
}
