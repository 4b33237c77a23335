/**
 * `pnpm bench` for bridge-dsh (issue 11): dsh start → bridge connected, mail → first model request
 * (new session; resumed session, agent still live; resumed after a dsh restart, from disk), mail
 * → reply, dsh's peak RSS. One run on loopback: a real Gateway child process, the scripted model as
 * dsh's `llm-deepseek` route, the real pinned dsh (base profile, sandboxed DSH_HOME) loading the
 * plugin bundle built from the sources by the package's own build (tsup.config.ts).
 *
 * Exits 0 when it measured, 1 when a step failed, 2 on the overall deadline; everything it started
 * is stopped at the end. Run: `pnpm --filter @agentmail/bridge-dsh bench` (or `pnpm bench`).
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import {
  benchReport,
  formatMegabytes,
  formatMs,
  type HostHarness,
  loadAverage,
  loggedEventTime,
  type MailTurnTiming,
  peakRssBytes,
  runStackBench,
  type StackRef,
  startStack,
  timeMailTurn,
} from '@agentmail/testkit';
import { removeSharedBundle, sharedBundle } from '../harness/build.js';
import { createDshAdapter } from '../harness/dsh-adapter.js';
import { dshVersion } from '../harness/dsh-bin.js';

/** The whole bench is stopped after this long, in ms. @default 300_000 */
export const BENCH_TIMEOUT_MS = 300_000;
/** Time one step may wait, in ms. @default 120_000 */
export const STEP_TIMEOUT_MS = 120_000;

const MODEL_ID = 'scripted-model';

async function run(ref: StackRef): Promise<void> {
  const loadBefore = loadAverage();
  const stack = await startStack({
    agentName: 'dsh',
    platform: 'dsh',
    models: [MODEL_ID],
    modelProvider: 'deepseek-official',
    scenarios: [{ name: 'title', match: { hasTools: false }, reply: { type: 'text', text: 'Bench' } }],
  });
  ref.stack = stack;
  const marks = [1, 2, 3].map(() => `bench.${randomBytes(4).toString('hex')}`);
  stack.model.addScenarios(
    marks.map((mark) => ({
      name: mark,
      match: { lastUserMessage: mark, hasTools: true },
      reply: { type: 'text' as const, text: `DONE ${mark}` },
    })),
  );
  const bundle = await sharedBundle();

  const base = createDshAdapter();
  const spawned: number[] = [];
  const adapter: HostHarness = {
    ...base,
    start: (env) =>
      base.start({
        ...env,
        spawn: (command, args, options) => {
          spawned.push(Date.now());
          return env.spawn(command, args, options);
        },
      }),
  };

  const turn = (mark: string, send: () => Promise<{ mail_id: string }>): Promise<MailTurnTiming> =>
    timeMailTurn(stack, mark, send, { expected: `DONE ${mark}`, timeoutMs: STEP_TIMEOUT_MS });

  let proc = await stack.startBridge(adapter);
  const spawnedAt = spawned[0] ?? Number.NaN;
  const registeredAt = await loggedEventTime(proc, 'registered', STEP_TIMEOUT_MS);
  const connectedAt = await loggedEventTime(proc, 'stream_open', STEP_TIMEOUT_MS);
  const readyAt = await loggedEventTime(proc, 'ready', STEP_TIMEOUT_MS);

  const [m1 = '', m2 = '', m3 = ''] = marks;
  const t1 = await turn(m1, () =>
    stack.sendAs(undefined, stack.taskAddress(), { subject: `Bench ${m1}`, body: 'Answer in one line.' }),
  );
  const t2 = await turn(m2, () =>
    stack.sendAs(undefined, t1.reply.reply_address, {
      subject: `Bench ${m2}`,
      body: 'Again.',
      replyTo: t1.reply.id,
    }),
  );
  const rss = peakRssBytes(proc.pid);
  await stack.stopBridge();
  proc = await stack.startBridge(adapter);
  const restartedAt = spawned[1] ?? Number.NaN;
  const reconnectedAt = await loggedEventTime(proc, 'stream_open', STEP_TIMEOUT_MS);
  const t3 = await turn(m3, () =>
    stack.sendAs(undefined, t2.reply.reply_address, {
      subject: `Bench ${m3}`,
      body: 'Once more.',
      replyTo: t2.reply.id,
    }),
  );
  const rssAfterResume = peakRssBytes(proc.pid);

  process.stdout.write(
    benchReport(
      `bridge-dsh bench: dsh ${dshVersion()} (base profile over dsh-base), scripted model as llm-deepseek, Gateway on loopback`,
      {
        loadBefore,
        notes: [
          `plugin bundle: ${(statSync(bundle.pluginJs).size / 1024).toFixed(0)} KB (dsh packages not bundled)`,
        ],
        rows: [
          ['dsh spawn → bridge registered at the Gateway', formatMs(registeredAt - spawnedAt)],
          ['dsh spawn → bridge connected (event stream open)', formatMs(connectedAt - spawnedAt)],
          ['dsh spawn → ready (start catch-up done)', formatMs(readyAt - spawnedAt)],
          ['mail 1, new session: send → first model request', formatMs(t1.firstRequestMs)],
          ['mail 1: send → reply relayed', formatMs(t1.replyMs)],
          ['mail 2, same session (agent live): send → first model request', formatMs(t2.firstRequestMs)],
          ['mail 2: send → reply relayed', formatMs(t2.replyMs)],
          ['dsh restart: spawn → bridge connected', formatMs(reconnectedAt - restartedAt)],
          ['mail 3, same session resumed from disk: send → first model request', formatMs(t3.firstRequestMs)],
          ['mail 3: send → reply relayed', formatMs(t3.replyMs)],
          ['dsh peak RSS (VmHWM), first run (2 mails)', formatMegabytes(rss)],
          ['dsh peak RSS (VmHWM), after the restart (1 resumed mail)', formatMegabytes(rssAfterResume)],
        ],
      },
    ),
  );
}

await runStackBench({
  name: 'bridge-dsh bench',
  timeoutMs: BENCH_TIMEOUT_MS,
  run,
  remove: removeSharedBundle,
});
