/**
 * `pnpm bench` for the Gateway: one run on loopback against a real `agentmail serve` child process
 * with a fresh SQLite data directory, then the same against a fresh PostgreSQL database (a
 * throwaway cluster when PostgreSQL is installed, or `--postgres <url>` of a server it may create
 * databases on; `--postgres off` skips it), printed side by side. Measures
 *  1. latency from `POST /mail/send` to the `new_mail` event at a connected agent (p50/p99),
 *  2. sends per second sustained on SQLite (concurrent senders for a fixed time),
 *  3. SSE fan-out: time until every one of N open streams of one agent got one event.
 * Bounded in count and time (BENCH_TIMEOUT_MS); loopback only. Built and started by
 * bench/tsup.config.ts (see the `bench` script).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { routePath } from '@agentmail/protocol';
import { SseFrameDecoder } from '@agentmail/shared-policy/client';
import { Agent, request } from 'undici';
import { createDatabase, postgresBinDir, startPostgresCluster } from '../test/helpers/postgres-cluster.js';

/** The whole bench is stopped after this long, in ms. @default 180_000 */
export const BENCH_TIMEOUT_MS = 180_000;

/** How long one phase waits for an event before calling it lost, in ms. @default 30_000 */
export const EVENT_WAIT_MS = 30_000;

const { values: args } = parseArgs({
  options: {
    sends: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    streams: { type: 'string', default: '1000' },
    postgres: { type: 'string' },
  },
});
const SENDS = Number(args.sends);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const STREAMS = Number(args.streams);

// One dispatcher with no connection cap: 1000 SSE streams each hold a socket.
const dispatcher = new Agent({ connections: null, keepAliveTimeout: 10_000 });

interface Server {
  url: string;
  adminToken: string;
  stop(): Promise<void>;
}

async function startServer(dataDir: string, databaseUrl?: string): Promise<Server> {
  const mainJs = join(dirname(fileURLToPath(import.meta.url)), 'main.js');
  const child = spawn(
    process.execPath,
    [
      mainJs,
      '--json',
      'serve',
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--requests-per-minute',
      '0',
      '--log-level',
      'warn',
      ...(databaseUrl === undefined ? [] : ['--database', databaseUrl]),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  process.once('exit', () => child.kill('SIGKILL'));
  let adminToken = '';
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('server did not start within 30 s')), 30_000);
    child.once('exit', (code) => fail(new Error(`server exited with ${code} before listening`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg: { event?: string; admin_token?: string; url?: string };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return; // a log line
      }
      if (msg.event === 'admin_token' && msg.admin_token) adminToken = msg.admin_token;
      if (msg.event === 'listening' && msg.url) {
        clearTimeout(timer);
        done(msg.url);
      }
    });
  });
  return {
    url,
    adminToken,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function call<T>(
  server: Server,
  method: 'GET' | 'POST',
  path: string,
  token: string,
  body?: unknown,
): Promise<T> {
  const res = await request(new URL(path, server.url), {
    method,
    dispatcher,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode} ${text}`);
  return JSON.parse(text) as T;
}

async function newAgent(server: Server, name: string): Promise<string> {
  const { key } = await call<{ key: string }>(
    server,
    'POST',
    routePath('adminIssueAgentKey'),
    server.adminToken,
    {
      agent_name: name,
    },
  );
  await call(server, 'POST', routePath('register'), key, { name, platform: 'bench' });
  return key;
}

/** One open SSE stream; `onMail` sees the mail id of every `new_mail` event. */
async function openStream(
  server: Server,
  key: string,
  onMail: (mailId: string) => void,
): Promise<() => void> {
  const controller = new AbortController();
  const res = await request(new URL(routePath('events'), server.url), {
    method: 'GET',
    dispatcher,
    signal: controller.signal,
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    bodyTimeout: 0,
  });
  if (res.statusCode !== 200) throw new Error(`GET /events → ${res.statusCode} ${await res.body.text()}`);
  const decoder = new SseFrameDecoder({
    onFrame: (frame) => {
      if (frame.event === 'new_mail') onMail((JSON.parse(frame.data) as { mail_id: string }).mail_id);
    },
  });
  (async () => {
    for await (const chunk of res.body) decoder.push(chunk as Buffer);
  })().catch(() => {
    // aborted at the end of the bench
  });
  return () => controller.abort();
}

/** A sender writing into one session, opening a new one (`.new`) whenever the budget runs out. */
class Sender {
  private address: string | undefined;
  private roundsLeft = 0;
  constructor(
    private readonly server: Server,
    private readonly key: string,
    private readonly recipient: string,
    private readonly path: string,
  ) {}

  async send(subject: string): Promise<string> {
    const fresh = this.address === undefined || this.roundsLeft < 1;
    const res = await call<{ mail_id: string; address: string; rounds_left: number | null }>(
      this.server,
      'POST',
      routePath('send'),
      this.key,
      {
        to: fresh ? `${this.recipient}@${this.path}.new` : this.address,
        subject,
        body: `bench mail: ${subject}`,
        ...(fresh ? { max_rounds: 1000 } : {}),
      },
    );
    this.address = res.address;
    this.roundsLeft = res.rounds_left ?? 1000;
    return res.mail_id;
  }
}

/** Arrival times (performance.now()) of mail ids, with waiters for ids not seen yet. */
class Arrivals {
  private readonly seen = new Map<string, number>();
  private readonly waiting = new Map<string, (t: number) => void>();
  record = (mailId: string): void => {
    const t = performance.now();
    this.seen.set(mailId, t);
    this.waiting.get(mailId)?.(t);
  };
  when(mailId: string): Promise<number> {
    const t = this.seen.get(mailId);
    if (t !== undefined) return Promise.resolve(t);
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no new_mail for ${mailId}`)), EVENT_WAIT_MS);
      this.waiting.set(mailId, (at) => {
        clearTimeout(timer);
        this.waiting.delete(mailId);
        done(at);
      });
    });
  }
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

