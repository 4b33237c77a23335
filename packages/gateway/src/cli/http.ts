/**
 * How the `agentmail` CLI talks to the Gateway: the shared typed client of shared-policy
 * (`PersonApi` over `ApiClient`, on undici), with the CLI's error codes and wording mapped onto its
 * errors in one place ({@link cliErrorOf}).
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ATTACHMENT_MAX_BYTES, type ErrorBody, type UploadAttachmentResponse } from '@agentmail/protocol';
import {
  ApiClient,
  type ApiRequestInfo,
  fileUpload,
  type GatewayCallError,
  PersonApi,
  type UploadFile,
  undiciTransport,
} from '@agentmail/shared-policy/client';
import mime from 'mime';
import type { Dispatcher } from 'undici';
import { CLI_ERRORS, CliError, type CliErrorKind, isCliError } from './errors.js';
import { fileErrorWords } from './file-errors.js';
import { personWords } from './person-errors.js';

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
  /**
   * Where the URL and the token came from (a flag, an environment variable, the config file), so a
   * connection or token error names the Gateway it tried and why that one (issue 20).
   */
  from?: ConnectionSource;
}

/** Where a {@link HumanApi}'s URL and token came from, in words (see `resolveConfig`). */
export interface ConnectionSource {
  /** e.g. `--url`, `AGENTMAIL_GATEWAY_URL`, `the config file /home/me/.config/agentmail/config.json`. */
  urlFrom: string;
  /** The same for the token; undefined without one. */
  tokenFrom?: string | undefined;
  /** The config file consulted (named when no token was found). */
  configPath?: string;
  /** The config file exists; `false`: the words say it does not, and how to create it. */
  configExists?: boolean;
}

/**
 * `error` with the Gateway's URL and where it came from added to its detail, for the errors that
 * depend on which Gateway was asked and with which token: no answer, not a Gateway, a refused
 * token, an admin command with a person's token, a request the server does not know.
 */
export function withConnectionSource(
  error: CliError,
  baseUrl: string,
  from: ConnectionSource | undefined,
  request?: ApiRequestInfo,
): CliError {
  if (from === undefined) return error;
  const body = error.body as { code?: unknown; needs?: unknown } | undefined;
  const code = body?.code;
  // A refusal of the token itself, or of whose token it is (an agent key, a person's on an admin
  // command); not a refusal of what the request asks (a mode only the owner may change).
  const tokenError =
    code === 'AM_GW_UNAUTHENTICATED' ||
    (code === 'AM_GW_FORBIDDEN' && (body?.needs === 'user_token' || request?.auth === 'admin')) ||
    error.code === 'AM_CLI_NO_TOKEN';
  const urlError =
    tokenError ||
    error.code === 'AM_CLI_UNREACHABLE' ||
    error.code === 'AM_CLI_NOT_A_GATEWAY' ||
    error.code === 'AM_CLI_BAD_RESPONSE' ||
    (code === 'AM_GW_NOT_FOUND' && /^no route /.test(error.body?.detail ?? ''));
  if (!urlError) return error;
  const lines = [`Gateway ${baseUrl}, the URL from ${from.urlFrom}`];
  if (tokenError)
    lines.push(
      from.tokenFrom === undefined
        ? from.configPath !== undefined && from.configExists === false
          ? `no token in --token or AGENTMAIL_TOKEN, and the config file ${from.configPath} does not exist`
          : `no token in --token, AGENTMAIL_TOKEN${from.configPath === undefined ? '' : ` or ${from.configPath}`}`
        : `the token from ${from.tokenFrom}`,
    );
  return new CliError(kindOf(error.code), error.message, {
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.body === undefined ? {} : { body: error.body }),
    detail: [...(error.detail === undefined ? [] : [error.detail]), ...lines].join('\n'),
    ...(error.suggestion === undefined ? {} : { suggestion: error.suggestion }),
    extra: {
      ...error.extra,
      gateway_url: baseUrl,
      url_from: from.urlFrom,
      ...(tokenError ? { token_from: from.tokenFrom ?? null } : {}),
    },
    cause: error.cause ?? error,
  });
}

/** The registry key of a CLI error code. */
function kindOf(code: CliError['code']): CliErrorKind {
  return (
    (Object.keys(CLI_ERRORS) as CliErrorKind[]).find((k) => CLI_ERRORS[k].code === code) ?? 'SERVER_REFUSED'
  );
}

/** The chain of causes of an error (the error itself first), at most 6 deep. */
function causeChain(
  err: unknown,
): Array<{ code: string; message: string; syscall: string; path: string; name: string }> {
  const out = [];
  let e: unknown = err;
  for (let i = 0; i < 6 && typeof e === 'object' && e !== null; i++) {
    const x = e as {
      code?: unknown;
      message?: unknown;
      syscall?: unknown;
      path?: unknown;
      name?: unknown;
      cause?: unknown;
    };
    const text = (v: unknown): string => (typeof v === 'string' ? v : '');
    out.push({
      code: text(x.code),
      message: text(x.message),
      syscall: text(x.syscall),
      path: text(x.path),
      name: text(x.name),
    });
    e = x.cause;
  }
  return out;
}

