/**
 * `pnpm bench` for bridge-pi (issue 4 acceptance: "the SSE-reading loop of the daemon never runs
 * model work"). One run on loopback: a real Gateway child process, the scripted model server, and
 * the real `agentmail-pi` daemon as a child process (harness/pi-adapter.ts) with
 * `AGENTMAIL_LOOP_STATS=1`. Three ~20 MB pi session files are written where pi keeps a person's own
 * sessions; the daemon's first heartbeat reports them, and one mail to each (`pi@<dir>.<pi id>`)
 * adopts it (SPEC G-37), so three workers resume a 20 MB session at once (B-4, B-12) while
 * heartbeats run every 2 s. The daemon's event-loop delay over exactly that window is read with
 * SIGUSR2 (src/loop-stats.ts); the target is under 20 ms max (printed as OK / ABOVE TARGET; a bench prints figures and is
 * not a timed test, so it exits 0 whenever it measured). Also prints
 * per worker: spawn → first model request, peak RSS, spawn → turn done, send → reply.
 * Bounded by BENCH_TIMEOUT_MS; everything it started is stopped at the end.
 *
 * Run: `pnpm --filter @agentmail/bridge-pi bench` (or `pnpm bench` at the root). Options:
 * `--turns N` (default 3), `--mb N` (session size, default 20), `--heartbeat-ms N` (default 2000).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  formatMs,
  type ManagedProcess,
  markdownTable,
  runStackBench,
  type StackRef,
  startStack,
} from '@agentmail/testkit';
import { piAdapter, prepareBundle, removeBundle } from '../harness/pi-adapter.js';
import { WORKER_NICE } from '../src/constants.js';
import type { LoopDelayStats } from '../src/loop-stats.js';
import { lowerPriority } from '../src/priority.js';
import { type PiSessionFileInfo, writePiSession } from './pi-session-file.js';

/** The whole bench is stopped after this long, in ms. @default 300_000 */
export const BENCH_TIMEOUT_MS = 300_000;
/** Time one turn may take (daemon turn timeout and reply wait), in ms. @default 180_000 */
export const TURN_TIMEOUT_MS = 180_000;
/** The acceptance limit on the daemon's event-loop delay during the turns, in ms. */
export const LOOP_DELAY_LIMIT_MS = 20;
/**
 * Time the daemon runs idle after `ready` before the mails are sent, in ms: a daemon runs for
 * days, and its first seconds carry start-up effects (V8 collecting the start-up garbage in
 * 20–30 ms pauses). That window is printed apart, not judged. @default 10_000
 */
export const SETTLE_MS = 10_000;

const MODEL_ID = 'scripted-model';
const { values: args } = parseArgs({
  options: {
    turns: { type: 'string', default: '3' },
    mb: { type: 'string', default: '20' },
    'heartbeat-ms': { type: 'string', default: '2000' },
  },
});
const TURNS = Number(args.turns);
const SESSION_BYTES = Math.round(Number(args.mb) * 1024 * 1024);
const HEARTBEAT_MS = Number(args['heartbeat-ms']);

interface LogLine {
  msg?: string;
  time?: number;
  mail_id?: string;
  pid?: number;
  worker_max_rss_kb?: number;
  loop_delay?: LoopDelayStats;
  [key: string]: unknown;
}

function parseLog(line: string): LogLine | undefined {
  if (!line.startsWith('[stderr] {')) return undefined;
  try {
    return JSON.parse(line.slice('[stderr] '.length)) as LogLine;
  } catch {
    return undefined;
  }
}

/** SIGUSR2 → the daemon logs the event-loop delay since the previous report and starts a new window. */
/**
 * The scripted model server runs inside this bench process; in production the model provider is
 * remote and takes no CPU from the daemon's machine. Parsing three 20 MB requests at normal
 * priority here would compete with the daemon for the 2 cores, which is not what is measured.
 * So, once the Gateway and the daemon are started (they keep their own priority), this process
 * lowers its own nice value and that of its autogroup (Linux), like the bridge's workers do.
 */
function yieldCpuLikeARemoteProvider(): void {
  lowerPriority(WORKER_NICE);
}

/** `count / total ms / longest ms (kind)` of the daemon's garbage collections in a window. */
function gcCell(stats: LoopDelayStats): string {
  return `${stats.gc_count} / ${stats.gc_total_ms} ms / ${stats.gc_max_ms} ms (${stats.gc_max_kind || '-'})`;
}

