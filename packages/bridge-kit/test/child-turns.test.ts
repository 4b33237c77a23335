/**
 * The child-process turn runner (SPEC B-12, B-7, B-14, B-15) with real child processes: the kit's
 * launcher from source and a tiny fake worker (test/fixtures/child-worker.ts, the kit's real
 * worker side over a fake host) talking to a loopback stand-in Gateway. No mocks: every message
 * crosses two IPC channels (runner ↔ launcher ↔ worker). Tests wait on events, never on sleeps.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeConfig } from '../src/bridge-config.js';
import { TurnLostError } from '../src/bridge-runtime.js';
import type { ChildTurnEvent } from '../src/child-turns/messages.js';
import {
  type ChildProcessTurns,
  type ChildTurnsBridge,
  childProcessTurns,
} from '../src/child-turns/runner.js';
import { type Bridge, createBridge } from '../src/create-bridge.js';
import { type BridgeEvent, BridgeEventBus } from '../src/events.js';
import { TurnGate } from '../src/turn-gate.js';
import type { TurnJob } from '../src/turn-job.js';
import { agentGateway, type Gw } from './support/agent-gateway.js';
import { frame, newMail } from './support/bridge-fixtures.js';

const WORKER = fileURLToPath(new URL('./fixtures/child-worker.ts', import.meta.url));
const LAUNCHER = fileURLToPath(new URL('../src/child-turns/launcher-main.ts', import.meta.url));
/**
 * The fake worker imports the kit's sources: tsx (by path: a worker's cwd is the runner's, where
 * tsx may not resolve), and the packages' source entries.
 */
const FROM_SOURCE = [
  '--conditions=@agentmail/source',
  '--import',
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
];
/** The runner's grace after abort and shutdown (the real default is 5 s). */
const GRACE_MS = 3_000;
/** A worker's start under tsx on a loaded 2-core machine. */
const STEP_MS = 20_000;

type FakeEvent =
  | { type: 'fake_started'; mail_id: string; pid: number }
  | { type: 'fake_aborted'; mail_id: string; reason: string };
type AnyEvent = BridgeEvent | ChildTurnEvent | FakeEvent;

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** Every event of a bus, and a wait that looks back first (an event may precede the wait). */
function recorder(bus: { subscribe(l: (e: AnyEvent) => void): () => void }) {
  const events: AnyEvent[] = [];
  const waiters = new Set<() => void>();
  bus.subscribe((e) => {
    events.push(e);
    for (const w of [...waiters]) w();
  });
  const seen = <T extends AnyEvent['type']>(
    type: T,
    where: (e: Extract<AnyEvent, { type: T }>) => boolean = () => true,
    timeoutMs = STEP_MS,
  ): Promise<Extract<AnyEvent, { type: T }>> =>
    new Promise((resolve, reject) => {
      const find = () =>
        events.find((e): e is Extract<AnyEvent, { type: T }> => e.type === type && where(e as never));
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(`no "${type}" event within ${timeoutMs} ms; got ${events.map((e) => e.type).join(', ')}`),
        );
      }, timeoutMs);
      const check = (): void => {
        const hit = find();
        if (!hit) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(hit);
      };
      waiters.add(check);
      check();
    });
  return { events, seen };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'am-kit-child-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function gateway(): Promise<Gw> {
  const gw = await agentGateway();
  cleanup.push(() => gw.close());
  return gw;
}

const sends = (gw: Gw) =>
  gw.requests.filter((r) => r.path === '/api/v1/mail/send').map((r) => r.json as Record<string, unknown>);