/** Errors of reading a local file: a local problem, never "cannot reach the Gateway" (item of issue 10). */
const LOCAL_FILE_CODES = new Set(['EISDIR', 'ENOENT', 'EACCES', 'EPERM', 'ENOTDIR', 'ELOOP', 'EMFILE']);

/** Where the URL came from, for the words of a fix. */
const URL_FIX = '--url, AGENTMAIL_GATEWAY_URL, or `agentmail login --url <url> --token <token>`';

/**
 * The CLI's error for a call that got no answer: what was tried, why it failed in words (a TLS
 * mismatch, nothing listening, an unknown host, a timeout), and what to do.
 */
function unreachable(error: GatewayCallError, baseUrl: string): CliError {
  const chain = causeChain(error.cause);
  const has = (...codes: string[]) => chain.some((c) => codes.includes(c.code));
  const local = chain.find((c) => LOCAL_FILE_CODES.has(c.code) && c.path !== '');
  if (local)
    return new CliError('FILE_UNREADABLE', `cannot read ${JSON.stringify(local.path)}: ${local.code}`, {
      suggestion: 'check the path: it must be a readable file',
      cause: error.cause,
    });
  const url = new URL(baseUrl);
  const plainUrl = `http://${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  if (
    url.protocol === 'https:' &&
    chain.some(
      (c) => /^ERR_SSL|^EPROTO$/.test(c.code) || /wrong version number|SSL routines/i.test(c.message),
    )
  )
    return new CliError('UNREACHABLE', `the server at ${baseUrl} does not speak TLS (https)`, {
      detail: 'the Gateway serves plain HTTP; put TLS in front of it with a reverse proxy if you need it',
      suggestion: `use ${plainUrl} (${URL_FIX})`,
      cause: error.cause,
    });
  if (has('ECONNREFUSED'))
    return new CliError('UNREACHABLE', `nothing is listening at ${baseUrl}`, {
      suggestion: `start the Gateway (agentmail serve; pnpm serve in a checkout), or point at it with ${URL_FIX}`,
      cause: error.cause,
    });
  if (has('ENOTFOUND', 'EAI_AGAIN'))
    return new CliError('UNREACHABLE', `the host ${url.hostname} of ${baseUrl} is not known`, {
      suggestion: `check the host name in ${URL_FIX}`,
      cause: error.cause,
    });
  if (chain.some((c) => c.name === 'TimeoutError' || c.name === 'AbortError' || /timeout/i.test(c.code)))
    return new CliError('UNREACHABLE', `the server at ${baseUrl} did not answer in time`, {
      suggestion: 'check that the Gateway runs and that nothing blocks the way to it, then try again',
      cause: error.cause,
    });
  if (url.protocol === 'http:' && has('ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'))
    return new CliError('UNREACHABLE', `the server at ${baseUrl} closed the connection without an answer`, {
      detail: 'a server that speaks https does that to plain http; the Gateway answers http',
      suggestion: `check ${URL_FIX}: is it the Gateway's URL (printed by agentmail serve)?`,
      cause: error.cause,
    });
  const first = chain.find((c) => c.message !== '')?.message.split('\n')[0] ?? 'no answer';
  return new CliError('UNREACHABLE', `cannot reach the Gateway at ${baseUrl} (${first})`, {
    suggestion: `start it with \`agentmail serve\`, or point at it with ${URL_FIX}`,
    cause: error.cause,
  });
}

/** The answer came from a server that is not an AgentMail Gateway (every Gateway error carries an `AM_GW_` code). */
function notAGateway(baseUrl: string, status: number, what: string): CliError {
  return new CliError('NOT_A_GATEWAY', `the server at ${baseUrl} is not an AgentMail Gateway`, {
    detail: `it answered ${status} with ${what}`,
    suggestion: `check ${URL_FIX}; the Gateway prints its URL when it starts ("AgentMail Gateway listening on …")`,
    status,
  });
}

