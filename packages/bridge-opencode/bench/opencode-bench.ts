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
import {
  benchReport,
  formatMegabytes,
  formatMs,
  type HostHarness,
  loadAverage,
  loggedEventTime,
  peakRssBytes,
  runStackBench,
  type StackRef,
  startStack,
  timeMailTurn,
} from '@agentmail/testkit';
import { createOpencodeAdapter, removePluginBundle } from '../harness/opencode-adapter.js';
import { opencodeVersion } from '../harness/opencode-bin.js';

/** The whole bench is stopped after this long, in ms. @default 300_000 */
export const BENCH_TIMEOUT_MS = 300_000;
/** Time one turn may take (reply wait), in ms. @default 120_000 */
export const TURN_TIMEOUT_MS = 120_000;

const MODEL_ID = 'scripted-model';

async function run(stackRef: StackRef): Promise<void> {
  const loadBefore = loadAverage();
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
  const registeredAt = await loggedEventTime(serve, 'registered', 30_000);
  const sseOpenAt = await loggedEventTime(serve, 'stream_open', 30_000);
  const connectedAt = await loggedEventTime(serve, 'ready', 30_000);

  // Turn 1: a new session. Turn 2: the person answers the reply, so it runs in the same session.
  const turn = (mark: string, send: () => Promise<{ mail_id: string }>) =>
    timeMailTurn(stack, mark, send, { expected: `DONE ${mark}`, timeoutMs: TURN_TIMEOUT_MS });
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

  process.stdout.write(
    benchReport(
      `bridge-opencode bench: opencode ${opencodeVersion()} (opencode serve), scripted model, Gateway on loopback`,
      {
        loadBefore,
        notes: [
          `setup: plugin bundle + opencode start until the event stream was open: ${formatMs(startMs)}`,
        ],
        rows: [
          ['opencode spawn → listening', formatMs((clock.listeningAt ?? Number.NaN) - spawnedAt)],
          ['spawn → plugin registered at the Gateway', formatMs(registeredAt - spawnedAt)],
          ['spawn → event stream open (bridge ready)', formatMs(sseOpenAt - spawnedAt)],
          ['spawn → ready (start catch-up done)', formatMs(connectedAt - spawnedAt)],
          ['mail 1 (new session): send → first model request', formatMs(first.firstRequestMs)],
          ['mail 1: send → reply relayed', formatMs(first.replyMs)],
          ['mail 2 (same session): send → first model request', formatMs(second.firstRequestMs)],
          ['mail 2: send → reply relayed', formatMs(second.replyMs)],
          ['opencode peak RSS (VmHWM of the serve process)', formatMegabytes(rss)],
        ],
      },
    ),
  );
}

await runStackBench({
  name: 'bridge-opencode bench',
  timeoutMs: BENCH_TIMEOUT_MS,
  run,
  remove: removePluginBundle,
});
