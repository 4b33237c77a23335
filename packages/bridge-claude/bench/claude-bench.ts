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
import { availableParallelism, loadavg } from 'node:os';
import type { Stack } from '@agentmail/testkit';
import {
  answerAtOnce,
  marker,
  shellCall,
  startConformanceStack,
  turnStart,
} from '@agentmail/testkit/conformance';
import { bundled, claudeAdapter, removeBundle } from '../harness/claude-adapter.js';
import { claudeVersion } from '../harness/claude-bin.js';

/** Mails timed, one session. @default 5 */
export const MAILS = 5;
/** Time one step may take, in ms. @default 120_000 */
export const STEP_MS = 120_000;

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

const ms = (n: number): string => `${Math.round(n).toLocaleString('en')} ms`;
const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(0)} MB`;
const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function bench(stack: Stack): Promise<void> {
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
  stack.model.addScenarios([
    { name: `${mark}:bash`, match: turnStart(mark), reply: shellCall(claudeAdapter, `echo ${mark}`) },
    {
      name: `${mark}:done`,
      match: { lastUserMessage: mark, hasToolResult: true },
      reply: { type: 'text', text: 'ok' },
    },
  ]);
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
    ['claude-code', claudeVersion()],
    ['machine', `${availableParallelism()} cores, load ${loadavg()[0]?.toFixed(2)}`],
    ['daemon spawn → self-check done', check ? ms(Number(check.duration_ms)) : '?'],
    ['daemon spawn → connected (event stream open)', ms(connectedMs)],
    [
      `mail → first model request (median / max of ${MAILS}; 1st new session, rest --resume)`,
      `${ms(median(firstRequest))} / ${ms(Math.max(...firstRequest))}`,
    ],
    [`mail → reply relayed (median / max of ${MAILS})`, `${ms(median(reply))} / ${ms(Math.max(...reply))}`],
    [
      'first mail (new session): → first request, → reply',
      `${ms(firstRequest[0] ?? Number.NaN)}, ${ms(reply[0] ?? Number.NaN)}`,
    ],
    [`run's process tree RSS, a hook waiting (${run.length} processes)`, mb(total)],
    ...run.map((p): [string, string] => [`  ${p.name} (${p.pid})`, mb(p.rssBytes)]),
    ['daemon RSS', mb(daemonRss)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(
    `agentmail-claude bench\n${rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n')}\n`,
  );
}

const stack = await startConformanceStack(claudeAdapter);
let code = 0;
try {
  await bench(stack);
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  code = 1;
} finally {
  await stack.close();
  await removeBundle();
}
process.exit(code);
