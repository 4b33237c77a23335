/**
 * The client of the turn RPC, for the tool and hook processes a host starts (an MCP server, one
 * hook process per tool call; SPEC B-21). Imports only `node:net` and the small wire module: it
 * is bundled into hook scripts, and a hook's startup is on the path of every tool call.
 *
 * @module
 */
import { createConnection } from 'node:net';
import type { Locale, QuestionAnswers } from '@agentmail/shared-policy';
import { type ErrorCode, hasErrorCode, messageOf } from '@agentmail/shared-policy';
import type {
  AskQuestionParams,
  CallToolInput,
  CallToolResult,
  PermissionAnswer,
  PermissionQuery,
  RecordSendParams,
  TurnContextView,
} from './schemas.js';
import {
  encodeLine,
  isKnownErrorCode,
  type RpcDenialKind,
  readLines,
  rpcDenialText,
  TURN_RPC_SOCKET_ENV,
  TURN_RPC_TOKEN_ENV,
  TurnRpcError,
  type TurnRpcMethod,
} from './wire.js';

// A hook process words its own fail-closed denials (bad input from the host) with the same texts.
export { type RpcDenialKind, rpcDenialText };

/**
 * Default time `context`, `callTool` and `recordSend` may take, in ms. Generous: `callTool` may
 * upload or download an attachment through the bridge. `decidePermission` and `askQuestion`
 * wait for a person and have no default limit: the caller passes its own deadline.
 * @default 120_000
 */
export const TURN_RPC_CALL_TIMEOUT_MS = 120_000;

// setTimeout's largest delay; a larger one would fire at once.
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Options of {@link TurnRpcClient}. */
export interface TurnRpcClientOptions {
  /** Absolute path of the bridge's socket (`AGENTMAIL_BRIDGE_SOCKET`). */
  socketPath: string;
  /** The turn's token (`AGENTMAIL_TURN_TOKEN`). */
  token: string;
  /** Limit of `context`, `callTool` and `recordSend`, in ms. @default {@link TURN_RPC_CALL_TIMEOUT_MS} */
  timeoutMs?: number;
  /** Locale of the denial texts the client writes itself (bridge unreachable, timeout). @default 'en' */
  locale?: Locale;
}

/** Options of one call. */
export interface TurnRpcCallOptions {
  /**
   * Give up after this many ms. `decidePermission` then denies; other methods throw
   * `AM_RPC_TIMEOUT`. Closing the connection tells the bridge the caller gave up.
   */
  timeoutMs?: number;
  /** Give up when aborted: `decidePermission` denies; other methods throw `AM_RPC_ABORTED`. */
  signal?: AbortSignal;
}

/**
 * Calls the bridge that runs the current turn, over its Unix socket, with the turn's token.
 *
 * Fails closed (SPEC B-21, P-5): when the bridge is gone — socket missing, connection refused,
 * connection dropped mid-call, malformed answer — {@link TurnRpcClient.decidePermission}
 * resolves to a denial that says so (it never throws and never allows), and every other method
 * throws a {@link TurnRpcError} with code `AM_RPC_BRIDGE_UNREACHABLE`.
 *
 * Each call opens its own connection: a hook makes one call, and an MCP server's parallel calls
 * then never wait behind each other; closing the connection is how a call is cancelled.
 *
 * Security: the token lets its holder do only what the turn itself may do (read its context, run
 * the mail tools with the bridge's Gateway client, ask a person, record a send) and only while
 * the turn runs. It grants no approval: only a person decides a permission. The agent key never
 * crosses the socket; the bridge uses it on the caller's behalf.
 *
 * @example
 * const rpc = TurnRpcClient.fromEnv(process.env);
 * const decision = await rpc.decidePermission(
 *   { toolName: 'Bash', input, toolCallId, platformSessionId, cwd },
 *   { timeoutMs: hookTimeoutMs - 2_000 },
 * );
 */
export class TurnRpcClient {
  /** The bridge's socket path. */
  readonly socketPath: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #locale: Locale;

  /**
   * @throws TurnRpcError `AM_RPC_ENV_MISSING` when `socketPath` is not absolute or `token` is empty;
   *   `AM_OPTION_OUT_OF_RANGE` when `timeoutMs` is not a positive number of ms.
   */
  constructor(options: TurnRpcClientOptions) {
    if (!options.socketPath.startsWith('/')) {
      throw new TurnRpcError(
        'AM_RPC_ENV_MISSING',
        `the bridge socket path must be absolute (got "${options.socketPath}"); set ${TURN_RPC_SOCKET_ENV} to the path the bridge gave`,
      );
    }
    if (options.token === '') {
      throw new TurnRpcError('AM_RPC_ENV_MISSING', `the turn token is empty; set ${TURN_RPC_TOKEN_ENV}`);
    }
    this.socketPath = options.socketPath;
    this.#token = options.token;
    this.#timeoutMs = checkTimeout(options.timeoutMs ?? TURN_RPC_CALL_TIMEOUT_MS, 'timeoutMs');
    this.#locale = options.locale ?? 'en';
  }

