/**
 * Child-process helpers for the CLI and example tests: run a command to completion, start
 * `agentmail serve` and wait for its "listening" line, talk to the agent API, follow an SSE stream.
 * Everything waits on output or events with a timeout; nothing sleeps.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type SseFrame, SseFrameDecoder } from '@agentmail/shared-policy/client';
import { request } from 'undici';
import { testDatabaseFor } from './postgres.js';

/** Result of a finished child process. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Default time a child process may run before the helper kills it, in ms. Generous on purpose:
 * on a loaded 2-core machine (a full `pnpm test` beside other work) starting one Node process
 * was measured at 13–20 s, so a short budget makes a correct test fail.
 */
export const CHILD_TIMEOUT_MS = 60_000;

/**
 * Per-test timeout for tests that run child processes one after another, in ms. Each child has
 * its own {@link CHILD_TIMEOUT_MS}; this only backs them up, so it is never the limit that a
 * slow but correct run hits first.
 */
export const PROCESS_TEST_TIMEOUT_MS = 300_000;

/** Environment without any AGENTMAIL_* variable of the developer's shell, plus `extra`. */
export function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AGENTMAIL_')) env[k] = v;
  return { ...env, ...extra };
}

/** Run `command args` to completion (killed after `timeoutMs`), feeding `input` (text, or raw bytes) on stdin. */
export function run(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; input?: string | Uint8Array; timeoutMs?: number; cwd?: string },
): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${command} ${args.join(' ')} did not finish\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? CHILD_TIMEOUT_MS);
    child.once('error', fail);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    // A child that exits without reading its input (a usage error) closes the pipe first; the
    // EPIPE of our write is expected then, and its exit code is what the test checks.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') fail(err);
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A running `agentmail serve`. */
export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  /** Base URL from the "listening" line. */
  url: string;
  /** Every stdout line printed up to and including the "listening" line. */
  startupLines: string[];
  /** SIGTERM, then wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Start `node mainJs serve …args` and resolve once it printed its "listening on <url>" line (or,
 * with `--json` among the args, its `{"event":"listening","url":…}` line).
 * @throws Error when it exits first or does not listen within `timeoutMs`.
 */
export function startServe(
  mainJs: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = CHILD_TIMEOUT_MS,
): Promise<ServeProcess> {
  return (async () => {
    // The gateway-postgres project: the child's store is a database of its own per data directory.
    const at = args.indexOf('--data-dir');
    const dataDir = at >= 0 ? args[at + 1] : env.AGENTMAIL_DATA_DIR;
    const databaseUrl = dataDir === undefined ? undefined : await testDatabaseFor(dataDir);
    return spawnServe(
      mainJs,
      args,
      databaseUrl === undefined || env.AGENTMAIL_DATABASE_URL !== undefined
        ? env
        : { ...env, AGENTMAIL_DATABASE_URL: databaseUrl },
      timeoutMs,
    );
  })();
}

