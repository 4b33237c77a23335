import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeErrorResponse } from '@copilotkit/aimock';
import {
  ANTHROPIC_MESSAGES_PATHS,
  type AnthropicRequestBody,
  anthropicErrorBody,
  anthropicRequestBodySchema,
  chatViewOfMessages,
  writeAnthropicReply,
} from './anthropic.js';
import { TESTKIT_ERROR_CODES, TestkitError } from './errors.js';
import { createLoopbackServer } from './harness/loopback-server.js';
import { DEFAULT_MODEL_ID, errorBody, writeReply } from './reply-writer.js';
import {
  type ChatRequestBody,
  chatRequestBodySchema,
  deriveViews,
  describeRequest,
  type RecordedRequest,
  type RequestEnd,
} from './request.js';
import {
  matchesRequest,
  type RequestMatch,
  type RequestPredicate,
  type Scenario,
  type ScenarioReply,
} from './scenario.js';

// Why not aimock's own server (LLMock): probed with 1.43.0 (see README "Why not aimock's own server").
// (1) a `hang` (a response factory that never resolves) is not in the journal until it resolves
// and makes `stop()` wait for the client; (2) a stream cannot end without `finish_reason`
// (`finishReason: null` becomes "stop"); (3) the journal has no arrival event to wait on;
// (4) no `times`; (5) `/v1/models` lists vendor model names; (6) an unmatched request gets 404,
// which opencode retries five times with backoff. This file owns the request lifecycle and the
// scenario layer; reply-writer.ts turns a reply into the OpenAI wire with aimock's exported builders.

/** Characters per streamed text or tool-argument delta. */
export const DEFAULT_CHUNK_SIZE_CHARS = 20;

/** Default timeout of {@link ModelServer.waitForRequest} and {@link ModelServer.waitForEnd}, in ms. */
export const DEFAULT_WAIT_TIMEOUT_MS = 5_000;

/** Largest accepted request body; a 20 MB pi session produces ~14 MB requests. */
export const MAX_REQUEST_BODY_BYTES = 64 * 1024 * 1024;

/** Path of the journal as JSON (`GET`), for a server run as a child process. */
export const JOURNAL_PATH = '/_testkit/requests';

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  /** Scenarios, tried in order. More can be added with {@link ModelServer.addScenarios}. @default [] */
  scenarios?: readonly Scenario[];
  /** Model ids listed by `GET /v1/models`. @default [DEFAULT_MODEL_ID] */
  models?: readonly string[];
  /** Characters per streamed delta. @default DEFAULT_CHUNK_SIZE_CHARS */
  chunkSizeChars?: number;
  /** TCP port on 127.0.0.1; 0 picks a free one. @default 0 */
  port?: number;
  /** Aborting it closes the server (same as {@link ModelServer.close}). */
  signal?: AbortSignal;
}

/** Filter of {@link ModelServer.requests}. */
export interface RequestFilter {
  /** Content conditions or a predicate. */
  match?: RequestMatch | RequestPredicate;
  /** Only requests answered by the scenario with this label. */
  scenario?: string;
}

type MutableRecord = { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] } & {
  response: { status: number | undefined; end: RequestEnd };
};

interface ActiveScenario {
  scenario: Scenario;
  label: string;
  used: number;
}

function toPredicate(match: RequestMatch | RequestPredicate): RequestPredicate {
  return typeof match === 'function' ? match : (request) => matchesRequest(match, request);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Drain a too-large body instead of breaking out: leaving the loop destroys the socket, and
  // the 413 could not be sent.
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size <= MAX_REQUEST_BODY_BYTES) chunks.push(buffer);
  }
  return size > MAX_REQUEST_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8');
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * A scripted model on 127.0.0.1, OpenAI-compatible and Anthropic-compatible: `POST
 * /v1/chat/completions` (also `/chat/completions`), streaming (SSE deltas, tool calls,
 * `finish_reason`, a usage chunk when `stream_options.include_usage` is set, `data: [DONE]`) or
 * JSON; `POST /v1/messages` (the Anthropic Messages wire, e.g. Claude Code with
 * `ANTHROPIC_BASE_URL` = {@link ModelServer.url}: text, `tool_use` blocks, error envelopes, hangs;
 * recorded in the same chat view, see anthropic.ts); `GET /v1/models`; and
 * `GET /_testkit/requests` (the journal). Each request is answered by the first matching
 * {@link Scenario}; one that matches none gets HTTP 400 `code: "no_scenario_matched"` (not 404,
 * which opencode retries). Every chat request is recorded on arrival.
 *
 * @example
 * const model = await startModelServer({ scenarios: [
 *   { match: { lastUserMessage: 'list files', hasToolResult: false }, reply: { type: 'tool_calls', calls: [{ name: 'ls', arguments: { path: '.' } }] } },
 *   { match: { hasToolResult: true }, reply: { type: 'text', text: 'Two files.' } },
 * ] });
 * // point the host at model.baseUrl (…/v1), then:
 * await model.waitForRequest({ hasToolResult: true });
 * await model.close();
 */