async function latencyPhase(server: Server): Promise<{ p50: number; p99: number; max: number }> {
  const recvKey = await newAgent(server, 'bench-recv');
  const sender = new Sender(server, await newAgent(server, 'bench-lat'), 'bench-recv', '/bench/latency');
  const arrivals = new Arrivals();
  const close = await openStream(server, recvKey, arrivals.record);
  try {
    for (let i = 0; i < 20; i++) await arrivals.when(await sender.send(`warm-up ${i}`));
    const samples: number[] = [];
    for (let i = 0; i < SENDS; i++) {
      const t0 = performance.now();
      const id = await sender.send(`latency ${i}`);
      samples.push((await arrivals.when(id)) - t0);
    }
    samples.sort((a, b) => a - b);
    return {
      p50: percentile(samples, 0.5),
      p99: percentile(samples, 0.99),
      max: samples.at(-1) ?? Number.NaN,
    };
  } finally {
    close();
  }
}

async function throughputPhase(
  server: Server,
): Promise<{ sends: number; perSecond: number; errors: number }> {
  const recvKey = await newAgent(server, 'bench-sink');
  const close = await openStream(server, recvKey, () => {});
  const senders: Sender[] = [];
  for (let w = 0; w < CONCURRENCY; w++) {
    senders.push(
      new Sender(server, await newAgent(server, `bench-send-${w}`), 'bench-sink', `/bench/load${w}`),
    );
  }
  let sends = 0;
  let errors = 0;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    senders.map(async (sender, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        try {
          await sender.send(`load ${w}-${i}`);
          sends++;
        } catch (err) {
          errors++;
          if (errors === 1) console.error(`first send error: ${(err as Error).message}`);
        }
      }
    }),
  );
  const elapsedS = (performance.now() - t0) / 1000;
  close();
  return { sends, perSecond: sends / elapsedS, errors };
}

async function fanOutPhase(server: Server): Promise<{ allMs: number; firstMs: number; connectMs: number }> {
  const key = await newAgent(server, 'bench-fan');
  const sender = new Sender(server, await newAgent(server, 'bench-fan-send'), 'bench-fan', '/bench/fanout');
  const counts = new Map<string, number>();
  const firsts = new Map<string, number>();
  const waiters = new Map<string, (t: number) => void>();
  const onMail = (mailId: string): void => {
    const n = (counts.get(mailId) ?? 0) + 1;
    counts.set(mailId, n);
    if (n === 1) firsts.set(mailId, performance.now());
    if (n === STREAMS) waiters.get(mailId)?.(performance.now());
  };
  const allReceived = (mailId: string): Promise<number> =>
    new Promise((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`only ${counts.get(mailId) ?? 0}/${STREAMS} streams got ${mailId}`)),
        EVENT_WAIT_MS,
      );
      waiters.set(mailId, (t) => {
        clearTimeout(timer);
        done(t);
      });
      if ((counts.get(mailId) ?? 0) >= STREAMS) done(performance.now());
    });
  const c0 = performance.now();
  const closers: (() => void)[] = [];
  for (let batch = 0; batch < STREAMS; batch += 100) {
    const n = Math.min(100, STREAMS - batch);
    closers.push(...(await Promise.all(Array.from({ length: n }, () => openStream(server, key, onMail)))));
  }
  const connectMs = performance.now() - c0;
  try {
    // Warm-up: proves every stream is subscribed before the measured send.
    const warm = await sender.send('fan-out warm-up');
    await allReceived(warm);
    const t0 = performance.now();
    const id = await sender.send('fan-out');
    const tAll = await allReceived(id);
    return { allMs: tAll - t0, firstMs: (firsts.get(id) ?? Number.NaN) - t0, connectMs };
  } finally {
    for (const close of closers) close();
  }
}