  /**
   * A client from the environment the bridge gave the host process
   * (`AGENTMAIL_BRIDGE_SOCKET`, `AGENTMAIL_TURN_TOKEN`).
   *
   * A hook tells the two cases apart with it: `AM_RPC_ENV_MISSING` means "not a mail turn" (a
   * person's own interactive session, where the hook may use its own path to the Gateway);
   * with the variables set, a bridge that does not answer means "deny" (fail closed).
   * @throws TurnRpcError `AM_RPC_ENV_MISSING` naming the variables that are missing or empty:
   *   the process was not started by a bridge for a mail turn (or its environment was filtered).
   */
  static fromEnv(
    env: Readonly<Record<string, string | undefined>> = process.env,
    options: Omit<TurnRpcClientOptions, 'socketPath' | 'token'> = {},
  ): TurnRpcClient {
    const socketPath = env[TURN_RPC_SOCKET_ENV]?.trim() ?? '';
    const token = env[TURN_RPC_TOKEN_ENV]?.trim() ?? '';
    const missing = [
      ...(socketPath === '' ? [TURN_RPC_SOCKET_ENV] : []),
      ...(token === '' ? [TURN_RPC_TOKEN_ENV] : []),
    ];
    if (missing.length > 0) {
      throw new TurnRpcError(
        'AM_RPC_ENV_MISSING',
        `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set: this process was not started by an AgentMail bridge for a mail turn (the bridge sets ${TURN_RPC_SOCKET_ENV} and ${TURN_RPC_TOKEN_ENV}); keep both in the environment the host passes on`,
      );
    }
    return new TurnRpcClient({ ...options, socketPath, token });
  }

  /**
   * The turn's context (ids, addresses, mode, cwd, agent, platform, locale).
   * @throws TurnRpcError `AM_RPC_BRIDGE_UNREACHABLE`, `AM_RPC_TOKEN_INVALID`, `AM_RPC_TIMEOUT`,
   *   `AM_RPC_ABORTED`, `AM_RPC_HANDLER_FAILED`, `AM_RPC_SERVER_CLOSED`.
   */
  async context(options?: TurnRpcCallOptions): Promise<TurnContextView> {
    const result = await this.#call('context', {}, options, this.#timeoutMs);
    return readContext(result) ?? malformed('context');
  }

  /**
   * Run a mail tool (SPEC B-17) in the bridge, with the bridge's Gateway client.
   * A tool's own failure is `{ isError: true, text }`, not a throw. A tool that waits for a person
   * (`waitsForPerson`, e.g. `ask_person`, SPEC P-10) has no default limit: the bridge's question
   * timeout and the turn's end bound it, or the caller's own `timeoutMs`/`signal`.
   * @throws TurnRpcError as {@link TurnRpcClient.context}, and `AM_RPC_PARAMS_INVALID`.
   */
  async callTool(
    params: CallToolInput,
    options?: TurnRpcCallOptions & { waitsForPerson?: boolean },
  ): Promise<CallToolResult> {
    const limit = options?.waitsForPerson === true ? undefined : this.#timeoutMs;
    const result = await this.#call('callTool', params, options, limit);
    if (isObject(result) && typeof result.text === 'string' && typeof result.isError === 'boolean') {
      return { text: result.text, isError: result.isError };
    }
    return malformed('callTool');
  }

  /**
   * Ask the bridge to decide one tool call (it may ask a person and wait minutes: SPEC P-4..P-7).
   * No time limit of its own: pass `timeoutMs` (e.g. the host's hook timeout minus a margin)
   * or a `signal`. Never throws, never allows on failure: an unreachable bridge, a refused token,
   * a timeout, an abort or a malformed answer all resolve to `{ allow: false, reason, code }`.
   */
  async decidePermission(params: PermissionQuery, options?: TurnRpcCallOptions): Promise<PermissionAnswer> {
    try {
      const result = await this.#call('decidePermission', params, options, undefined);
      return readPermission(result) ?? malformed('decidePermission');
    } catch (err) {
      return this.#denial(err, options?.timeoutMs);
    }
  }