/** The runner alone, over a bus standing in for the bridge. */
async function runnerAlone() {
  const gw = await gateway();
  const dataDir = await tempDir();
  const bus = new BridgeEventBus<AnyEvent>();
  const stopping = new AbortController();
  const bridge: ChildTurnsBridge = {
    emit: (e) => bus.emit(e as AnyEvent),
    reconnect: () => undefined,
    stopSignal: stopping.signal,
  };
  const children = childProcessTurns({
    worker: { path: WORKER, execArgv: FROM_SOURCE },
    launcherPath: LAUNCHER,
    bridge: () => bridge,
    stopGraceMs: GRACE_MS,
  });
  cleanup.push(() => children.close());
  const job = (id: string, subject: string): TurnJob => ({
    mail: newMail(id, { subject }),
    backlog: false,
    attempt: 1,
    platform: 'pi',
    agentName: 'fake',
    allowedModels: [],
    hostDefault: '',
    gatewayUrl: gw.url,
    agentKey: 'k1',
    dataDir,
    locale: 'en',
    turnTimeoutMs: 60_000,
  });
  const run = (j: TurnJob, signal = new AbortController().signal) =>
    children.adapter.delegateTurn(j, { signal, gate: new TurnGate(), emit: (e) => bus.emit(e) });
  return { gw, children, run, job, ...recorder(bus) };
}

/** A whole bridge (createBridge) over the runner and the stand-in Gateway. */
async function bridgeOverRunner(): Promise<{
  gw: Gw;
  bridge: Bridge<ChildTurnEvent | FakeEvent>;
  children: ChildProcessTurns;
  seen: ReturnType<typeof recorder>['seen'];
  events: AnyEvent[];
}> {
  const gw = await gateway();
  const config: BridgeConfig = {
    gatewayUrl: gw.url,
    agentName: 'fake',
    agentKey: 'k1',
    hostDefault: '',
    concurrency: 2,
    turnTimeoutMs: 60_000,
    heartbeatMs: 60_000,
    locale: 'en',
    dataDir: await tempDir(),
  };
  const children = childProcessTurns({
    worker: { path: WORKER, execArgv: FROM_SOURCE },
    launcherPath: LAUNCHER,
    bridge: () => bridge,
    stopGraceMs: GRACE_MS,
  });
  const bridge: Bridge<ChildTurnEvent | FakeEvent> = createBridge<ChildTurnEvent | FakeEvent>({
    platform: 'pi',
    version: 'fake/1',
    config,
    adapter: { snapshot: async () => ({ mode_enforcement: 'native' }), ...children.adapter },
    timing: { stopGraceMs: GRACE_MS, firstSseOpenWaitMs: 5_000, startRetryInitialMs: 10 },
  });
  const rec = recorder(bridge.events);
  cleanup.push(async () => {
    await bridge.stop();
    children.close();
  });
  await bridge.start();
  return { gw, bridge, children, ...rec };
}

