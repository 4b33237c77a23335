/**
 * The server side of the turn RPC: the bridge serves it so that the tool and hook processes a
 * host starts for a mail turn (Claude Code's and ZCode's MCP server and hooks) can get the
 * turn's context, run a mail tool, ask a person and record a send (SPEC B-21, P-4..P-9, B-10).
 * It is generic: the bridge gives the handlers; no mail or permission logic lives here.
 *
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, lstat, stat, unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { decode } from '@agentmail/protocol';
import type { Locale } from '@agentmail/shared-policy';
import { AgentMailError } from '@agentmail/shared-policy';
import type { EmitEvent } from '../events.js';
import { isMethod, readRequest, runHandler, TURN_RPC_PARAMS, type TurnRpcHandlers } from './handlers.js';
import type { PermissionAnswer } from './schemas.js';
import { checkSocketPathLength, prepareSocketDir, removeStaleSocket } from './socket-file.js';
import {
  encodeLine,
  readLines,
  rpcDenialText,
  TURN_RPC_METHODS,
  TURN_RPC_SOCKET_NAME,
  type TurnRpcAnswer,
  type TurnRpcEnv,
  TurnRpcError,
  type TurnRpcMethod,
} from './wire.js';

export type { TurnRpcCall, TurnRpcHandlers } from './handlers.js';

/** Random bytes of a turn token's secret part (base64url in the token). @default 32 */
export const TURN_TOKEN_SECRET_BYTES = 32;

/**
 * How long {@link TurnRpcServer.close} lets connections flush their last answers before it
 * destroys them, in ms. An answer is a few hundred bytes on a local socket: this only bounds a
 * peer that stopped reading.
 * @default 1_000
 */
export const TURN_RPC_CLOSE_FLUSH_MS = 1_000;

/** Options of {@link TurnRpcServer}. */
export interface TurnRpcServerOptions<T> {
  /**
   * Absolute directory of the socket, e.g. `<dataDir>/run`. Created 0700 (an existing one is
   * made 0700); it must belong to the bridge user. One server per directory.
   */
  dir: string;
  /** Socket file name in `dir`. @default {@link TURN_RPC_SOCKET_NAME} */
  fileName?: string;
  handlers: TurnRpcHandlers<T>;
  /** Aborting it closes the server (as {@link TurnRpcServer.close}). */
  signal?: AbortSignal;
  /** Handler failures, refused tokens and unreadable requests, as `rpc_problem` events. @default dropped */
  emit?: EmitEvent;
}

/** Options of {@link TurnRpcServer.openTurn}. */
export interface OpenTurnOptions {
  /** Locale of the denial texts the server writes itself (shutdown, turn ended). @default 'en' */
  locale?: Locale;
}

/** One turn registered with {@link TurnRpcServer.openTurn}. */
export interface TurnRpcLease {
  /** The turn's token, `<id>.<secret>`; put it in the host process's environment only. */
  readonly token: string;
  /** The variables a host process needs: pass them to the host for this turn. */
  readonly env: TurnRpcEnv;
  /**
   * Revoke the token: later calls with it are refused (`AM_RPC_TOKEN_INVALID`), calls still
   * running are answered at once (a permission as denied: the turn ended). Idempotent.
   */
  close(): void;
}

interface TurnEntry<T> {
  id: string;
  secret: Buffer;
  turn: T;
  locale: Locale;
  calls: Set<InFlight>;
}

interface InFlight {
  method: TurnRpcMethod;
  /** Answer once; later answers are dropped. */
  answer(answer: TurnRpcAnswer): void;
  controller: AbortController;
}

type State = 'new' | 'starting' | 'listening' | 'closed';

