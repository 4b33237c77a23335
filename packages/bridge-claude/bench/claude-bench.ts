/**
 * `pnpm bench` for bridge-claude (issue 12: "driver start → connected, mail → first model request,
 * mail → reply, RSS of the run's process tree"). On loopback: a real Gateway child process, the
 * scripted model's Anthropic endpoint, the `agentmail-claude` daemon (bundled by the harness) and
 * the real pinned `claude` binary with the plugin.
 *
 * Prints: daemon spawn → self-check done, → event stream open (connected); for MAILS mails in
 * one session (the first a new session, the rest `--resume`): mail sent → the turn's first model
 * request, → reply relayed (median and max); the resident set of the run's process tree
 * (claude and its descendants: the MCP server, a hook process waiting for a person's approval),
 * summed from /proc.
 * Exits 0 when it measured, 1 when a step failed; everything it started is stopped at the end.
 *
 * Run: `pnpm --filter @agentmail/bridge-claude bench` (or `pnpm bench` at the root).
 */
import { readdirSync, readFileSync } from 'node:fs';
import {
  benchReport,
  formatMegabytes,
  formatMs,
  loadAverage,
  runStackBench,
  type StackRef,
} from '@agentmail/testkit';
import {
  answerAtOnce,
  marker,
  shellThenAnswer,
  startConformanceStack,
  turnStart,
} from '@agentmail/testkit/conformance';
import { bundled, claudeAdapter, removeBundle } from '../harness/claude-adapter.js';
import { claudeVersion } from '../harness/claude-bin.js';

/** Mails timed, one session. @default 5 */
export const MAILS = 5;
/** Time one step may take, in ms. @default 120_000 */
export const STEP_MS = 120_000;
/** The whole bench is stopped after this long, in ms. @default 600_000 */
export const BENCH_TIMEOUT_MS = 600_000;

/** Every process with its parent and resident set in bytes, from /proc. */
function processes(): Array<{ pid: number; ppid: number; name: string; rssBytes: number }> {
  const out: Array<{ pid: number; ppid: number; name: string; rssBytes: number }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const field = (name: string): string => new RegExp(`^${name}:\\s+(.+)$`, 'm').exec(status)?.[1] ?? '';
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const script = cmd
        .find((a) => a.endsWith('.js'))
        ?.split('/')
        .pop();
      out.push({
        pid: Number(entry),
        ppid: Number(field('PPid')),
        name: script ? `${field('Name')} ${script}` : field('Name'),
        rssBytes: Number.parseInt(field('VmRSS') || '0', 10) * 1024,
      });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** `root` and all its descendants (by parent pid). */
function tree(root: number): ReturnType<typeof processes> {
  const all = processes();
  const found = all.filter((p) => p.pid === root);
  for (let i = 0; i < found.length; i++) for (const p of all) if (p.ppid === found[i]?.pid) found.push(p);
  return found;
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function bench(ref: StackRef): Promise<void> {
  const loadBefore = loadAverage();
  const stack = await startConformanceStack(claudeAdapter);
  ref.stack = stack;
  await bundled(); // the build is not part of the start
  const t0 = Date.now();
  const bridge = await stack.startBridge(claudeAdapter);
  const connectedMs = Date.now() - t0;
  const check = bridge.bridgeEvents('self_check')[0];

  const firstRequest: number[] = [];
  const reply: number[] = [];
  let address = stack.taskAddress();
  let replyTo: string | undefined;
  for (let i = 0; i < MAILS; i++) {
    const mark = marker(`bench${i}`);
    stack.model.addScenarios([answerAtOnce(mark, `DONE ${mark}`)]);
    const sentAt = Date.now();
    const sent = await stack.sendAs(undefined, address, {
      subject: `Bench ${mark}`,
      body: 'Answer.',
      ...(replyTo ? { replyTo } : {}),
    });
    const request = await stack.model.waitForRequest(turnStart(mark), STEP_MS);
    firstRequest.push(request.receivedAtMs - sentAt);
    const r = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
    reply.push(Date.now() - sentAt);
    address = r.reply_address;
    replyTo = r.id;
  }

  // The process tree at its fullest: a Bash call waiting in its PreToolUse hook for a person.
  const mark = marker('rss');
  stack.model.addScenarios(shellThenAnswer(claudeAdapter, mark, `echo ${mark}`));
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Rss ${mark}`,
    body: 'x',
    permissionMode: 'workspace',
  });
  const asked = await stack.awaitPermission({ timeoutMs: STEP_MS });
  const spawned = await bridge.waitForEvent('claude_spawned', STEP_MS, (e) => e.mail_id === sent.mail_id);
  const run = tree(Number(spawned.pid));
  await stack.decide(asked.id, 'approve');
  await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
  const daemonRss = tree(bridge.pid)[0]?.rssBytes ?? Number.NaN;

  const total = run.reduce((n, p) => n + p.rssBytes, 0);
  const rows: Array<[string, string]> = [
    ['daemon spawn → self-check done', check ? formatMs(Number(check.duration_ms)) : '?'],
    ['daemon spawn → connected (event stream open)', formatMs(connectedMs)],
    [
      `mail → first model request (median / max of ${MAILS}; 1st new session, rest --resume)`,
      `${formatMs(median(firstRequest))} / ${formatMs(Math.max(...firstRequest))}`,
    ],
    [
      `mail → reply relayed (median / max of ${MAILS})`,
      `${formatMs(median(reply))} / ${formatMs(Math.max(...reply))}`,
    ],
    [
      'first mail (new session): → first request, → reply',
      `${formatMs(firstRequest[0] ?? Number.NaN)}, ${formatMs(reply[0] ?? Number.NaN)}`,
    ],
    [`run's process tree RSS, a hook waiting (${run.length} processes)`, formatMegabytes(total)],
    ...run.map((p): [string, string] => [`  ${p.name} (${p.pid})`, formatMegabytes(p.rssBytes)]),
    ['daemon RSS', formatMegabytes(daemonRss)],
  ];
  process.stdout.write(
    benchReport(
      `agentmail-claude bench: Claude Code ${claudeVersion()}, scripted model (Anthropic kind), Gateway on loopback`,
      {
        loadBefore,
        rows,
      },
    ),
  );
}

await runStackBench({
  name: 'agentmail-claude bench',
  timeoutMs: BENCH_TIMEOUT_MS,
  run: bench,
  remove: removeBundle,
});