describe('childProcessTurns: one worker process per mail (B-12)', () => {
  it('a turn runs in a worker and its reply goes out through the kit (relay, one outcome per mail)', async () => {
    const { gw, bridge, seen, events } = await bridgeOverRunner();
    await gw.push(frame(1, 'new_mail', newMail('m_reply', { subject: 'reply please' })));

    const done = await seen('turn_done', (e) => e.mail_id === 'm_reply');
    expect(done.relay).toEqual({ sent: true, mailId: 'm_f', duplicate: false });
    const spawned = await seen('worker_spawned', (e) => e.mail_id === 'm_reply');
    const started = await seen('fake_started', (e) => e.mail_id === 'm_reply');
    expect(started.pid, 'the host ran in the worker, not in this process').toBe(spawned.worker_pid);
    expect(started.pid).not.toBe(process.pid);
    expect(sends(gw).map((s) => s.body)).toEqual([expect.stringContaining('answer to reply please')]);
    expect(
      events.filter((e) => e.type === 'launcher_forked'),
      'one launcher, forked for the first worker',
    ).toEqual([{ type: 'launcher_forked', launcher: expect.any(Number), restart: false }]);
    expect(bridge.activeTurns.byPlatformSession(`fake-m_reply`), 'the turn is over').toBeUndefined();
  });

  it('a one-shot task runs in a worker of its own and returns its result', async () => {
    const { children } = await runnerAlone();
    const outcome = await children.runTask<{ echoed: string; pid: number }>(
      { echo: 'ping' },
      { timeoutMs: STEP_MS },
    );
    expect(outcome).toEqual({ started: true, result: { echoed: 'ping', pid: expect.any(Number) } });
    if (outcome.started) expect(outcome.result?.pid).not.toBe(process.pid);
  });

  it('an abort (turn timeout, B-7) reaches the worker, which stops its turn and reports well within the grace', async () => {
    const { gw, run, job, seen } = await runnerAlone();
    const abort = new AbortController();
    const turn = run(job('m_hang', 'hang on'), abort.signal);
    await seen('fake_started', (e) => e.mail_id === 'm_hang');

    const abortedAt = Date.now();
    abort.abort('timeout');
    const aborted = await seen('fake_aborted', (e) => e.mail_id === 'm_hang', GRACE_MS);
    expect(aborted.reason).toBe('turn timeout');
    const report = await turn;
    expect(Date.now() - abortedAt, 'the worker reported itself, before any kill').toBeLessThan(GRACE_MS);
    expect(report).toMatchObject({ ok: false, kind: 'timeout', failureMailSent: true });
    expect(sends(gw), 'the timeout failure mail (B-9)').toHaveLength(1);
  });

  it('a worker that ignores the abort is killed, with its process group, once the grace is over', async () => {
    const { run, job, seen } = await runnerAlone();
    const abort = new AbortController();
    const turn = run(job('m_stubborn', 'stubborn one'), abort.signal);
    const { pid } = await seen('fake_started', (e) => e.mail_id === 'm_stubborn');

    const abortedAt = Date.now();
    abort.abort('timeout');
    const lost = await turn.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(lost).toBeInstanceOf(TurnLostError);
    expect(String(lost)).toMatch(/signal SIGKILL/);
    expect(Date.now() - abortedAt, 'killed at the end of the grace, not before').toBeGreaterThanOrEqual(
      GRACE_MS - 50,
    );
    expect(alive(pid), 'the worker is gone').toBe(false);
  });

  it('a worker that crashes mid-turn is a lost turn (TurnLostError: redelivered, B-14), not a report', async () => {
    const { run, job, seen, gw } = await runnerAlone();
    const turn = run(job('m_crash', 'crash now'));
    await seen('fake_started', (e) => e.mail_id === 'm_crash');
    const lost = await turn.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(lost).toBeInstanceOf(TurnLostError);
    expect(String(lost)).toMatch(/worker exited \(code 70, signal null\) before reporting/);
    expect(sends(gw), 'no reply and no failure mail from a lost turn').toEqual([]);
  });

  it("the bridge's stop while a worker runs: the worker is told (shutdown, P-7), stops without a failure mail, and the stop ends within the grace (B-15)", async () => {
    const { gw, bridge, seen } = await bridgeOverRunner();
    await gw.push(frame(1, 'new_mail', newMail('m_busy', { subject: 'hang until the stop' })));
    const { pid } = await seen('fake_started', (e) => e.mail_id === 'm_busy');

    const stoppedAt = Date.now();
    await bridge.stop();
    expect(Date.now() - stoppedAt, 'the worker stopped by itself: no kill was needed').toBeLessThan(GRACE_MS);
    expect(await seen('workers_stopping')).toEqual({ type: 'workers_stopping', workers: 1 });
    expect((await seen('fake_aborted', (e) => e.mail_id === 'm_busy')).reason).toBe('shutdown');
    await seen('turn_interrupted', (e) => e.mail_id === 'm_busy');
    expect(alive(pid), 'the worker is gone').toBe(false);
    expect(sends(gw), 'a stopped turn sends nothing: the mail stays unread (B-20)').toEqual([]);
    expect(gw.requests.filter((r) => r.path === '/api/v1/mail/read')).toEqual([]);
  });
});