export class ModelServer {
  /** Origin, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** OpenAI base URL to give a host, `${url}/v1`. */
  readonly baseUrl: string;
  readonly port: number;

  readonly #server: Server;
  readonly #events = new EventEmitter();
  readonly #journal: MutableRecord[] = [];
  readonly #scenarios: ActiveScenario[] = [];
  readonly #models: readonly string[];
  readonly #chunkSizeChars: number;
  #seq = 0;
  #closing = false;
  #closed: Promise<void> | undefined;

  private constructor(server: Server, options: ModelServerOptions) {
    this.#server = server;
    const port = (server.address() as AddressInfo).port;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.baseUrl = `${this.url}/v1`;
    this.#models = options.models ?? [DEFAULT_MODEL_ID];
    this.#chunkSizeChars = Math.max(1, options.chunkSizeChars ?? DEFAULT_CHUNK_SIZE_CHARS);
    this.#events.setMaxListeners(0);
    this.addScenarios(options.scenarios ?? []);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.#handle(req, res).catch((error: unknown) => {
        // A failure here is a bug of this server; answer 500 rather than leave the host hanging.
        if (!res.headersSent) writeErrorResponse(res, 500, errorBody(String(error), 'server_error', null));
        else res.destroy();
      });
    });
  }

  /**
   * Starts a server on 127.0.0.1 (random port unless `options.port`).
   * @throws {TestkitError} `AM_TESTKIT_SCENARIO_INVALID` when a scenario's `times` is not a positive integer.
   */
  static async start(options: ModelServerOptions = {}): Promise<ModelServer> {
    const server = createLoopbackServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    let instance: ModelServer;
    try {
      instance = new ModelServer(server, options);
    } catch (error) {
      server.close();
      throw error;
    }
    const signal = options.signal;
    if (signal !== undefined) {
      if (signal.aborted) await instance.close();
      else signal.addEventListener('abort', () => void instance.close(), { once: true });
    }
    return instance;
  }

  /**
   * Appends scenarios after the existing ones (they are tried in order).
   * @throws {TestkitError} `AM_TESTKIT_SCENARIO_INVALID` when `times` is not a positive integer.
   */
  addScenarios(scenarios: readonly Scenario[]): this {
    for (const scenario of scenarios) {
      if (scenario.times !== undefined && !(Number.isInteger(scenario.times) && scenario.times > 0)) {
        throw new TestkitError(
          TESTKIT_ERROR_CODES.SCENARIO_INVALID,
          `scenario ${scenario.name ?? `#${this.#scenarios.length}`}: times must be a positive integer, got ${scenario.times}; omit it for unlimited.`,
        );
      }
      this.#scenarios.push({ scenario, label: scenario.name ?? `#${this.#scenarios.length}`, used: 0 });
    }
    return this;
  }

  /** Model ids listed by `GET /v1/models`. */
  get models(): readonly string[] {
    return this.#models;
  }

  /** Removes every scenario (and their `times` counters); the journal is kept. */
  clearScenarios(): this {
    this.#scenarios.length = 0;
    return this;
  }

  /** Recorded chat requests in arrival order, optionally filtered. The entries are live (see {@link RecordedRequest}). */
  requests(filter: RequestFilter = {}): RecordedRequest[] {
    const predicate = filter.match === undefined ? undefined : toPredicate(filter.match);
    return this.#journal.filter(
      (request) =>
        (filter.scenario === undefined || request.scenario === filter.scenario) &&
        (predicate === undefined || predicate(request)),
    );
  }

  /** Recorded requests that no scenario answered (including invalid bodies). Assert it is empty at the end of a test. */
  unmatched(): RecordedRequest[] {
    return this.#journal.filter((request) => request.scenario === undefined);
  }

  /** Forgets the recorded requests (sequence numbers keep counting). */
  clearRequests(): void {
    this.#journal.length = 0;
  }

  /**
   * Calls `listener` with each chat request on arrival (after its scenario is chosen, before it is
   * answered). Returns the unsubscribe function.
   */
  onRequest(listener: (request: RecordedRequest) => void): () => void {
    this.#events.on('request', listener);
    return () => this.#events.off('request', listener);
  }

  /**
   * Resolves with the first recorded request that matches, already recorded or arriving within
   * `timeoutMs`. Event-driven, no polling.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` (the message lists what was recorded), `AM_TESTKIT_SERVER_CLOSED`.
   */
  waitForRequest(
    match: RequestMatch | RequestPredicate,
    timeoutMs: number = DEFAULT_WAIT_TIMEOUT_MS,
  ): Promise<RecordedRequest> {
    const predicate = toPredicate(match);
    const found = this.#journal.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return this.#waitFor<RecordedRequest>(
      'request',
      (request: RecordedRequest) => (predicate(request) ? request : undefined),
      timeoutMs,
      () => `no matching request within ${timeoutMs} ms`,
    );
  }

  /**
   * Resolves when the response to `request` has ended: `complete`, `client_closed` or
   * `server_closed`. Event-driven, no polling.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT`.
   */
  waitForEnd(request: RecordedRequest, timeoutMs: number = DEFAULT_WAIT_TIMEOUT_MS): Promise<RequestEnd> {
    if (request.response.end !== 'pending') return Promise.resolve(request.response.end);
    // Not cut short by close(): closing ends every open response, which resolves this wait.
    return this.#waitFor<RequestEnd>(
      'end',
      (ended: RecordedRequest) => (ended === request ? ended.response.end : undefined),
      timeoutMs,
      () => `request #${request.seq} still pending after ${timeoutMs} ms`,
      false,
    );
  }

  /**
   * Stops listening and cuts every open response (hung ones end as `server_closed`). Pending
   * waits reject with `AM_TESTKIT_SERVER_CLOSED`. Idempotent.
   */
  close(): Promise<void> {
    if (this.#closed !== undefined) return this.#closed;
    this.#closing = true;
    this.#events.emit('closed');
    this.#closed = new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  #waitFor<T>(
    event: 'request' | 'end',
    check: (request: RecordedRequest) => T | undefined,
    timeoutMs: number,
    what: () => string,
    rejectOnClose = true,
  ): Promise<T> {
    if (this.#closing && rejectOnClose) {
      return Promise.reject(
        new TestkitError(TESTKIT_ERROR_CODES.SERVER_CLOSED, 'the model server is closed.'),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#events.off(event, onEvent);
        if (rejectOnClose) this.#events.off('closed', onClosed);
      };
      const onEvent = (request: RecordedRequest): void => {
        const value = check(request);
        if (value === undefined) return;
        cleanup();
        resolve(value);
      };
      const onClosed = (): void => {
        cleanup();
        reject(
          new TestkitError(
            TESTKIT_ERROR_CODES.SERVER_CLOSED,
            `the model server closed while waiting: ${what()}.`,
          ),
        );
      };
      const timer = setTimeout(() => {
        cleanup();
        const recorded = this.#journal.map(describeRequest);
        reject(
          new TestkitError(
            TESTKIT_ERROR_CODES.WAIT_TIMEOUT,
            `${what()}; ${recorded.length} request(s) recorded${recorded.length > 0 ? `:\n  ${recorded.join('\n  ')}` : ''}. Check the match, or raise timeoutMs.`,
          ),
        );
      }, timeoutMs);
      this.#events.on(event, onEvent);
      if (rejectOnClose) this.#events.on('closed', onClosed);
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      const data = this.#models.map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'agentmail-testkit',
      }));
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data }));
      return;
    }
    if (req.method === 'GET' && path === JOURNAL_PATH) {
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ requests: this.#journal }));
      return;
    }
    const anthropic = ANTHROPIC_MESSAGES_PATHS.includes(path);
    if (
      req.method !== 'POST' ||
      (path !== '/v1/chat/completions' && path !== '/chat/completions' && !anthropic)
    ) {
      const message = `Unknown route ${req.method} ${path}; the scripted model serves POST /v1/chat/completions, POST /v1/messages and GET /v1/models.`;
      if (anthropic || req.headers['anthropic-version'] !== undefined)
        writeErrorResponse(res, 404, anthropicErrorBody(message, 'not_found_error'));
      else writeErrorResponse(res, 404, errorBody(message, 'invalid_request_error', 'unknown_route'));
      return;
    }
    await this.#handleChat(req, res, path, anthropic);
  }

  async #handleChat(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    anthropic: boolean,
  ): Promise<void> {
    const raw = await readBody(req);
    let body: ChatRequestBody | undefined;
    let messagesBody: AnthropicRequestBody | undefined;
    let invalid: string | undefined;
    if (raw === undefined) {
      invalid = `body larger than ${MAX_REQUEST_BODY_BYTES} bytes`;
    } else {
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch (error) {
        invalid = `body is not JSON: ${(error as Error).message}`;
      }
      if (invalid === undefined) {
        // One recorded view for both wires: a Messages request is read into the chat shape.
        const parsed = anthropic
          ? anthropicRequestBodySchema.safeParse(json)
          : chatRequestBodySchema.safeParse(json);
        if (parsed.success) {
          if (anthropic) {
            messagesBody = parsed.data as AnthropicRequestBody;
            body = chatViewOfMessages(messagesBody);
          } else body = parsed.data as ChatRequestBody;
        } else
          invalid = `body is not a ${anthropic ? 'Messages' : 'chat'} request: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`;
      }
    }
    const fail = (status: number, message: string, type: string, code: string): void => {
      if (anthropic) writeErrorResponse(res, status, anthropicErrorBody(message, type));
      else writeErrorResponse(res, status, errorBody(message, type, code));
    };

    const record: MutableRecord = {
      seq: ++this.#seq,
      receivedAtMs: Date.now(),
      method: req.method ?? 'POST',
      path,
      headers: flattenHeaders(req),
      body,
      invalid,
      ...deriveViews(body),
      scenario: undefined,
      response: { status: undefined, end: 'pending' },
    };
    // Choose synchronously, right at arrival: concurrent requests (a title request next to the
    // first turn) cannot both take a scenario limited to `times: 1`.
    let active: ActiveScenario | undefined;
    let matchFailure: string | undefined;
    try {
      active = body === undefined ? undefined : this.#scenarios.find((s) => this.#selects(s, record));
    } catch (error) {
      matchFailure = `a scenario predicate threw: ${String(error)}`;
    }
    if (active !== undefined) {
      active.used += 1;
      record.scenario = active.label;
    }
    this.#journal.push(record);
    res.on('close', () => {
      record.response.end = res.writableFinished
        ? 'complete'
        : this.#closing
          ? 'server_closed'
          : 'client_closed';
      this.#events.emit('end', record);
    });
    this.#events.emit('request', record);

    if (body === undefined) {
      record.response.status = raw === undefined ? 413 : 400;
      fail(record.response.status, invalid ?? '', 'invalid_request_error', 'invalid_body');
      return;
    }
    if (matchFailure !== undefined) {
      record.response.status = 500;
      fail(500, matchFailure, anthropic ? 'api_error' : 'server_error', 'scenario_match_failed');
      return;
    }
    if (active === undefined) {
      record.response.status = 400;
      const message = `No scenario matched request ${describeRequest(record)}. Add a scenario whose match fits, or a catch-all ({ match: {} }) last.`;
      fail(400, message, 'invalid_request_error', 'no_scenario_matched');
      return;
    }
    let reply: ScenarioReply;
    try {
      reply =
        typeof active.scenario.reply === 'function' ? active.scenario.reply(record) : active.scenario.reply;
    } catch (error) {
      record.response.status = 500;
      const message = `scenario ${active.label} reply function threw: ${String(error)}`;
      fail(500, message, anthropic ? 'api_error' : 'server_error', 'scenario_reply_failed');
      return;
    }
    const onStatus = (status: number): void => {
      record.response.status = status;
    };
    if (messagesBody !== undefined && raw !== undefined) {
      await writeAnthropicReply(
        reply,
        { seq: record.seq, raw, body: messagesBody, chunkSizeChars: this.#chunkSizeChars },
        req,
        res,
        onStatus,
      );
      return;
    }
    await writeReply(reply, { seq: record.seq, body, chunkSizeChars: this.#chunkSizeChars }, res, onStatus);
  }

  #selects(active: ActiveScenario, record: RecordedRequest): boolean {
    const { times, match } = active.scenario;
    if (times !== undefined && active.used >= times) return false;
    return match === undefined || matchesRequest(match, record);
  }
}

/**
 * Starts a scripted model server; see {@link ModelServer}.
 * @throws {TestkitError} `AM_TESTKIT_SCENARIO_INVALID` when a scenario's `times` is not a positive integer.
 */
export function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  return ModelServer.start(options);
}
