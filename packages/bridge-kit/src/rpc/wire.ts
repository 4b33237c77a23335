/**
 * The turn RPC's wire format, shared by {@link TurnRpcServer} (in the bridge) and
 * {@link TurnRpcClient} (in the tool and hook processes a host starts; SPEC B-21).
 *
 * Why JSON lines and no library: one request and one answer per connection is all a hook needs,
 * and a hook process is started once per tool call, so every millisecond of import counts.
 * `node:net` plus this file costs next to nothing; `vscode-jsonrpc` 8.2.1 (the well-kept
 * candidate) adds ~20 ms to a bare `node -e` on the project's machine and brings its own
 * framing (Content-Length headers), cancellation protocol and dispose model, none of which we
 * need: our calls carry a per-request token, and a call is cancelled by closing its connection.
 * `JSON.stringify` never emits a raw newline, so one message per line is unambiguous.
 *
 * This module must stay free of zod and of the rest of the kit (the client imports it; a test
 * bundles the client and checks what it pulls in).
 *
 * @module
 */
import type { Socket } from 'node:net';
import type { Locale } from '@agentmail/shared-policy';
import { AgentMailError, ERROR_CODES, type ErrorCode } from '@agentmail/shared-policy';

/** Environment variable a host process reads the bridge's socket path from (SPEC B-21). */
export const TURN_RPC_SOCKET_ENV = 'AGENTMAIL_BRIDGE_SOCKET';

/** Environment variable a host process reads its per-turn token from (SPEC B-21). */
export const TURN_RPC_TOKEN_ENV = 'AGENTMAIL_TURN_TOKEN';

/**
 * The environment a host process of one turn needs: {@link TurnRpcLease.env}. A type alias, not
 * an interface, so it spreads into and passes as a `Record<string, string>` environment.
 */
export type TurnRpcEnv = {
  /** Absolute path of the bridge's Unix socket. */
  AGENTMAIL_BRIDGE_SOCKET: string;
  /** The turn's token, `<id>.<secret>` (see {@link TurnRpcServer.openTurn}). */
  AGENTMAIL_TURN_TOKEN: string;
};

/** File name of the socket in the directory the bridge gives. @default 'bridge.sock' */
export const TURN_RPC_SOCKET_NAME = 'bridge.sock';

/**
 * Longest message line either side accepts, in UTF-16 code units (≤ its UTF-8 bytes). A tool's
 * arguments (a mail body; the Gateway takes ≤ 2 MiB of JSON) and its rendered text (a long
 * thread) fit with room; a runaway peer does not fill the bridge's memory.
 */
export const TURN_RPC_LINE_MAX_CHARS = 16 * 1024 * 1024;

/** The methods of the turn RPC, one per handler of {@link TurnRpcHandlers}. */
export const TURN_RPC_METHODS = [
  'context',
  'callTool',
  'decidePermission',
  'askQuestion',
  'recordSend',
] as const;

/** One method name of {@link TURN_RPC_METHODS}. */
export type TurnRpcMethod = (typeof TURN_RPC_METHODS)[number];

/** A request line: `{"id":1,"method":"context","token":"…","params":{}}`. */
export interface TurnRpcRequest {
  /** Echoed in the answer (a client may send several requests on one connection). */
  id: number | string;
  method: string;
  /** The turn's token; checked before the method and the params. */
  token: string;
  /** The method's params; absent means `{}`. */
  params?: unknown;
}

/** The error part of an answer line. */
export interface TurnRpcWireError {
  /** An `AM_RPC_*` code of the registry. */
  code: string;
  message: string;
  /** The `code` of the error a handler threw, when it had one (e.g. `AM_TOOL_ARGS_INVALID`). */
  remoteCode?: string;
}

/**
 * An answer line: `{"id":1,"result":…}` or `{"id":1,"error":{"code","message"}}`. `id` is
 * `null` when the request line could not be read far enough to find its id.
 */
export type TurnRpcAnswer =
  | { id: number | string | null; result: unknown }
  | { id: number | string | null; error: TurnRpcWireError };

/**
 * An error of the turn RPC. `code` is one of the `AM_RPC_*` codes (see docs/errors.md);
 * `remoteCode` is the code of the error a bridge handler threw, when the answer carried one.
 * Check it by `code` with `hasErrorCode` (a host may load two copies of the package).
 */
export class TurnRpcError extends AgentMailError {
  readonly remoteCode: string | undefined;
  constructor(code: ErrorCode, message: string, options: { cause?: unknown; remoteCode?: string } = {}) {
    super(code, message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'TurnRpcError';
    this.remoteCode = options.remoteCode;
  }
}

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ERROR_CODES));

/** True when `code` is a code of the registry (an answer with another code is malformed). */
export function isKnownErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && KNOWN_CODES.has(code);
}

