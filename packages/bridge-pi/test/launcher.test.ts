/**
 * The launcher child (SPEC B-12, B-14, B-15) on the real stack: a Gateway child process, the
 * scripted model as pi's provider and the `agentmail-pi` daemon, whose launcher forks one real pi
 * worker per mail. While the scripted model holds a worker's answer open:
 * 1. the launcher is killed (SIGKILL, its pid from the daemon's `launcher forked` line): the daemon
 *    logs it lost, kills the orphaned worker, redelivers the turn through a new launcher, and the
 *    person gets exactly one reply;
 * 2. the daemon is killed (SIGKILL, its pid alone, not its group): the launcher ends its workers and
 *    exits, so nothing of the killed daemon outlives it.
 */

import { readFileSync } from 'node:fs';
import type { ManagedProcess, Stack } from '@agentmail/testkit';
import { answerAtOnce, marker, startConformanceStack, turnStart } from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { workerMidTurn } from '../harness/mid-turn.js';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

afterAll(removeBundle);

/** How long one step (a worker start on a loaded 2-core machine, a backoff) may take, in ms. */
const STEP_MS = 60_000;

/** How long a killed process's children may outlive it, in ms ("within a few seconds"). */
const ORPHAN_GONE_MS = 5_000;

/** Poll interval of {@link waitGone}, in ms. */
const GONE_POLL_MS = 50;

/**
 * True when process `pid` no longer runs: no `/proc/<pid>`, or a zombie (exited, not yet reaped by
 * its new parent; `process.kill(pid, 0)` still succeeds on a zombie, so it cannot tell).
 */
function processGone(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

/**
 * Waits until every process in `pids` is gone. These are not the test's children (the launcher is
 * the daemon's, a worker the launcher's), so no exit event reaches the test and the harness has no
 * event-driven helper for them: this polls `/proc` every {@link GONE_POLL_MS} ms, up to `timeoutMs`.
 */
async function waitGone(pids: Record<string, number>, timeoutMs: number): Promise<void> {
  await vi.waitFor(
    () => {
      const alive = Object.entries(pids).filter(([, pid]) => !processGone(pid));
      if (alive.length > 0)
        throw new Error(`still running: ${alive.map(([name, pid]) => `${name} (pid ${pid})`).join(', ')}`);
    },
    { timeout: timeoutMs, interval: GONE_POLL_MS },
  );
}

/**
 * Waits until the worker of delivery `attempt` of `mailId` sent its model request for `task` (the
 * scripted model holds the answer open, so the worker is mid-turn); returns the worker's pid and
 * the pid of the launcher that forked it.
 */
async function heldTurn(
  stack: Stack,
  bridge: ManagedProcess,
  args: { mailId: string; attempt: number; task: string },
): Promise<{ worker: number; launcher: number }> {
  const pid = await workerMidTurn(stack, bridge, { ...args, timeoutMs: STEP_MS });
  const forks = bridge.bridgeEvents('launcher_forked');
  expect(forks, 'one launcher so far').toHaveLength(1);
  const launcher = forks[0]?.launcher;
  expect(launcher, 'the launcher pid is logged').toEqual(expect.any(Number));
  expect(processGone(pid), 'the worker runs').toBe(false);
  return { worker: pid, launcher: launcher as number };
}

describe('bridge-pi launcher (B-12, B-14, B-15)', () => {
  it('a launcher killed mid-turn is logged lost, its worker ends, the turn is redelivered through a new launcher: exactly one reply', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('launcher-dies');
    stack.model.addScenarios([
      // The first attempt's request is held open (its launcher dies meanwhile); the next one is answered.
      { name: `${task}:hang`, match: turnStart(task), times: 1, reply: { type: 'hang' } },
      answerAtOnce(task, `Answered ${task} after the launcher died.`),
    ]);
    const bridge = await stack.startBridge(piAdapter);

    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Task ${task}`, body: 'Go.' });
    const held = await heldTurn(stack, bridge, { mailId: sent.mail_id, attempt: 1, task });
    process.kill(held.launcher, 'SIGKILL');

    await bridge.waitForEvent('launcher_lost', STEP_MS, (e) => e.launcher === held.launcher);
    await waitGone({ launcher: held.launcher, worker: held.worker }, ORPHAN_GONE_MS);

    const reply = await stack.awaitReply({
      inReplyTo: sent.mail_id,
      from: stack.agent.name,
      timeoutMs: STEP_MS,
    });
    expect(reply.body).toContain(`Answered ${task} after the launcher died.`);
    await bridge.waitForEvent('turn_done', STEP_MS, (e) => e.mail_id === sent.mail_id);

    const lines = bridge.lines();
    const forks = bridge.bridgeEvents('launcher_forked');
    expect(
      forks.map((f) => f.restart),
      'one new launcher',
    ).toEqual([false, true]);
    expect(forks[1]?.launcher).not.toBe(held.launcher);
    expect(
      bridge
        .bridgeEvents('turn_lost')
        .filter((l) => l.mail_id === sent.mail_id)
        .map((l) => l.attempt),
      'one loss, redelivered once',
    ).toEqual([1]);
    const spawns = bridge.bridgeEvents('worker_spawned').filter((l) => l.mail_id === sent.mail_id);
    expect(spawns.map((l) => l.attempt)).toEqual([1, 2]);
    // The redelivery's worker comes from the new launcher: forked after it.
    const restartAt = lines.findIndex(
      (l) => l.includes('"event":"launcher_forked"') && l.includes('"restart":true'),
    );
    const retryAt = lines.findIndex(
      (l) =>
        l.includes('"event":"worker_spawned"') &&
        l.includes(`"mail_id":"${sent.mail_id}"`) &&
        /"attempt":2[,}]/.test(l),
    );
    expect(restartAt).toBeGreaterThan(-1);
    expect(retryAt, 'attempt 2 forked by the new launcher').toBeGreaterThan(restartAt);
    const answers = (await stack.thread(sent.mail_id)).filter((m) => m.from_name === stack.agent.name);
    expect(
      answers.map((m) => m.body),
      'exactly one mail back: the reply, no failure mail',
    ).toEqual([reply.body]);
  }, 240_000);

  it('a daemon killed mid-turn leaves nothing behind: its launcher and worker exit within seconds', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('daemon-dies');
    stack.model.addScenarios([{ name: `${task}:hang`, match: turnStart(task), reply: { type: 'hang' } }]);
    const bridge = await stack.startBridge(piAdapter);

    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Task ${task}`, body: 'Go.' });
    const held = await heldTurn(stack, bridge, { mailId: sent.mail_id, attempt: 1, task });
    // The daemon's pid alone: a signal to its process group would reach the launcher too.
    process.kill(bridge.pid, 'SIGKILL');
    expect(await bridge.exited).toEqual({ code: null, signal: 'SIGKILL' });

    await waitGone({ launcher: held.launcher, worker: held.worker }, ORPHAN_GONE_MS);
  }, 240_000);
});