function spawnServe(
  mainJs: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ServeProcess> {
  // Every Gateway a test starts checks its answers against the protocol schemas (checkResponses).
  const child = spawn(process.execPath, [mainJs, 'serve', '--check-responses', ...args], {
    env,
    stdio: 'pipe',
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const lines: string[] = [];
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`serve did not listen in time\nstdout: ${lines.join('\n')}\nstderr: ${stderr}`));
    }, timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`serve exited with ${code}\nstdout: ${lines.join('\n')}\nstderr: ${stderr}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const m =
        /listening on (http:\/\/\S+)/.exec(line) ?? /"event":"listening","url":"(http:\/\/[^"]+)"/.exec(line);
      if (m?.[1]) {
        clearTimeout(timer);
        done({
          child,
          url: m[1],
          startupLines: [...lines],
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
  });
}

/**
 * One raw HTTP request, for tests that send what no client would (a string body, odd headers,
 * any status back): `token` as `Authorization: Bearer`, an object body as JSON, a string as is.
 * Resolves with the status, the answer's headers and the JSON body (`undefined` when empty).
 */
export async function rawRequest(
  url: string,
  method: string,
  options: { token?: string | undefined; body?: unknown; headers?: Readonly<Record<string, string>> } = {},
): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let payload: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await request(url, {
    method: method as 'GET',
    headers,
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

/** Call an agent (or any) route with a Bearer token; returns status and parsed JSON body. */
export async function callApi<T = Record<string, unknown>>(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const r = await rawRequest(new URL(path, baseUrl).href, method, { token, body });
  return { status: r.status, body: r.body as T };
}

/**
 * A list that grows while a test waits on it: every wait looks at what is there, then at each
 * new item, until one matches or time runs out (no polling, no sleeps).
 */
export class Watched<T> {
  readonly items: T[] = [];
  readonly #waiters = new Set<() => void>();

  push(item: T): void {
    this.items.push(item);
    for (const w of [...this.#waiters]) w();
  }

  /**
   * Resolve once `count` items at index ≥ `from` match `predicate` (with those items); reject
   * after `timeoutMs` with `describe()` of what arrived.
   */
  waitForCount(
    count: number,
    predicate: (item: T) => boolean,
    options: { from?: number; timeoutMs: number; describe: () => string },
  ): Promise<T[]> {
    return new Promise((done, fail) => {
      const check = (): void => {
        const matching = this.items.slice(options.from ?? 0).filter(predicate);
        if (matching.length < count) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        done(matching);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        fail(new Error(options.describe()));
      }, options.timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }

  /** The first item at index ≥ `from` (past or future) matching `predicate`; see {@link waitForCount}. */
  async waitFor(
    predicate: (item: T) => boolean,
    options: { from?: number; timeoutMs: number; describe: () => string },
  ): Promise<T> {
    return (await this.waitForCount(1, predicate, options))[0] as T;
  }
}

/** An open SSE connection: its frames as they arrive. */
export interface SseConnection {
  frames: Watched<SseFrame>;
  /** Resolves once the Gateway's first comment arrived (the stream is registered); rejects on a non-200. */
  ready: Promise<void>;
  close(): void;
}

/**
 * `GET url` as an SSE stream with a Bearer token (and `Last-Event-ID` when given), decoded by
 * shared-policy's SseFrameDecoder: the raw frames of the wire, for tests of the Gateway's stream.
 */
export function connectSse(url: string, token: string, lastEventId?: string): SseConnection {
  const controller = new AbortController();
  const frames = new Watched<SseFrame>();
  let markReady: () => void = () => {};
  let failReady: (err: unknown) => void = () => {};
  const ready = new Promise<void>((done, fail) => {
    markReady = done;
    failReady = fail;
  });
  ready.catch(() => {}); // observed by the test when it awaits it
  const decoder = new SseFrameDecoder({ onFrame: (f) => frames.push(f), onComment: () => markReady() });
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  void (async () => {
    try {
      const res = await request(url, { method: 'GET', signal: controller.signal, headers, bodyTimeout: 0 });
      if (res.statusCode !== 200) {
        failReady(new Error(`SSE ${new URL(url).pathname}: HTTP ${res.statusCode} ${await res.body.text()}`));
        return;
      }
      for await (const chunk of res.body) decoder.push(chunk as Buffer);
    } catch (err) {
      failReady(err);
    }
  })();
  return { frames, ready, close: () => controller.abort() };
}

/** One received SSE event, its data parsed. */
export interface ReceivedEvent {
  id: string | undefined;
  event: string | undefined;
  data: unknown;
}

/** An open SSE stream collecting events, with a way to wait for one. */
export interface EventStream {
  events: ReceivedEvent[];
  /** Resolve with the first event (past or future) matching `predicate`; reject after `timeoutMs`. */
  waitFor(predicate: (e: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): void;
}

/** Open `GET path` as an SSE stream with a Bearer token; resolves once the Gateway accepted it. */
export async function openEvents(baseUrl: string, path: string, token: string): Promise<EventStream> {
  const sse = connectSse(new URL(path, baseUrl).href, token);
  await sse.ready;
  const received = (f: SseFrame): ReceivedEvent => ({ id: f.id, event: f.event, data: JSON.parse(f.data) });
  return {
    get events() {
      return sse.frames.items.map(received);
    },
    waitFor: async (predicate, timeoutMs = CHILD_TIMEOUT_MS) =>
      received(
        await sse.frames.waitFor((f) => predicate(received(f)), {
          timeoutMs,
          describe: () => `no matching event; got ${JSON.stringify(sse.frames.items.map(received))}`,
        }),
      ),
    close: sse.close,
  };
}

/** A long-running child whose output lines can be awaited. */
export interface WatchedProcess {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout and stderr line so far, in order of arrival. */
  lines: string[];
  /**
   * Resolve with the first line at index ≥ `after` (past or future) matching `pattern`; reject
   * after `timeoutMs`.
   */
  waitForLine(pattern: RegExp, options?: { after?: number; timeoutMs?: number }): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Spawn `command args` and follow its stdout and stderr line by line. */
export function spawnWatched(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string },
): WatchedProcess {
  const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: 'pipe' });
  child.stdin.end();
  const lines = new Watched<string>();
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
  createInterface({ input: child.stderr }).on('line', (line) => lines.push(line));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    lines: lines.items,
    exited,
    waitForLine: (pattern, { after = 0, timeoutMs = 15_000 } = {}) =>
      lines.waitFor((l) => pattern.test(l), {
        from: after,
        timeoutMs,
        describe: () => `no line matching ${pattern}; output:\n${lines.items.join('\n')}`,
      }),
  };
}