/** One message as a line. */
export function encodeLine(message: TurnRpcRequest | TurnRpcAnswer): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Cuts a character stream (a socket with `setEncoding('utf8')`, which keeps multi-byte
 * characters whole across chunks) into lines.
 */
export class LineSplitter {
  readonly #maxChars: number;
  #buffer = '';

  constructor(maxChars: number = TURN_RPC_LINE_MAX_CHARS) {
    this.#maxChars = maxChars;
  }

  /**
   * Add a chunk; returns the complete lines it finished (without `\n`; empty lines dropped).
   * @throws TurnRpcError `AM_RPC_REQUEST_INVALID` when a line grows past the limit.
   */
  push(chunk: string): string[] {
    const lines: string[] = [];
    let start = 0;
    let at = chunk.indexOf('\n');
    while (at !== -1) {
      const line = this.#buffer + chunk.slice(start, at);
      this.#buffer = '';
      if (line.length > this.#maxChars) throw tooLong(this.#maxChars);
      if (line.trim() !== '') lines.push(line);
      start = at + 1;
      at = chunk.indexOf('\n', start);
    }
    this.#buffer += chunk.slice(start);
    if (this.#buffer.length > this.#maxChars) throw tooLong(this.#maxChars);
    return lines;
  }
}

/**
 * Read `socket` as UTF-8 lines: `onLine` for each complete line; `onTooLong` once, when a line
 * passes {@link TURN_RPC_LINE_MAX_CHARS} (nothing more is read; the caller ends the connection).
 */
export function readLines(
  socket: Socket,
  onLine: (line: string) => void,
  onTooLong: (err: TurnRpcError) => void,
): void {
  socket.setEncoding('utf8');
  const lines = new LineSplitter();
  let tooLong = false;
  socket.on('data', (chunk: string) => {
    if (tooLong) return; // the rest of an oversized line: nothing to read any more
    let got: string[];
    try {
      got = lines.push(chunk);
    } catch (err) {
      tooLong = true;
      onTooLong(err as TurnRpcError);
      return;
    }
    for (const line of got) onLine(line);
  });
}

function tooLong(maxChars: number): TurnRpcError {
  return new TurnRpcError(
    'AM_RPC_REQUEST_INVALID',
    `a message line is longer than ${maxChars} characters; send less (e.g. upload a large text as an attachment)`,
  );
}

// ---- texts the model reads -------------------------------------------------------------------
// Kept here rather than in the text catalogue: the client must not load the catalogue (size),
// and these few lines are all the RPC says to a model.

/** Why a permission was denied without a person's decision. */
export type RpcDenialKind =
  | 'unreachable'
  | 'token'
  | 'timeout'
  | 'aborted'
  | 'failed'
  | 'shutdown'
  | 'turn_ended';

const DENIALS: Record<Locale, Record<RpcDenialKind, string>> = {
  en: {
    unreachable:
      'Denied: the AgentMail bridge that asks a person for approval could not be reached ({cause}). A tool call nobody can approve is refused.',
    token:
      "Denied: the AgentMail bridge refused this turn's token; the turn is over or the token is not valid.",
    timeout: 'Denied: no decision arrived within {seconds} s.',
    aborted: 'Denied: the wait for a decision was cancelled.',
    failed: 'Denied: the AgentMail bridge could not decide ({cause}).',
    shutdown:
      "Denied: the AgentMail bridge is shutting down, so the person's decision can no longer be received. The tool call did not run.",
    turn_ended: 'Denied: the mail turn this tool call belongs to has ended.',
  },
  'zh-CN': {
    unreachable:
      '已拒绝：无法连接负责请人审批的 AgentMail 桥接进程（{cause}）。无人能审批的工具调用一律拒绝。',
    token: '已拒绝：AgentMail 桥接进程不接受本轮的令牌；本轮已结束或令牌无效。',
    timeout: '已拒绝：{seconds} 秒内没有收到决定。',
    aborted: '已拒绝：等待决定已被取消。',
    failed: '已拒绝：AgentMail 桥接进程无法做出决定（{cause}）。',
    shutdown: '已拒绝：AgentMail 桥接进程正在关闭，已无法收到审批结果。该工具调用未执行。',
    turn_ended: '已拒绝：此工具调用所属的邮件轮次已结束。',
  },
};

/**
 * The denial text the model reads when no person decided (SPEC P-5, P-7, B-21), in `locale`
 * (unknown locales fall back to English). `{cause}` and `{seconds}` are filled from `params`.
 */
export function rpcDenialText(
  kind: RpcDenialKind,
  params: { cause?: string; seconds?: number } = {},
  locale: Locale = 'en',
): string {
  const template = (DENIALS[locale] ?? DENIALS.en)[kind];
  return template
    .replace('{cause}', params.cause ?? '')
    .replace('{seconds}', params.seconds === undefined ? '' : String(params.seconds));
}
