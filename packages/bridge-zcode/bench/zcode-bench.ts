/**
 * `pnpm bench` for bridge-zcode (issue 13: "driver start → connected, mail → stand-in run started,
 * mail → reply"). On loopback: a real Gateway child process, the scripted model's Anthropic
 * endpoint, the `agentmail-zcode` daemon (bundled by the harness) and the testkit's ZCode stand-in
 * with the plugin (its MCP server and hooks as real processes).
 *
 * Prints: daemon spawn → setup check done (`zcode plugins list --json`), → event stream open
 * (connected), → ready; for three mails in one session (a new ZCode session, then `--resume`):
 * send → `zcode` spawned, → the turn's first model request, → reply relayed; a workspace mail with
 * a Bash call approved by mail (send → permission mail, decide → reply); the daemon's peak RSS.
 * The stand-in is not ZCode: the run figures measure the driver, the plugin's processes and the
 * stand-in's start, not ZCode's own.
 *
 * Exits 0 when it measured, 1 when a step failed, 2 on the overall deadline; everything it started
 * is stopped at the end. Run: `pnpm --filter @agentmail/bridge-zcode bench` (or `pnpm bench`).
 */
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
  timeMailTurn,
} from '@agentmail/testkit';
import { answerAtOnce, marker, shellThenAnswer, startConformanceStack } from '@agentmail/testkit/conformance';
import { ZCODE_STANDIN_VERSION } from '@agentmail/testkit/zcode';
import { bundled, removeBundle, zcodeAdapter } from '../harness/zcode-adapter.js';

/** The whole bench is stopped after this long, in ms. @default 300_000 */
export const BENCH_TIMEOUT_MS = 300_000;
/** Time one step may wait, in ms. @default 120_000 */
export const STEP_TIMEOUT_MS = 120_000;

async function run(ref: StackRef): Promise<void> {
  const loadBefore = loadAverage();
  const stack = await startConformanceStack(zcodeAdapter);
  ref.stack = stack;
  await bundled(); // the build is not part of the start

  const spawned: number[] = [];
  const adapter: HostHarness = {
    ...zcodeAdapter,
    start: (env) =>
      zcodeAdapter.start({
        ...env,
        spawn: (command, args, options) => {
          spawned.push(Date.now());
          return env.spawn(command, args, options);
        },
      }),
  };
  const proc = await stack.startBridge(adapter);
  const spawnedAt = spawned[0] ?? Number.NaN;
  const checkedAt = await loggedEventTime(proc, 'self_check', STEP_TIMEOUT_MS);
  const connectedAt = await loggedEventTime(proc, 'stream_open', STEP_TIMEOUT_MS);
  const readyAt = await loggedEventTime(proc, 'ready', STEP_TIMEOUT_MS);

  const marks = [1, 2, 3].map((i) => marker(`bench${i}`));
  stack.model.addScenarios(marks.map((m) => answerAtOnce(m, `DONE ${m}`)));
  const turns: Array<MailTurnTiming & { runStartedMs: number }> = [];
  let previous: MailTurnTiming | undefined;
  for (const mark of marks) {
    const sentAt = Date.now();
    let mailId = '';
    const t = await timeMailTurn(
      stack,
      mark,
      async () => {
        const prev = previous;
        const sent = await stack.sendAs(undefined, prev ? prev.reply.reply_address : stack.taskAddress(), {
          subject: `Bench ${mark}`,
          body: 'Answer in one line.',
          ...(prev ? { replyTo: prev.reply.id } : {}),
        });
        mailId = sent.mail_id;
        return sent;
      },
      { expected: `DONE ${mark}`, timeoutMs: STEP_TIMEOUT_MS },
    );
    const started = await proc.waitForEvent('zcode_spawned', STEP_TIMEOUT_MS, (e) => e.mail_id === mailId);
    turns.push({ ...t, runStartedMs: Number(started.time) - sentAt });
    previous = t;
  }

  // A guarded call asked by mail: send → permission mail; decision → reply.
  const mark = marker('approve');
  stack.model.addScenarios(shellThenAnswer(zcodeAdapter, mark, `echo ${mark}`));
  const askSentAt = Date.now();
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Approve ${mark}`,
    body: 'Run it.',
    permissionMode: 'workspace',
  });
  const asked = await stack.awaitPermission({
    where: (p) => p.context.includes(mark) || p.question.includes(mark),
    timeoutMs: STEP_TIMEOUT_MS,
  });
  const askedMs = Date.now() - askSentAt;
  const decidedAt = Date.now();
  await stack.decide(asked.id, 'approve');
  await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs: STEP_TIMEOUT_MS });
  const approvedReplyMs = Date.now() - decidedAt;
  const rss = peakRssBytes(proc.pid);

  const [t1, t2, t3] = turns;
  process.stdout.write(
    benchReport(
      `bridge-zcode bench: ZCode stand-in ${ZCODE_STANDIN_VERSION} (testkit), scripted model (Anthropic kind), Gateway on loopback`,
      {
        loadBefore,
        rows: [
          ['daemon spawn → setup check done (`zcode plugins list --json`)', formatMs(checkedAt - spawnedAt)],
          ['daemon spawn → connected (event stream open)', formatMs(connectedAt - spawnedAt)],
          ['daemon spawn → ready (start catch-up done)', formatMs(readyAt - spawnedAt)],
          ['mail 1, new session: send → stand-in run started', formatMs(t1?.runStartedMs ?? Number.NaN)],
          ['mail 1: send → first model request', formatMs(t1?.firstRequestMs ?? Number.NaN)],
          ['mail 1: send → reply relayed', formatMs(t1?.replyMs ?? Number.NaN)],
          ['mail 2, --resume: send → stand-in run started', formatMs(t2?.runStartedMs ?? Number.NaN)],
          ['mail 2: send → reply relayed', formatMs(t2?.replyMs ?? Number.NaN)],
          ['mail 3, --resume: send → stand-in run started', formatMs(t3?.runStartedMs ?? Number.NaN)],
          ['mail 3: send → reply relayed', formatMs(t3?.replyMs ?? Number.NaN)],
          ['workspace Bash call: send → permission mail at the person', formatMs(askedMs)],
          ['workspace Bash call: approve → reply relayed', formatMs(approvedReplyMs)],
          ['daemon peak RSS (VmHWM)', formatMegabytes(rss)],
        ],
      },
    ),
  );
}

await runStackBench({
  name: 'bridge-zcode bench',
  timeoutMs: BENCH_TIMEOUT_MS,
  run,
  remove: removeBundle,
});