/**
 * The turn RPC server. One per bridge; each running turn gets a token with
 * {@link TurnRpcServer.openTurn}, and its host processes call the handlers with it.
 *
 * Security (SPEC B-21):
 * - Only the bridge's user can connect: the socket lives in a 0700 directory and is itself 0600
 *   (an abstract socket would have no permissions at all).
 * - A token (≥ 32 random bytes, compared in constant time) lets its holder do only what its turn
 *   may do, and only while the turn runs: a forged, foreign or revoked token never reaches a
 *   handler. The token is readable by the model's shell (it is in the host's environment), so
 *   it must grant nothing more than the model's own tools do; approvals come from people only.
 * - The agent key never crosses the socket: handlers use the bridge's own Gateway client.
 *
 * Shutdown ({@link TurnRpcServer.close} or the `signal`): every call still running is answered
 * at once — a permission as denied because the bridge is shutting down (SPEC P-7, B-15), any
 * other call with `AM_RPC_SERVER_CLOSED` — handlers' signals abort, connections are destroyed and
 * the socket file is removed.
 *
 * @example
 * const rpc = new TurnRpcServer({ dir: join(dataDir, 'run'), handlers, signal: stop.signal, emit });
 * await rpc.start();
 * const lease = rpc.openTurn(turn, { locale: 'en' });
 * spawn('claude', args, { env: { ...hostEnv, ...lease.env } });
 * // … after the turn:
 * lease.close();
 */
export class TurnRpcServer<T> {
  /** Absolute path of the socket file. */
  readonly socketPath: string;
  readonly #handlers: TurnRpcHandlers<T>;
  readonly #dir: string;
  readonly #emit: EmitEvent;
  readonly #turns = new Map<string, TurnEntry<T>>();
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  #state: State = 'new';
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  /** Inode of the socket file we created, so close() never removes another server's socket. */
  #ino: number | undefined;

  constructor(options: TurnRpcServerOptions<T>) {
    this.#dir = options.dir;
    this.socketPath = join(options.dir, options.fileName ?? TURN_RPC_SOCKET_NAME);
    this.#handlers = options.handlers;
    this.#emit = options.emit ?? (() => undefined);
    this.#server = createServer((socket) => this.#onConnection(socket));
    this.#server.on('error', (err) => {
      // A listen failure is #start's own: a stale socket (EADDRINUSE of a dead bridge) is
      // replaced without a word, anything else is thrown from start(). Not a problem to log.
      if (this.#state === 'starting') return;
      this.#emit({ type: 'rpc_problem', problem: 'server_error', error: err.message });
    });
    const signal = options.signal;
    if (signal?.aborted) this.#state = 'closed';
    else signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  /**
   * Create the directory, replace a stale socket, listen, make the socket 0600.
   * @throws TurnRpcError `AM_RPC_SOCKET_PATH_TOO_LONG` (path and fix in the message),
   *   `AM_RPC_SOCKET_DIR_INVALID`, `AM_RPC_SOCKET_IN_USE` (another live bridge listens),
   *   `AM_RPC_SERVER_CLOSED` (closed before it started).
   */
  start(): Promise<void> {
    if (this.#state === 'closed' || this.#closing) return Promise.reject(closedError('start'));
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    this.#state = 'starting';
    try {
      checkSocketPathLength(this.socketPath);
      await prepareSocketDir(this.#dir);
      try {
        await this.#listen();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        await removeStaleSocket(this.socketPath);
        this.#server.close(); // reset the failed listen before trying again
        await this.#listen().catch((again: NodeJS.ErrnoException) => {
          // Another bridge took the path between our probe and our listen.
          if (again.code === 'EADDRINUSE') {
            throw new TurnRpcError(
              'AM_RPC_SOCKET_IN_USE',
              `another bridge started listening on "${this.socketPath}" at the same time; stop it first, or give this bridge its own data directory`,
            );
          }
          throw again;
        });
      }
      // The directory (0700) already keeps other users out; 0600 is the second lock. For an
      // instant before this the socket has the umask's mode (connecting needs write permission,
      // which a 022 umask gives nobody else); the directory covers that instant in any case.
      await chmod(this.socketPath, 0o600);
      this.#ino = (await stat(this.socketPath)).ino;
    } catch (err) {
      this.#state = 'closed';
      this.#server.close();
      if (err instanceof AgentMailError) throw err;
      throw new TurnRpcError(
        'AM_RPC_SOCKET_DIR_INVALID',
        `could not listen on "${this.socketPath}" (${(err as Error).message}); check that the bridge user can write to "${this.#dir}"`,
        { cause: err },
      );
    }
    this.#state = 'listening';
  }