/** The figures of one store, as printed. */
async function measure(server: Server): Promise<Array<[string, string]>> {
  const lat = await latencyPhase(server);
  const tp = await throughputPhase(server);
  const fan = await fanOutPhase(server);
  const ms = (v: number): string => `${v.toFixed(2)} ms`;
  return [
    [`send → new_mail latency p50 (${SENDS} sequential sends)`, ms(lat.p50)],
    ['send → new_mail latency p99', ms(lat.p99)],
    ['send → new_mail latency max', ms(lat.max)],
    [
      `sends/s sustained (${SECONDS} s, ${CONCURRENCY} concurrent senders)`,
      `${tp.perSecond.toFixed(0)} /s (${tp.sends} sent, ${tp.errors} errors)`,
    ],
    [`SSE fan-out, ${STREAMS} streams, one send: all received`, ms(fan.allMs)],
    ['SSE fan-out: first stream received', ms(fan.firstMs)],
    [`SSE connect ${STREAMS} streams (batches of 100)`, ms(fan.connectMs)],
  ];
}

/** A PostgreSQL database for the second run, and how to drop what was made for it. */
async function postgresTarget(): Promise<{ url: string; stop: () => void } | { skipped: string }> {
  if (args.postgres === 'off') return { skipped: '--postgres off' };
  const name = `am_bench_${Date.now().toString(36)}`;
  if (args.postgres) return { url: await createDatabase(args.postgres, name), stop: () => {} };
  if (postgresBinDir() === undefined)
    return { skipped: 'PostgreSQL is not installed (apt-get install postgresql)' };
  const cluster = startPostgresCluster();
  try {
    return { url: await createDatabase(cluster.url, name), stop: cluster.stop };
  } catch (err) {
    cluster.stop();
    throw err;
  }
}

async function main(): Promise<void> {
  const guard = setTimeout(() => {
    console.error(`bench: exceeded ${BENCH_TIMEOUT_MS} ms, giving up`);
    process.exit(1);
  }, BENCH_TIMEOUT_MS);
  guard.unref();
  const columns: Array<{ name: string; rows: Array<[string, string]> }> = [];
  const dataDir = await mkdtemp(join(tmpdir(), 'agentmail-bench-'));
  try {
    const sqlite = await startServer(join(dataDir, 'sqlite'));
    try {
      columns.push({ name: 'SQLite (WAL)', rows: await measure(sqlite) });
    } finally {
      await sqlite.stop();
    }
    const pgTarget = await postgresTarget();
    if ('skipped' in pgTarget) columns.push({ name: `PostgreSQL: skipped (${pgTarget.skipped})`, rows: [] });
    else {
      try {
        const server = await startServer(join(dataDir, 'postgres'), pgTarget.url);
        try {
          columns.push({ name: 'PostgreSQL', rows: await measure(server) });
        } finally {
          await server.stop();
        }
      } finally {
        pgTarget.stop();
      }
    }
    const labels = columns[0]?.rows.map(([k]) => k) ?? [];
    const width = Math.max(...labels.map((k) => k.length));
    const col = Math.max(...columns.flatMap((c) => c.rows.map(([, v]) => v.length)), 12);
    console.log(
      `AgentMail Gateway bench — loopback, node ${process.version}, ${availableParallelism()} CPUs`,
    );
    console.log(`${''.padEnd(width)}  ${columns.map((c) => c.name.padEnd(col)).join('  ')}`);
    labels.forEach((label, i) => {
      console.log(
        `${label.padEnd(width)}  ${columns.map((c) => (c.rows[i]?.[1] ?? '—').padEnd(col)).join('  ')}`,
      );
    });
  } finally {
    await dispatcher.destroy().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
    clearTimeout(guard);
  }
}

await main();
