/**
 * Helpers for the bridge packages' `pnpm bench` scripts (figures printed, not timed tests): when a
 * bridge logged an event, a process's peak RSS, and the printed table.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { Mail } from '@agentmail/protocol';
import type { ManagedProcess } from './harness/processes.js';
import type { Stack } from './harness/stack.js';

/**
 * When the bridge process logged its first event of `type` (pino's `time`, epoch ms).
 * @throws Error after `timeoutMs`, or when the event line has no `time`.
 */
export async function loggedEventTime(
  proc: ManagedProcess,
  type: string,
  timeoutMs: number,
): Promise<number> {
  const event = await proc.waitForEvent(type, timeoutMs);
  if (typeof event.time !== 'number')
    throw new Error(`no time in the "${type}" event: ${JSON.stringify(event)}`);
  return event.time;
}

/** Peak resident set size of `pid` in bytes (`VmHWM` of /proc), or undefined when unreadable. */
export function peakRssBytes(pid: number): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** `1,234 ms`, or `?` for a figure that could not be measured. */
export function formatMs(ms: number): string {
  return Number.isFinite(ms) ? `${Math.round(ms).toLocaleString('en')} ms` : '?';
}

/** `612 MB`, or `unreadable`. */
export function formatMegabytes(bytes: number | undefined): string {
  return bytes === undefined ? 'unreadable' : `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

/** The 1/5/15-minute load averages, one decimal each. */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

/** A Markdown table (columns padded). */
export function markdownTable(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** What {@link runBench} runs: `run` measures and prints; `cleanup` stops what it started. */
export interface BenchMain {
  /** Name in the failure and deadline lines, e.g. `bridge-dsh bench`. */
  name: string;
  /** The whole bench is stopped after this long, in ms. */
  timeoutMs: number;
  run(): Promise<void>;
  /** Stops everything (also on failure and at the deadline). */
  cleanup(): Promise<unknown>;
  /** Extra output on failure (e.g. `stack.logs()`). */
  onFailure?(): string | undefined;
}

/**
 * The main of a bench script: run, clean up, exit 0 when it measured, 1 when a step failed, 2 on
 * the overall deadline.
 */
export async function runBench(main: BenchMain): Promise<never> {
  let exitCode = 1;
  const deadline = setTimeout(() => {
    process.stderr.write(`${main.name}: no result within ${main.timeoutMs} ms; stopping\n`);
    void Promise.allSettled([main.cleanup()]).then(() => process.exit(2));
  }, main.timeoutMs);
  try {
    await main.run();
    exitCode = 0;
  } catch (err) {
    process.stderr.write(`${main.name} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    const extra = main.onFailure?.();
    if (extra) process.stderr.write(`${extra}\n`);
  } finally {
    await main.cleanup();
    clearTimeout(deadline);
  }
  process.exit(exitCode);
}

/** Where a bridge bench keeps the stack it started (closed at the end, its logs shown on failure). */
export interface StackRef {
  stack?: Stack;
}

/** What {@link runStackBench} runs. */
export interface StackBench {
  /** Name in the failure and deadline lines, e.g. `bridge-dsh bench`. */
  name: string;
  /** The whole bench is stopped after this long, in ms. */
  timeoutMs: number;
  /** Measures and prints; sets `ref.stack` as soon as it has one. A throw is a failed step (exit 1). */
  run(ref: StackRef): Promise<void>;
  /** Removes what else the bench made (a bundle), after the stack is closed. */
  remove?(): Promise<unknown>;
}

/**
 * The main of a bridge's bench script ({@link runBench} around one stack): exit 0 when it measured,
 * 1 when a step failed (with the stack's last 60 log lines), 2 on the deadline; the stack is
 * closed and `remove` called in every case.
 */
export function runStackBench(bench: StackBench): Promise<never> {
  const ref: StackRef = {};
  return runBench({
    name: bench.name,
    timeoutMs: bench.timeoutMs,
    run: () => bench.run(ref),
    cleanup: async () => {
      await ref.stack?.close();
      await bench.remove?.();
    },
    onFailure: () => ref.stack?.logs(60),
  });
}

/**
 * A bench's printed report: the title, the machine (cores, load before and after), any notes, then
 * the `step | measured` table.
 */
export function benchReport(
  title: string,
  report: { loadBefore: string; notes?: readonly string[]; rows: ReadonlyArray<readonly [string, string]> },
): string {
  return [
    '',
    title,
    `machine: ${availableParallelism()} cores, load average ${report.loadBefore} before, ${loadAverage()} after`,
    ...(report.notes ?? []),
    '',
    markdownTable(['step', 'measured'], report.rows),
    '',
  ].join('\n');
}

/** What one timed mail turn took. */
export interface MailTurnTiming {
  /** From the send to the turn's first model request (the request whose last user message carries `mark`). */
  firstRequestMs: number;
  /** From the send to the agent's reply. */
  replyMs: number;
  reply: Mail;
}

/**
 * Send a mail (`send`) whose turn carries `mark`, wait for the agent's reply to it and time both
 * steps from the send.
 * @throws Error when the reply does not contain `expected`, or on the reply timeout.
 */
export async function timeMailTurn(
  stack: Stack,
  mark: string,
  send: () => Promise<{ mail_id: string }>,
  options: { expected: string; timeoutMs: number },
): Promise<MailTurnTiming> {
  const sentAt = Date.now();
  const sent = await send();
  const reply = await stack.awaitReply({
    inReplyTo: sent.mail_id,
    from: stack.agent.name,
    timeoutMs: options.timeoutMs,
  });
  const repliedAt = Date.now();
  if (!reply.body.includes(options.expected))
    throw new Error(`unexpected reply to ${mark}: ${reply.body.slice(0, 300)}`);
  const first = stack.model.requests({ match: { lastUserMessage: mark, hasTools: true } })[0];
  return { firstRequestMs: (first?.receivedAtMs ?? Number.NaN) - sentAt, replyMs: repliedAt - sentAt, reply };
}
