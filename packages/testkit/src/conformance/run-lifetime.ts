/**
 * A host run leaves nothing running (SPEC B-15), for bridges whose host runs as its own processes
 * (Claude Code, ZCode): neither when its turn is stopped ({@link runEndsWithItsTurn}) nor when the
 * driver is killed with SIGKILL ({@link runDiesWithDriver}).
 */
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { formatText } from '@agentmail/shared-policy';
import { expect } from 'vitest';
import type { HostHarness } from '../harness/bridge.js';
import type { Stack } from '../harness/stack.js';
import {
  answerAtOnce,
  CONFORMANCE_LOCALE,
  CONFORMANCE_STEP_TIMEOUT_MS,
  CONFORMANCE_TURN_TIMEOUT_MS,
  marker,
  shellCall,
  toolResultsSeen,
  turnStart,
  within,
} from './script.js';

/** A live process (not a zombie) from `/proc`. */
interface ProcInfo {
  pid: number;
  ppid: number;
  cmdline: string;
}

function liveProcesses(): ProcInfo[] {
  const found: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      found.push({ pid: Number(name), ppid: Number(fields[1]), cmdline });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** The live descendants of `pid` (children, their children, …). */
function descendants(pid: number): ProcInfo[] {
  const all = liveProcesses();
  const found: ProcInfo[] = [];
  let parents = new Set([pid]);
  while (parents.size > 0) {
    const next = all.filter((p) => parents.has(p.ppid));
    found.push(...next);
    parents = new Set(next.map((p) => p.pid));
  }
  return found;
}

/** Resolves with `check`'s value once it is defined (polled every 50 ms), or throws naming `what`. */
async function poll<T>(what: string, check: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A unique long `sleep` (its duration names it), and the shell call a model makes to run it. */
function longCommand(adapter: HostHarness): { sleep: string; reply: ReturnType<typeof shellCall> } {
  const sleep = `sleep 600.${randomInt(100_000, 999_999)}`;
  // Not a bare `sleep`: Claude Code blocks a standalone sleep ("use run_in_background").
  return { sleep, reply: shellCall(adapter, `sh -c 'exec ${sleep}'`) };
}

/**
 * Waits for the turn's long command (`sleep`) and returns the run: the bridge's descendants that
 * were not there before (`before`) — the host CLI, its MCP and hook processes, the tool command.
 */
async function runOfTurn(
  stack: Stack,
  bridgePid: number,
  task: string,
  sleep: string,
  timeoutMs: number,
  before: ReadonlySet<number> = new Set(),
): Promise<ProcInfo[]> {
  const tool = await poll(
    "the turn's long command",
    () => liveProcesses().find((p) => p.cmdline === sleep),
    timeoutMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; the model saw: ${toolResultsSeen(stack.model, task).slice(0, 500)}`);
  });
  const run = descendants(bridgePid).filter((p) => !before.has(p.pid));
  expect(
    run.map((p) => p.pid),
    "the tool command is the bridge's descendant",
  ).toContain(tool.pid);
  return run;
}

/** Resolves once no process of `run` is alive, or throws naming `what` and the survivors (2 s). */
async function expectRunEnded(run: readonly ProcInfo[], what: string): Promise<void> {
  await poll(what, () => (alive(run).length === 0 ? true : undefined), 2_000).catch((err: Error) => {
    throw new Error(`${err.message}; alive: ${describe(alive(run))}`);
  });
}

/**
 * A turn whose shell runs a long command times out (the adapter's short turn timeout): once its
 * failure mail is sent, none of the bridge's descendants seen during the turn is alive but the
 * bridge's own — the run is stopped as a whole, also tool commands the host put in sessions of
 * their own. Red when a stopped run leaves its tools running.
 */
export async function runEndsWithItsTurn(stack: Stack, adapter: HostHarness): Promise<void> {
  const turnTimeoutMs = adapter.shortTurnTimeoutMs ?? CONFORMANCE_TURN_TIMEOUT_MS;
  const timeoutMs = (adapter.stepTimeoutMs ?? CONFORMANCE_STEP_TIMEOUT_MS) + turnTimeoutMs;
  const task = marker('stopped');
  const { sleep, reply } = longCommand(adapter);
  stack.model.addScenarios([{ name: `${task}:sleep`, match: turnStart(task), reply }]);
  const bridge = await stack.startBridge(adapter, {}, { turnTimeoutMs });
  const before = new Set(descendants(bridge.pid).map((p) => p.pid));
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Stopped ${task}`,
    body: 'Run the long command.',
    permissionMode: 'full',
  });
  const run = await runOfTurn(stack, bridge.pid, task, sleep, timeoutMs, before);
  const failure = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
  expect(failure.body, 'the turn timed out').toContain(
    formatText('failure.timeout', { timeout_s: Math.round(turnTimeoutMs / 1000) }, CONFORMANCE_LOCALE),
  );
  await expectRunEnded(run, 'every process of the stopped run ending');
  await stack.stopBridge();
}

/** Which of `procs` are still alive (the same pid with the same command line). */
function alive(procs: readonly ProcInfo[]): ProcInfo[] {
  const live = new Set(liveProcesses().map((p) => `${p.pid} ${p.cmdline}`));
  return procs.filter((p) => live.has(`${p.pid} ${p.cmdline}`));
}

function describe(procs: readonly ProcInfo[]): string {
  return procs.map((p) => `${p.pid} ${p.cmdline.slice(0, 80)}`).join('; ');
}

/**
 * A turn's shell runs a long `sleep` (a unique duration names it); once it runs, the bridge gets
 * SIGKILL (its own process group only: the host run leads a group of its own, and a host may put
 * its tools in sessions of their own). Within 2 s none of the bridge's descendants seen before the
 * kill is alive — the host CLI, its MCP and hook processes, the tool command. The restarted
 * bridge then runs the mail again (the model answers at once this time): one reply. Red when a host run outlives its driver.
 */
export async function runDiesWithDriver(stack: Stack, adapter: HostHarness): Promise<void> {
  const timeoutMs = adapter.stepTimeoutMs ?? CONFORMANCE_STEP_TIMEOUT_MS;
  const task = marker('orphan');
  const { sleep, reply } = longCommand(adapter);
  stack.model.addScenarios([
    { name: `${task}:sleep`, match: turnStart(task), times: 1, reply },
    answerAtOnce(task, `DONE ${task}`),
  ]);
  const bridge = await stack.startBridge(adapter);
  const sent = await stack.sendAs(undefined, stack.taskAddress(), {
    subject: `Orphan ${task}`,
    body: 'Run the long command.',
    permissionMode: 'full',
  });
  const run = await runOfTurn(stack, bridge.pid, task, sleep, timeoutMs);
  bridge.kill();
  await within(bridge.exited, 5_000, 'the bridge exiting on SIGKILL');
  await expectRunEnded(run, 'every process of the run ending after the bridge was killed');
  await stack.startBridge(adapter);
  await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs });
  const replies = (await stack.thread(sent.mail_id)).filter(
    (m) => m.in_reply_to === sent.mail_id && m.from_name === stack.agent.name && !m.is_permission,
  );
  expect(replies.map((m) => m.body)).toEqual([expect.stringContaining(`DONE ${task}`)]);
  await stack.stopBridge();
}
