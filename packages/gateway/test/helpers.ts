/**
 * Test helpers: a real Gateway on a loopback port over a real SQLite file in a temp dir, raw HTTP
 * (`rawRequest`: tests send what no client would), SSE frames via shared-policy's SseFrameDecoder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseFrame } from '@agentmail/shared-policy/client';
import type { FastifyInstance } from 'fastify';
import { onTestFinished } from 'vitest';
import { type BuildAppHooks, buildApp, type GatewayOptions, initDataDir } from '../src/index.js';
import { testDatabaseFor } from './helpers/postgres.js';
import { connectSse, rawRequest } from './helpers/processes.js';

export interface TestGateway {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  adminToken: string;
  /** Stop the server (keeps the data dir). */
  stop: () => Promise<void>;
  /** Stop and remove the data dir. */
  close: () => Promise<void>;
}

/** A temp directory removed when the current test finishes. */
export function tempDir(prefix = 'agentmail-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** What a promise rejects with; fails the test when it resolves. */
export async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Start a Gateway; `dataDir` reuses an existing directory (restart tests). */
export async function startGateway(
  options: Partial<GatewayOptions> & { adminToken?: string } = {},
  hooks: BuildAppHooks = {},
): Promise<TestGateway> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'agentmail-gw-'));
  // The gateway-postgres project: a database of its own per data directory.
  const databaseUrl = options.databaseUrl ?? (await testDatabaseFor(dataDir));
  const init = await initDataDir(dataDir, { databaseUrl });
  const adminToken = init.adminToken ?? options.adminToken ?? '';
  const app = await buildApp(
    {
      logLevel: 'silent',
      sweepTimer: false,
      requestsPerMinute: false,
      checkResponses: true,
      ...options,
      dataDir,
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
    },
    hooks,
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  const url = `http://127.0.0.1:${addr.port}`;
  const stop = async () => {
    await app.close();
  };
  return {
    app,
    url,
    dataDir,
    adminToken,
    stop,
    close: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `n` Gateways on one store (the gateway-postgres project: one new database; each Gateway with a
 * data directory of its own), closed when the current test finishes.
 * @throws Error on SQLite, where a store has one Gateway
 */
export async function startGateways(
  n: number,
  options: Partial<GatewayOptions> = {},
): Promise<TestGateway[]> {
  const first = await startGateway(options);
  onTestFinished(() => first.close());
  const databaseUrl = first.app.gateway.config.databaseUrl;
  if (databaseUrl === undefined)
    throw new Error('several Gateways on one store need PostgreSQL (the gateway-postgres project)');
  const all = [first];
  for (let i = 1; i < n; i++) {
    const gw = await startGateway({ ...options, databaseUrl, adminToken: first.adminToken });
    onTestFinished(() => gw.close());
    all.push(gw);
  }
  return all;
}

/** Two Gateways on one store with the agent `pi` and the person `alice` (see {@link startGateways}). */
export async function startPair(
  options: Partial<GatewayOptions> = {},
): Promise<{ a: TestGateway; b: TestGateway; pi: string; alice: string }> {
  const [a, b] = await startGateways(2, options);
  if (!a || !b) throw new Error('two gateways');
  return { a, b, pi: await addAgent(a, 'pi'), alice: await addUser(a, 'alice') };
}

export interface ApiResult<T = Record<string, unknown>> {
  status: number;
  body: T;
}

/** One JSON request. `body: undefined` sends no body; a string is sent raw. */
export async function api<T = Record<string, unknown>>(
  gw: { url: string },
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResult<T>> {
  const url = `${gw.url}${path.startsWith('/api') || path === '/healthz' ? path : `/api/v1${path}`}`;
  const r = await rawRequest(url, method, { token, body, headers });
  return { status: r.status, body: (r.body ?? {}) as T };
}

/** Create a person; returns the token. */
export async function addUser(gw: TestGateway, name: string): Promise<string> {
  const r = await api<{ token: string }>(gw, 'POST', '/admin/users', gw.adminToken, { name });
  if (r.status !== 200) throw new Error(`add user ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.token;
}

/** Issue a key for an agent and register it; returns the key. */
export async function addAgent(gw: TestGateway, name: string, platform = 'pi'): Promise<string> {
  const k = await api<{ key: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, { agent_name: name });
  if (k.status !== 200) throw new Error(`key ${name}: ${k.status} ${JSON.stringify(k.body)}`);
  const r = await api(gw, 'POST', '/agent/register', k.body.key, { name, platform });
  if (r.status !== 200) throw new Error(`register ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return k.body.key;
}

/** An open SSE stream: the raw frames of the wire. */
export interface SseStream {
  events: SseFrame[];
  /** Resolve with the next event matching `pred` (already received ones count), or reject on timeout. */
  next: (pred?: (e: SseFrame) => boolean, timeoutMs?: number) => Promise<SseFrame>;
  /** Resolve once `count` events matching arrived. */
  waitFor: (count: number, pred?: (e: SseFrame) => boolean, timeoutMs?: number) => Promise<SseFrame[]>;
  /** Resolves when the response headers arrived and the first comment was read. */
  ready: Promise<void>;
  close: () => void;
}

/** Open an SSE stream (`path` under `/api/v1`) with real HTTP; see `connectSse`. */
export function openSse(gw: { url: string }, path: string, token: string, lastEventId?: string): SseStream {
  const sse = connectSse(`${gw.url}/api/v1${path}`, token, lastEventId);
  const frames = sse.frames;
  let consumed = 0;
  const describe = (count: number) => () =>
    `timed out waiting for ${count} SSE events on ${path}; got ${JSON.stringify(frames.items.map((e) => e.event))}`;
  const waitFor = (count: number, pred: (e: SseFrame) => boolean = () => true, timeoutMs = 5_000) =>
    frames.waitForCount(count, pred, { timeoutMs, describe: describe(count) });
  const next = async (pred: (e: SseFrame) => boolean = () => true, timeoutMs = 5_000) => {
    const e = await frames.waitFor(pred, { from: consumed, timeoutMs, describe: describe(1) });
    consumed = frames.items.indexOf(e) + 1;
    return e;
  };
  return { events: frames.items, next, waitFor, ready: sse.ready, close: sse.close };
}

/** Parse an SSE event's JSON data. */
export function dataOf<T = Record<string, unknown>>(e: SseFrame): T {
  return JSON.parse(e.data) as T;
}