function isGatewayBody(body: ErrorBody): boolean {
  const code = (body as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('AM_GW_');
}

/**
 * The CLI's error for a failed Gateway call (see docs/errors.md), in a person's words (SPEC H-2):
 * - no answer → `AM_CLI_UNREACHABLE` saying what was tried and why it failed (https against the
 *   plain-HTTP Gateway, nothing listening, unknown host, timeout); a local file that could not be
 *   read while uploading → `AM_CLI_FILE_UNREADABLE`;
 * - an answer from a server that is not a Gateway (an HTML page, JSON without an `AM_GW_` code) →
 *   `AM_CLI_NOT_A_GATEWAY`, never the page itself;
 * - a Gateway refusal → `AM_CLI_SERVER_REFUSED` with `status`, the parsed `body` (SPEC G-13) and
 *   the {@link personWords} of it;
 * - a 2xx answer of another shape → `AM_CLI_BAD_RESPONSE` with `status`.
 */
export function cliErrorOf(error: GatewayCallError, request: ApiRequestInfo, baseUrl: string): CliError {
  if (error.code === 'AM_GATEWAY_NETWORK') return unreachable(error, baseUrl);
  if (error.code === 'AM_GATEWAY_HTTP') {
    if (!isGatewayBody(error.body)) {
      const text = error.body.detail ?? '';
      const what = /^\s*</.test(text)
        ? 'an HTML page'
        : text === ''
          ? 'an empty body'
          : "something that is not the Gateway's JSON";
      return notAGateway(baseUrl, error.status, what);
    }
    const words = personWords(request, error.body);
    return new CliError('SERVER_REFUSED', words.message, {
      status: error.status,
      body: error.body,
      ...(words.detail === undefined ? {} : { detail: words.detail }),
      ...(words.suggestion === undefined ? {} : { suggestion: words.suggestion }),
    });
  }
  const problem = error.problem;
  if (problem.reason === 'not_json') return notAGateway(baseUrl, error.status, 'a page that is not JSON');
  const where = problem.field === '' ? 'the body' : `field "${problem.field}"`;
  return new CliError(
    'BAD_RESPONSE',
    `the Gateway at ${baseUrl} answered in an unexpected shape: ${where}: ${problem.issue}`,
    {
      status: error.status,
      suggestion: 'the CLI and the Gateway versions may differ; upgrade both',
    },
  );
}

/** `AM_CLI_NO_TOKEN` before a call that needs a user token when none is configured. */
function requireToken(request: ApiRequestInfo): void {
  if (request.auth === 'none' || request.hasToken) return;
  throw new CliError('NO_TOKEN', 'this command needs your user token, and none is configured', {
    suggestion:
      'log in once: agentmail login --url <url> --token <token> (or pass --token, or set AGENTMAIL_TOKEN)',
  });
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
        beforeRequest: (request) => {
          try {
            requireToken(request);
          } catch (err) {
            throw isCliError(err) ? withConnectionSource(err, options.baseUrl, options.from, request) : err;
          }
        },
        beforeError: (error, request) =>
          withConnectionSource(
            cliErrorOf(error, request, options.baseUrl),
            options.baseUrl,
            options.from,
            request,
          ),
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
 * Check every `send --attach` file before anything is uploaded (so a bad second file leaves no
 * orphan upload of the first) and open each for a streamed upload, with its content type from
 * the file name (`text/plain` for notes.txt; `application/octet-stream` when unknown). Relative
 * paths are the CLI's working directory's.
 * @throws CliError `AM_CLI_FILE_UNREADABLE` naming the file and the cause (missing, a directory,
 *   not readable, over the attachment limit) — the first bad one, before any upload.
 */
export async function attachmentFiles(
  paths: readonly string[],
  cwd: string = process.cwd(),
): Promise<UploadFile[]> {
  const files: UploadFile[] = [];
  for (const path of paths) {
    const absolute = resolve(cwd, path);
    try {
      const info = await stat(absolute);
      if (info.isDirectory())
        throw new CliError('FILE_UNREADABLE', `--attach ${JSON.stringify(path)} is a directory, not a file`, {
          suggestion: 'attach the files in it one by one, or an archive of it (tar -czf dir.tgz dir)',
        });
      // A device, a pipe or a socket has no size to announce (and /dev/zero never ends).
      if (!info.isFile())
        throw new CliError('FILE_UNREADABLE', `cannot attach ${JSON.stringify(path)}: not a regular file`, {
          suggestion:
            'save what it gives to a file first, and attach that file; nothing was uploaded or sent',
        });
      await access(absolute, constants.R_OK);
      files.push(
        await fileUpload(absolute, { contentType: mime.getType(absolute) ?? 'application/octet-stream' }),
      );
    } catch (err) {
      if (isCliError(err)) throw err;
      const why =
        (err as { code?: unknown }).code === 'AM_GATEWAY_UPLOAD_TOO_LARGE'
          ? `larger than the attachment limit of ${ATTACHMENT_MAX_BYTES} bytes (25 MB)`
          : fileErrorWords(err);
      throw new CliError('FILE_UNREADABLE', `cannot attach ${JSON.stringify(path)}: ${why}`, {
        suggestion: 'check the path; nothing was uploaded or sent',
        cause: err,
      });
    }
  }
  return files;
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

  /** `POST /me/attachments` of a file checked by {@link attachmentFiles}, streamed; the errors above. */
  uploadFile(file: UploadFile): Promise<UploadAttachmentResponse> {
    return this.upload(file.blob, file.filename);
  }
}