  /**
   * Ask a person the questions of one `ask_user_question`-style call and wait (SPEC P-9). No time
   * limit of its own. Any failure throws at once (the model gets an error, never a local UI).
   * @throws TurnRpcError as {@link TurnRpcClient.callTool}.
   */
  async askQuestion(params: AskQuestionParams, options?: TurnRpcCallOptions): Promise<QuestionAnswers> {
    const result = await this.#call('askQuestion', params, options, undefined);
    return readAnswers(result) ?? malformed('askQuestion');
  }

  /**
   * Record the addresses the model mailed itself during the turn (SPEC B-10), so the bridge's
   * auto relay skips them.
   * @throws TurnRpcError as {@link TurnRpcClient.callTool}.
   */
  async recordSend(params: RecordSendParams, options?: TurnRpcCallOptions): Promise<void> {
    const result = await this.#call('recordSend', params, options, this.#timeoutMs);
    if (!isObject(result)) malformed('recordSend');
  }

  #denial(err: unknown, timeoutMs: number | undefined): PermissionAnswer {
    const locale = this.#locale;
    const cause = messageOf(err);
    const deny = (reason: string, code: string): PermissionAnswer => ({ allow: false, reason, code });
    if (hasErrorCode(err, 'AM_RPC_TOKEN_INVALID'))
      return deny(rpcDenialText('token', {}, locale), 'AM_RPC_TOKEN_INVALID');
    if (hasErrorCode(err, 'AM_RPC_TIMEOUT'))
      return deny(
        rpcDenialText('timeout', { seconds: Math.ceil((timeoutMs ?? 0) / 1000) }, locale),
        'AM_RPC_TIMEOUT',
      );
    if (hasErrorCode(err, 'AM_RPC_ABORTED'))
      return deny(rpcDenialText('aborted', {}, locale), 'AM_RPC_ABORTED');
    if (hasErrorCode(err, 'AM_RPC_SERVER_CLOSED'))
      return deny(rpcDenialText('shutdown', {}, locale), 'AM_RPC_SERVER_CLOSED');
    if (hasErrorCode(err, 'AM_RPC_BRIDGE_UNREACHABLE'))
      return deny(rpcDenialText('unreachable', { cause }, locale), 'AM_RPC_BRIDGE_UNREACHABLE');
    const code = err instanceof TurnRpcError ? err.code : 'AM_RPC_HANDLER_FAILED';
    return deny(rpcDenialText('failed', { cause }, locale), code);
  }

  /** One request on its own connection; resolves with the answer's `result`. */
  #call(
    method: TurnRpcMethod,
    params: unknown,
    options: TurnRpcCallOptions | undefined,
    defaultTimeoutMs: number | undefined,
  ): Promise<unknown> {
    const timeoutMs =
      options?.timeoutMs === undefined ? defaultTimeoutMs : checkTimeout(options.timeoutMs, 'timeoutMs');
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(aborted(method, signal.reason));
    return new Promise((resolve, reject) => {
      const socket = createConnection(this.socketPath);
      let done = false;
      const finish = (err: Error | undefined, value?: unknown): void => {
        if (done) return;
        done = true;
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        if (err) reject(err);
        else resolve(value);
      };
      const onAbort = (): void => finish(aborted(method, signal?.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(
              () =>
                finish(
                  new TurnRpcError(
                    'AM_RPC_TIMEOUT',
                    `the bridge did not answer ${method} within ${timeoutMs} ms`,
                  ),
                ),
              timeoutMs,
            );

      socket.on('error', (err: NodeJS.ErrnoException) =>
        finish(unreachable(this.socketPath, describeSocketError(err), err)),
      );
      socket.on('close', () =>
        finish(unreachable(this.socketPath, 'the connection closed before the answer')),
      );
      readLines(
        socket,
        (line) => {
          const answer = parseAnswer(line);
          if (answer === undefined) {
            finish(unreachable(this.socketPath, 'the answer is not a turn RPC answer'));
            return;
          }
          // `null`: the server could not read our request's id (e.g. the line was too long).
          if (answer.id !== 1 && answer.id !== null) return;
          if ('error' in answer) {
            const { code, message, remoteCode } = answer.error;
            finish(new TurnRpcError(code, message, remoteCode === undefined ? {} : { remoteCode }));
          } else finish(undefined, answer.result);
        },
        (err) => finish(unreachable(this.socketPath, 'the answer is too long', err)),
      );
      // Queued until the connection is up; a write error arrives as 'error'.
      socket.write(encodeLine({ id: 1, method, token: this.#token, params }));
    });
  }
}

type ParsedAnswer =
  | { id: unknown; result: unknown }
  | { id: unknown; error: { code: ErrorCode; message: string; remoteCode?: string } };

/** An answer line, or undefined when it is not one (malformed → the bridge counts as unreachable). */
function parseAnswer(line: string): ParsedAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return undefined;
  if (hasResult) return { id: value.id, result: value.result };
  const error = value.error;
  if (!isObject(error) || !isKnownErrorCode(error.code) || typeof error.message !== 'string')
    return undefined;
  const remoteCode = typeof error.remoteCode === 'string' ? error.remoteCode : undefined;
  return {
    id: value.id,
    error: { code: error.code, message: error.message, ...(remoteCode === undefined ? {} : { remoteCode }) },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const optionalString = (v: unknown): boolean => v === undefined || isString(v);

// Hand-written guards instead of zod (see the module comment). The server already validated the
// result against the schemas; these check that what arrived is what a bridge sends.
const CONTEXT_STRINGS = [
  'mailId',
  'sessionId',
  'replyAddress',
  'selfAddress',
  'cwd',
  'agentName',
  'platform',
] as const;

function readContext(v: unknown): TurnContextView | undefined {
  if (!isObject(v)) return undefined;
  if (!CONTEXT_STRINGS.every((k) => isString(v[k]))) return undefined;
  const mode = v.permissionMode;
  if (mode !== 'plan' && mode !== 'workspace' && mode !== 'full') return undefined;
  if (v.locale !== 'en' && v.locale !== 'zh-CN') return undefined;
  return {
    mailId: v.mailId as string,
    sessionId: v.sessionId as string,
    replyAddress: v.replyAddress as string,
    selfAddress: v.selfAddress as string,
    permissionMode: mode,
    cwd: v.cwd as string,
    agentName: v.agentName as string,
    platform: v.platform as string,
    locale: v.locale,
  };
}

function readPermission(v: unknown): PermissionAnswer | undefined {
  if (!isObject(v)) return undefined;
  // Only an explicit `allow: true` passes (SPEC P-4); a truthy "yes" is malformed, hence a denial.
  if (v.allow === true) {
    if (v.always === undefined) return { allow: true };
    return typeof v.always === 'boolean' ? { allow: true, always: v.always } : undefined;
  }
  if (v.allow === false && isString(v.reason) && optionalString(v.code)) {
    return isString(v.code)
      ? { allow: false, reason: v.reason, code: v.code }
      : { allow: false, reason: v.reason };
  }
  return undefined;
}

function readAnswers(v: unknown): QuestionAnswers | undefined {
  if (!isObject(v) || typeof v.declined !== 'boolean' || !Array.isArray(v.answers)) return undefined;
  const answers: QuestionAnswers['answers'] = [];
  for (const a of v.answers) {
    if (!isObject(a) || !isString(a.question) || !isStringArray(a.selected)) return undefined;
    if (!optionalString(a.header) || !optionalString(a.text)) return undefined;
    answers.push({
      question: a.question,
      selected: [...a.selected],
      ...(isString(a.header) ? { header: a.header } : {}),
      ...(isString(a.text) ? { text: a.text } : {}),
    });
  }
  return { declined: v.declined, answers };
}

function malformed(method: TurnRpcMethod): never {
  throw new TurnRpcError(
    'AM_RPC_BRIDGE_UNREACHABLE',
    `the bridge's answer to ${method} does not have the expected shape; the bridge and this tool or hook process must come from the same AgentMail version`,
  );
}

function unreachable(socketPath: string, what: string, cause?: unknown): TurnRpcError {
  return new TurnRpcError(
    'AM_RPC_BRIDGE_UNREACHABLE',
    `the AgentMail bridge at ${socketPath} is unreachable: ${what}; is the bridge running?`,
    cause === undefined ? {} : { cause },
  );
}

function describeSocketError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT':
      return 'no socket at this path (the bridge is not running or was stopped)';
    case 'ECONNREFUSED':
      return 'connection refused (a stale socket of a bridge that is gone)';
    case 'EACCES':
      return "permission denied (the socket belongs to another user; run as the bridge's user)";
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was dropped';
    default:
      return err.message;
  }
}

function aborted(method: TurnRpcMethod, reason: unknown): TurnRpcError {
  return new TurnRpcError(
    'AM_RPC_ABORTED',
    `the ${method} call was aborted${reason instanceof Error ? ` (${reason.message})` : ''}`,
    reason === undefined ? {} : { cause: reason },
  );
}

function checkTimeout(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    throw new TurnRpcError(
      'AM_OPTION_OUT_OF_RANGE',
      `TurnRpcClient option "${name}" must be a number of ms in 1..${MAX_TIMEOUT_MS} (got ${value})`,
    );
  }
  return value;
}
