/**
 * `pnpm bench` for bridge-opencode (issue 5: "opencode start → plugin connected, mail → first model
 * request"). One run on loopback: a real Gateway child process, the scripted model server, and the
 * real `opencode serve` (opencode-ai pinned, sandboxed HOME/XDG) loading the plugin bundle built by
 * the package's own build (tsup.config.ts, via harness/build.ts). Right after "listening" the
 * harness makes one request for the project directory, as a headless host must (opencode boots an
 * instance, and so the plugin, on the first request naming its directory).
 *
 * Prints: spawn → listening, → plugin registered at the Gateway, → event stream open; a first mail
 * (new session) → first model request, → reply relayed; a second mail in the same session → first
 * model request, → reply; opencode's peak RSS (VmHWM of the serve process, when /proc is readable).
 * Exits 0 when it measured, 1 when a step failed, 2 on the overall deadline; everything it started
 * is stopped at the end.
 *
 * Run: `pnpm --filter @agentmail/bridge-opencode bench` (or `pnpm bench` at the root).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { HostHarness, ManagedProcess, Stack } from '@agentmail/testkit';
import { startStack } from '@agentmail/testkit';
import { createOpencodeAdapter, removePluginBundle } from '../harness/opencode-adapter.js';
import { opencodeVersion } from '../harness/opencode-bin.js';

/** The whole bench is stopped after this long, in ms. @default 300_000 */
export const BENCH_TIMEOUT_MS = 300_000;
/** Time one turn may take (reply wait), in ms. @default 120_000 */
export const TURN_TIMEOUT_MS = 120_000;

const MODEL_ID = 'scripted-model';

/** When the bridge logged its first event of `type` (pino's `time`, ms). */
async function eventTime(proc: ManagedProcess, type: string, timeoutMs: number): Promise<number> {
  const event = await proc.waitForEvent(type, timeoutMs);
  if (typeof event.time !== 'number')
    throw new Error(`no time in the "${type}" event: ${JSON.stringify(event)}`);
  return event.time;
}

/** Peak resident set size of `pid` in bytes (VmHWM), or undefined when /proc is not readable. */
function peakRssBytes(pid: number): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