async function loopDelay(proc: ManagedProcess): Promise<LoopDelayStats> {
  const before = proc.bridgeEvents('loop_delay').length;
  const next = proc.waitForEvent('loop_delay', 10_000, () => proc.bridgeEvents('loop_delay').length > before);
  process.kill(proc.pid, 'SIGUSR2');
  return (await next) as unknown as LoopDelayStats;
}

const fmtMb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function run(stackRef: StackRef): Promise<boolean> {
  const buildStart = performance.now();
  await prepareBundle();
  const buildMs = performance.now() - buildStart;
  const stack = await startStack({
    agentName: 'pi',
    platform: 'pi',
    models: [MODEL_ID],
    // Requests without tools are title requests; answer them so they never reach a turn step.
    scenarios: [{ name: 'title', match: { hasTools: false }, reply: { type: 'text', text: 'Bench' } }],
  });
  stackRef.stack = stack;
  const agentDir = join(stack.bridgeStateDir, 'pi-agent');

  // The sessions a person made in their own pi, one per turn (written before the daemon's first heartbeat).
  const writeStart = performance.now();
  const sessions: PiSessionFileInfo[] = [];
  const ids: string[] = [];
  for (let i = 0; i < TURNS; i++) {
    const id = randomUUID();
    ids.push(id);
    sessions.push(
      await writePiSession(agentDir, {
        id,
        cwd: stack.workdir,
        targetBytes: SESSION_BYTES,
        provider: stack.modelProvider,
        model: MODEL_ID,
      }),
    );
  }
  const writeMs = performance.now() - writeStart;

  // Each turn: read_mail, then answer (two model requests, each carrying the whole session).
  const marks = ids.map(() => `bench.${randomBytes(4).toString('hex')}`);
  const mailIds = new Map<string, string>();
  for (const mark of marks)
    stack.model.addScenarios([
      {
        name: `${mark}:read_mail`,
        match: { lastUserMessage: mark, hasToolResult: false, hasTools: true },
        reply: () => {
          const id = mailIds.get(mark);
          return id
            ? { type: 'tool_calls', calls: [{ name: 'read_mail', arguments: { mail_id: id } }] }
            : { type: 'text', text: `DONE ${mark} (mail id unknown)` };
        },
      },
      {
        name: `${mark}:answer`,
        match: { lastUserMessage: mark, hasToolResult: true },
        reply: { type: 'text', text: `DONE ${mark}` },
      },
    ]);

  const bridgeStart = performance.now();
  const bridge = await stack.startBridge(piAdapter, {
    AGENTMAIL_LOOP_STATS: '1',
    AGENTMAIL_HEARTBEAT_MS: String(HEARTBEAT_MS),
    AGENTMAIL_TURN_TIMEOUT_MS: String(TURN_TIMEOUT_MS),
    AGENTMAIL_CONCURRENCY: String(Math.max(4, TURNS)),
  });
  await bridge.waitForEvent('ready', 30_000);
  const bridgeMs = performance.now() - bridgeStart;
  yieldCpuLikeARemoteProvider();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const startup = await loopDelay(bridge); // also opens the measured window

  const sendStart = Date.now();
  const sent = await Promise.all(
    marks.map(async (mark, i) => {
      const mail = await stack.sendAs(undefined, stack.taskAddress(ids[i] ?? 'missing'), {
        subject: `Bench ${mark}`,
        body: `Tell me in one line what the last round was about. ${mark}`,
      });
      mailIds.set(mark, mail.mail_id);
      return { mail, sentAt: Date.now() };
    }),
  );
  const done = await Promise.all(
    sent.map(async ({ mail, sentAt }) => {
      const reply = stack.awaitReply({ inReplyTo: mail.mail_id, from: 'pi', timeoutMs: TURN_TIMEOUT_MS });
      const turn = await bridge
        .waitForEvent('turn_done', TURN_TIMEOUT_MS, (e) => e.mail_id === mail.mail_id)
        .catch(async (err: unknown) => {
          await reply.catch(() => undefined);
          throw err;
        });
      const replied = await reply;
      return { turn, repliedAfterMs: Date.now() - sentAt, reply: replied };
    }),
  );
  const during = await loopDelay(bridge);
  const windowMs = Date.now() - sendStart;

  const logs = bridge.lines().map(parseLog);
  // What the daemon logged closest to its longest block (a fork, a heartbeat, an IPC burst …).
  const nearest = logs
    .filter((l): l is LogLine => l?.time !== undefined && l.time >= sendStart - 1_000)
    .map((l) => ({ msg: String(l.event ?? l.msg ?? '?'), dt: (l.time ?? 0) - during.block_max_at }))
    .sort((a, b) => Math.abs(a.dt) - Math.abs(b.dt))
    .slice(0, 3)
    .map((n) => `"${n.msg}" ${n.dt >= 0 ? '+' : ''}${n.dt} ms`)
    .join(', ');
  const rows = sent.map(({ mail }, i) => {
    const mark = marks[i] ?? '';
    const spawned = logs.find((l) => l?.event === 'worker_spawned' && l.mail_id === mail.mail_id);
    const first = stack.model.requests({
      match: { lastUserMessage: mark, hasToolResult: false, hasTools: true },
    })[0];
    const result = done[i];
    const spawnMs = spawned?.time ?? Number.NaN;
    const rssKb = Number(result?.turn.fields?.worker_max_rss_kb ?? Number.NaN);
    if (!result?.reply.body.includes(`DONE ${mark}`))
      throw new Error(`turn ${i + 1}: unexpected reply: ${result?.reply.body.slice(0, 200)}`);
    return {
      cells: [
        String(i + 1),
        `${fmtMb(sessions[i]?.bytes ?? 0)} (${first?.body?.messages.length ?? '?'} msgs sent)`,
        formatMs((first?.receivedAtMs ?? Number.NaN) - spawnMs),
        `${(rssKb / 1024).toFixed(0)} MB`,
        formatMs((result?.turn.time ?? Number.NaN) - spawnMs),
        formatMs(result?.repliedAfterMs ?? Number.NaN),
      ],
      contextMessages: first?.body?.messages.length ?? 0,
    };
  });

  const ok = during.max_ms < LOOP_DELAY_LIMIT_MS;
  const resumed = rows.every((r, i) => r.contextMessages > (sessions[i]?.messages ?? 0));
  const out = [
    '',
    `bridge-pi bench: ${TURNS} concurrent turns, each resuming an adopted pi session file of ${fmtMb(sessions[0]?.bytes ?? 0)} (${sessions[0]?.entries.toLocaleString('en')} entries); heartbeat every ${HEARTBEAT_MS} ms`,
    `machine: ${availableParallelism()} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    `setup: daemon bundle ${formatMs(buildMs)}, session files ${formatMs(writeMs)}, daemon start → ready ${formatMs(bridgeMs)}`,
    '',
    markdownTable(
      [
        'daemon event-loop delay (perf_hooks, 1 ms ticks)',
        'max',
        'p99',
        'p50',
        'mean',
        'window',
        'GC: count / total / longest',
      ],
      [
        [
          `during the ${TURNS} turns`,
          `${during.max_ms} ms`,
          `${during.p99_ms} ms`,
          `${during.p50_ms} ms`,
          `${during.mean_ms} ms`,
          formatMs(during.window_ms),
          gcCell(during),
        ],
        [
          `start-up to ready + ${SETTLE_MS / 1000} s idle (not judged)`,
          `${startup.max_ms} ms`,
          `${startup.p99_ms} ms`,
          `${startup.p50_ms} ms`,
          `${startup.mean_ms} ms`,
          formatMs(startup.window_ms),
          gcCell(startup),
        ],
      ],
    ),
    '',
    markdownTable(
      [
        'worker',
        'session file',
        'spawn → first model request',
        'peak RSS',
        'spawn → turn done',
        'send → reply',
      ],
      rows.map((r) => r.cells),
    ),
    '',
    `all ${TURNS} turns: ${formatMs(windowMs)} from the first send to the last turn done`,
    resumed
      ? 'every first model request carried the whole resumed session'
      : 'WARNING: a first model request did not carry the whole session (was it resumed?)',
    `longest block (5 ms probe timer): ${during.block_max_ms} ms late, ${formatMs(during.block_max_at - sendStart)} after the first send; nearest daemon log lines: ${nearest || 'none'}`,
    ok
      ? `OK: the daemon's event-loop delay stayed under ${LOOP_DELAY_LIMIT_MS} ms (max ${during.max_ms} ms)`
      : `ABOVE TARGET: the daemon's event loop was blocked for ${during.max_ms} ms (target ${LOOP_DELAY_LIMIT_MS} ms)`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  return resumed;
}

await runStackBench({
  name: 'bridge-pi bench',
  timeoutMs: BENCH_TIMEOUT_MS,
  run: async (ref) => {
    if (!(await run(ref))) throw new Error('a first model request did not carry the whole resumed session');
  },
  remove: removeBundle,
});