  /**
   * Register a running turn and give it a fresh token. Turns may be opened before `start()`.
   * @throws TurnRpcError `AM_RPC_SERVER_CLOSED` after close.
   */
  openTurn(turn: T, options: OpenTurnOptions = {}): TurnRpcLease {
    if (this.#state === 'closed' || this.#closing) throw closedError('openTurn');
    // The id only finds the entry (it is not secret); the secret is compared in constant time.
    const id = randomBytes(9).toString('base64url');
    const secret = randomBytes(TURN_TOKEN_SECRET_BYTES);
    const entry: TurnEntry<T> = { id, secret, turn, locale: options.locale ?? 'en', calls: new Set() };
    this.#turns.set(id, entry);
    const token = `${id}.${secret.toString('base64url')}`;
    return {
      token,
      env: { AGENTMAIL_BRIDGE_SOCKET: this.socketPath, AGENTMAIL_TURN_TOKEN: token },
      close: () => this.#revoke(entry),
    };
  }

  /** Number of calls being handled right now (for a bridge's status and for tests). */
  get inFlight(): number {
    let n = 0;
    for (const entry of this.#turns.values()) n += entry.calls.size;
    return n;
  }

  /**
   * Answer every running call at once (permissions denied with the shutdown reason, SPEC P-7;
   * others `AM_RPC_SERVER_CLOSED`), revoke every token, destroy the connections, stop
   * listening and remove the socket file. Idempotent; never rejects.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    // close() during start(): let the start finish (or fail), then close what it opened.
    if (this.#starting) await this.#starting.catch(() => undefined);
    const wasListening = this.#state === 'listening';
    this.#state = 'closed';
    for (const entry of [...this.#turns.values()]) {
      this.#turns.delete(entry.id);
      endCalls(entry, 'shutdown');
    }
    const drained = new Promise<void>((resolve) => {
      if (!wasListening) resolve();
      else this.#server.close(() => resolve());
    });
    // Flush the answers just written, then close; destroy whatever is still open after a bound.
    for (const socket of this.#sockets) socket.end();
    const timer = setTimeout(() => {
      for (const socket of this.#sockets) socket.destroy();
    }, TURN_RPC_CLOSE_FLUSH_MS);
    await drained;
    clearTimeout(timer);
    if (wasListening) await this.#removeSocketFile();
  }

  async #removeSocketFile(): Promise<void> {
    try {
      const st = await lstat(this.socketPath);
      if (st.ino === this.#ino) await unlink(this.socketPath);
    } catch {
      // already gone (libuv removes it on close)
    }
  }

  #listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.#server.once('error', onError);
      this.#server.listen(this.socketPath, () => {
        this.#server.off('error', onError);
        resolve();
      });
    });
  }

  #revoke(entry: TurnEntry<T>): void {
    if (this.#turns.get(entry.id) !== entry) return;
    this.#turns.delete(entry.id);
    endCalls(entry, 'turn_ended');
  }

  /** The entry of a token, or undefined (forged, foreign, revoked, malformed). */
  #authenticate(token: unknown): TurnEntry<T> | undefined {
    if (typeof token !== 'string') return undefined;
    const dot = token.indexOf('.');
    if (dot <= 0) return undefined;
    const entry = this.#turns.get(token.slice(0, dot));
    const presented = Buffer.from(token.slice(dot + 1), 'base64url');
    if (entry === undefined || presented.length !== entry.secret.length) return undefined;
    return timingSafeEqual(presented, entry.secret) ? entry : undefined;
  }

  #onConnection(socket: Socket): void {
    if (this.#state === 'closed' || this.#closing) {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    const calls = new Set<InFlight>();
    const write = (answer: TurnRpcAnswer): void => {
      if (socket.writable) socket.write(encodeLine(answer));
    };
    readLines(
      socket,
      (line) => this.#onLine(line, write, calls),
      (err) => {
        this.#emit({ type: 'rpc_problem', problem: 'request_too_long', error: err.message });
        write(errorAnswer(null, err));
        socket.end();
      },
    );
    socket.on('error', () => {
      // A peer that resets (a hook killed mid-call) ends in 'close' below.
    });
    socket.on('close', () => {
      this.#sockets.delete(socket);
      // The caller hung up: its calls have nobody to answer; let their handlers stop waiting.
      for (const call of [...calls]) {
        call.answer({ id: null, error: { code: 'AM_RPC_ABORTED', message: 'the caller hung up' } });
        call.controller.abort(new TurnRpcError('AM_RPC_ABORTED', 'the caller hung up'));
      }
    });
  }

  #onLine(line: string, write: (answer: TurnRpcAnswer) => void, connectionCalls: Set<InFlight>): void {
    const request = readRequest(line);
    if (!request.ok) {
      this.#emit({ type: 'rpc_problem', problem: 'request_invalid', error: request.error.message });
      write({ id: request.id, error: request.error });
      return;
    }
    const { id, method, token, params } = request;
    // Authenticate before anything else: an unauthenticated caller learns nothing about methods.
    const entry = this.#authenticate(token);
    if (entry === undefined) {
      this.#emit({ type: 'rpc_problem', problem: 'token_refused', method });
      write({
        id,
        error: {
          code: 'AM_RPC_TOKEN_INVALID',
          message:
            'the turn token is not valid: the turn is over (token revoked) or the token was never issued by this bridge',
        },
      });
      return;
    }
    if (!isMethod(method)) {
      write({
        id,
        error: {
          code: 'AM_RPC_REQUEST_INVALID',
          message: `unknown method "${method}"; the turn RPC has ${TURN_RPC_METHODS.join(', ')}`,
        },
      });
      return;
    }
    const decoded = decode(TURN_RPC_PARAMS[method], params === undefined ? {} : params);
    if (!decoded.ok) {
      write({
        id,
        error: { code: 'AM_RPC_PARAMS_INVALID', message: `${method} params: ${decoded.error.detail}` },
      });
      return;
    }

    const controller = new AbortController();
    let answered = false;
    const call: InFlight = {
      method,
      controller,
      answer: (answer) => {
        if (answered) return;
        answered = true;
        entry.calls.delete(call);
        connectionCalls.delete(call);
        write({ ...answer, id });
      },
    };
    entry.calls.add(call);
    connectionCalls.add(call);
    void runHandler(this.#handlers, entry.turn, method, decoded.value, controller.signal, this.#emit).then(
      (answer) => call.answer(answer),
    );
  }
}