const fmtMs = (n: number): string => (Number.isFinite(n) ? `${Math.round(n).toLocaleString('en')} ms` : '?');
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function run(stackRef: { stack?: Stack }): Promise<void> {
  const loadBefore = load();
  const stack = await startStack({
    agentName: 'opencode',
    platform: 'opencode',
    models: [MODEL_ID],
    // Requests without tools are title requests; answer them so they never reach a turn step.
    scenarios: [{ name: 'title', match: { hasTools: false }, reply: { type: 'text', text: 'Bench' } }],
  });
  stackRef.stack = stack;

  const marks = [1, 2].map(() => `bench.${randomBytes(4).toString('hex')}`);
  stack.model.addScenarios(
    marks.map((mark) => ({
      name: mark,
      match: { lastUserMessage: mark, hasTools: true },
      reply: { type: 'text' as const, text: `DONE ${mark}` },
    })),
  );

  // The opencode adapter, with the spawn and the "listening" line timed.
  const base = createOpencodeAdapter();
  const clock: { spawnedAt?: number; listeningAt?: number } = {};
  const adapter: HostHarness = {
    ...base,
    start: (env) =>
      base.start({
        ...env,
        spawn: (command, args, options) => {
          clock.spawnedAt = Date.now();
          const proc = env.spawn(command, args, options);
          const off = proc.onLine((line) => {
            if (!/opencode server listening on/.test(line)) return;
            clock.listeningAt = Date.now();
            off();
          });
          return proc;
        },
      }),
  };

  const buildStart = performance.now();
  const serve = await stack.startBridge(adapter, { AGENTMAIL_TURN_TIMEOUT_MS: String(TURN_TIMEOUT_MS) });
  const startMs = performance.now() - buildStart;
  const spawnedAt = clock.spawnedAt ?? Number.NaN;
  const registeredAt = await eventTime(serve, 'registered', 30_000);
  const sseOpenAt = await eventTime(serve, 'stream_open', 30_000);
  const connectedAt = await eventTime(serve, 'ready', 30_000);

  // Turn 1: a new session. Turn 2: the person answers the reply, so it runs in the same session.
  const turn = async (
    mark: string,
    send: () => Promise<{ mail_id: string; session_id: string }>,
  ): Promise<{ firstRequestMs: number; replyMs: number; reply: { id: string; reply_address: string } }> => {
    const sentAt = Date.now();
    const sent = await send();
    const reply = await stack.awaitReply({
      inReplyTo: sent.mail_id,
      from: stack.agent.name,
      timeoutMs: TURN_TIMEOUT_MS,
    });
    const repliedAt = Date.now();
    if (!reply.body.includes(`DONE ${mark}`))
      throw new Error(`unexpected reply to ${mark}: ${reply.body.slice(0, 300)}`);
    const first = stack.model.requests({ match: { lastUserMessage: mark, hasTools: true } })[0];
    return {
      firstRequestMs: (first?.receivedAtMs ?? Number.NaN) - sentAt,
      replyMs: repliedAt - sentAt,
      reply: { id: reply.id, reply_address: reply.reply_address },
    };
  };
  const [mark1 = '', mark2 = ''] = marks;
  let session1 = '';
  const first = await turn(mark1, async () => {
    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Bench ${mark1}`,
      body: 'Answer in one line.',
    });
    session1 = sent.session_id;
    return sent;
  });
  let session2 = '';
  const second = await turn(mark2, async () => {
    const sent = await stack.sendAs(undefined, first.reply.reply_address, {
      subject: `Bench ${mark2}`,
      body: 'And once more.',
      replyTo: first.reply.id,
    });
    session2 = sent.session_id;
    return sent;
  });
  if (session2 !== session1) throw new Error(`the second mail went to ${session2}, not ${session1}`);
  const rss = peakRssBytes(serve.pid);

  const out = [
    '',
    `bridge-opencode bench: opencode ${opencodeVersion()} (opencode serve), scripted model, Gateway on loopback`,
    `machine: ${availableParallelism()} cores, load average ${loadBefore} before, ${load()} after`,
    `setup: plugin bundle + opencode start until the event stream was open: ${fmtMs(startMs)}`,
    '',
    table(
      ['step', 'measured'],
      [
        ['opencode spawn → listening', fmtMs((clock.listeningAt ?? Number.NaN) - spawnedAt)],
        ['spawn → plugin registered at the Gateway', fmtMs(registeredAt - spawnedAt)],
        ['spawn → event stream open (bridge ready)', fmtMs(sseOpenAt - spawnedAt)],
        ['spawn → ready (start catch-up done)', fmtMs(connectedAt - spawnedAt)],
        ['mail 1 (new session): send → first model request', fmtMs(first.firstRequestMs)],
        ['mail 1: send → reply relayed', fmtMs(first.replyMs)],
        ['mail 2 (same session): send → first model request', fmtMs(second.firstRequestMs)],
        ['mail 2: send → reply relayed', fmtMs(second.replyMs)],
        [
          'opencode peak RSS (VmHWM of the serve process)',
          rss === undefined ? 'unreadable' : `${(rss / 1024 / 1024).toFixed(0)} MB`,
        ],
      ],
    ),
    '',
  ];
  process.stdout.write(out.join('\n'));
}

const stackRef: { stack?: Stack } = {};
let exitCode = 1;
const deadline = setTimeout(() => {
  process.stderr.write(`bridge-opencode bench: no result within ${BENCH_TIMEOUT_MS} ms; stopping\n`);
  void Promise.allSettled([stackRef.stack?.close(), removePluginBundle()]).then(() => process.exit(2));
}, BENCH_TIMEOUT_MS);
try {
  await run(stackRef);
  exitCode = 0;
} catch (err) {
  process.stderr.write(`bridge-opencode bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  if (stackRef.stack) process.stderr.write(`${stackRef.stack.logs(60)}\n`);
} finally {
  await stackRef.stack?.close();
  await removePluginBundle();
  clearTimeout(deadline);
}
process.exit(exitCode);