/**
 * Answer every running call of a turn at once and abort its handler: the bridge shuts down
 * (SPEC P-7: a permission is denied saying so) or the turn ended (its token is revoked).
 */
function endCalls(entry: TurnEntry<unknown>, why: 'shutdown' | 'turn_ended'): void {
  const code = why === 'shutdown' ? 'AM_RPC_SERVER_CLOSED' : 'AM_RPC_TOKEN_INVALID';
  const message =
    why === 'shutdown' ? 'the AgentMail bridge is shutting down' : 'the turn ended while this call ran';
  for (const call of [...entry.calls]) {
    call.answer(
      call.method === 'decidePermission'
        ? { id: null, result: deny(rpcDenialText(why, {}, entry.locale), code) }
        : { id: null, error: { code, message } },
    );
    call.controller.abort(new TurnRpcError(code, message));
  }
}

function deny(reason: string, code: string): PermissionAnswer {
  return { allow: false, reason, code };
}

function closedError(what: string): TurnRpcError {
  return new TurnRpcError(
    'AM_RPC_SERVER_CLOSED',
    `TurnRpcServer is closed (${what}): the bridge is shutting down`,
  );
}

function errorAnswer(id: number | string | null, err: TurnRpcError): TurnRpcAnswer {
  return { id, error: { code: err.code, message: err.message } };
}
