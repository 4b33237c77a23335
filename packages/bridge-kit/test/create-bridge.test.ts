import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMailEvent } from '@agentmail/protocol';
import { failureRelayKey, formatText, mailRelayKey } from '@agentmail/shared-policy';
import { summary } from '@agentmail/shared-policy/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeConfig } from '../src/bridge-config.js';
import { type Bridge, type BridgeAdapter, bridgeInternals, createBridge } from '../src/create-bridge.js';
import type { BridgeEvent } from '../src/events.js';
import { agentGateway, type Gw } from './support/agent-gateway.js';
import { deferred, frame, newMail } from './support/bridge-fixtures.js';
import { ReferenceHost, type ReferenceHostOptions } from './support/reference-host.js';

// The kit end to end over a real loopback HTTP + SSE stand-in Gateway (support/agent-gateway) and
// the reference adapter (support/reference-host, the worked example of docs/BRIDGE-CONTRACT.md).

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

interface Extra {
  /** Change the reference adapter (a host that breaks the contract). */
  adapter?: (a: BridgeAdapter) => BridgeAdapter;
  rpc?: boolean;
  dataDir?: string;
}

/** Every event of each bridge `setup` made, from its creation on. */
const eventLogs = new WeakMap<Bridge, BridgeEvent[]>();

async function setup(
  hostOptions: ReferenceHostOptions = {},
  over: Partial<BridgeConfig> = {},
  gwReady?: Gw,
  extra: Extra = {},
) {
  const gw = gwReady ?? (await agentGateway());
  cleanup.push(() => gw.close());
  gw.on('POST', '/api/v1/agent/heartbeat', () => ({
    json: {
      status: 'ok',
      server_time: new Date().toISOString(),
      allowed_models: ['ref/good'],
      unknown_fields: [],
      heartbeat_interval_ms: 30_000,
    },
  }));
  const dataDir = extra.dataDir ?? (await mkdtemp(join(tmpdir(), 'am-kit-')));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const host = new ReferenceHost(hostOptions);
  const config: BridgeConfig = {
    gatewayUrl: gw.url,
    agentName: 'ref',
    agentKey: 'k1',
    hostDefault: '',
    concurrency: 4,
    turnTimeoutMs: 10_000,
    heartbeatMs: 60_000,
    locale: 'en',
    dataDir,
    ...over,
  };
  const bridge = createBridge({
    platform: 'opencode',
    version: 'ref/1',
    config,
    adapter: extra.adapter ? extra.adapter(host.adapter()) : host.adapter(),
    ...(extra.rpc ? { rpc: true } : {}),
    timing: { stopGraceMs: 1_000, firstSseOpenWaitMs: 5_000, startRetryInitialMs: 10 },
  });
  const events: BridgeEvent[] = [];
  bridge.events.subscribe((e) => events.push(e));
  eventLogs.set(bridge, events);
  cleanup.push(() => bridge.stop());
  return { gw, host, bridge, events, dataDir };
}

const sends = (gw: Gw) =>
  gw.requests.filter((r) => r.path === '/api/v1/mail/send').map((r) => r.json as Record<string, unknown>);
const mailFrame = (id: number, mail: NewMailEvent) => frame(id, 'new_mail', mail);

/** The bridge's last word on a mail: its turn_done / turn_failed / turn_timed_out(+failure mail). */
/** Resolves once `cond()` holds (checked every 10 ms); rejects after `timeoutMs`. */
async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

async function settled(bridge: Bridge, mailId: string): Promise<BridgeEvent> {
  // Turns run concurrently: the awaited turn may have ended before this call; look back first.
  const seen = eventLogs.get(bridge)?.find((e) => e.type === 'turn_done' && e.mail_id === mailId);
  if (seen) return seen;
  return bridge.events.next('turn_done', (e) => e.mail_id === mailId, { timeoutMs: 10_000 });
}

describe('createBridge: start (B-1, B-20, G-25)', () => {
  it('lock → register → heartbeat → stream → catch-up → ready, as events', async () => {
    const { bridge, events, gw } = await setup();
    await bridge.start();
    expect(events.map((e) => e.type)).toEqual([
      'lock_taken',
      'registered',
      'stream_open',
      'catch_up_done',
      'ready',
    ]);
    expect(gw.requests[0]?.json).toEqual({
      name: 'ref',
      platform: 'opencode',
      version: 'ref/1',
      expire_pending: true,
    });
    expect(bridgeInternals(bridge).allowedModels).toEqual(['ref/good']);
  });

  it('a Gateway that is not up yet is retried with backoff (start_failed, transient), then ready', async () => {
    const gw = await agentGateway();
    let calls = 0;
    gw.on('POST', '/api/v1/agent/register', () => {
      calls++;
      return calls < 3
        ? { status: 503, json: { error: 'unavailable', detail: 'starting' } }
        : { json: { name: 'ref', platform: 'opencode', created: true, heartbeat_interval_ms: 30_000 } };
    });
    const { bridge, events } = await setup({}, {}, gw);
    await bridge.start();
    const failed = events.filter((e) => e.type === 'start_failed');
    expect(failed).toHaveLength(2);
    expect(failed.map((e) => (e as { permanent: boolean }).permanent)).toEqual([false, false]);
    expect(events.at(-1)?.type).toBe('ready');
  });

  it('a permanent refusal (wrong key) fails start() at once by default', async () => {
    const gw = await agentGateway();
    gw.on('POST', '/api/v1/agent/register', () => ({
      status: 401,
      json: { error: 'unauthorized', detail: 'unknown agent key' },
    }));
    const { bridge, events } = await setup({}, {}, gw);
    await expect(bridge.start()).rejects.toMatchObject({ status: 401 });
    expect(events.find((e) => e.type === 'start_failed')).toMatchObject({ permanent: true });
  });

  it('a second stop() waits for the first one to finish (lock released, `stopped` emitted)', async () => {
    const { bridge, events } = await setup();
    await bridge.start();
    const first = bridge.stop();
    await bridge.stop();
    expect(
      events.filter((e) => e.type === 'stopped'),
      'the second call returned only after the stop',
    ).toHaveLength(1);
    await first;
  });

  it('the heartbeat offers only sessions a person opened: the bridge’s own mail sessions are filtered (G-37)', async () => {
    const { bridge, gw, host } = await setup();
    const person = host.openPersonSession('/srv/app', 'my own work');
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await settled(bridge, 'm1');
    // One more heartbeat, through the runtime: restart the bridge on the same data directory.
    await bridge.stop();
    const again = createBridge({
      platform: 'opencode',
      version: 'ref/1',
      config: bridgeInternals(bridge).config,
      adapter: host.adapter(),
    });
    cleanup.push(() => again.stop());
    await again.start();
    const beats = gw.requests.filter((r) => r.path === '/api/v1/agent/heartbeat');
    const last = beats.at(-1)?.json as { sessions: Array<{ platform_id: string }> };
    expect(host.sessions.size).toBe(2);
    expect(last.sessions.map((s) => s.platform_id)).toEqual([person.id]);
  });
});

describe('createBridge: the G-37 filter while a session is being created', () => {
  it('a session the host lists before the bridge learns it made it is never offered for adoption', async () => {
    const gate = deferred();
    let hostRef: ReferenceHost | undefined;
    let made: string | undefined;
    const { bridge, gw, host } = await setup({}, { heartbeatMs: 1_000 }, undefined, {
      adapter: (a) => ({
        ...a,
        turns: {
          ...(a.turns as NonNullable<BridgeAdapter['turns']>),
          // The host has the session (its list shows it) before the creation answer reached us.
          runAttempt: async (_attempt, ctx) => {
            made = hostRef?.openPersonSession(ctx.cwd, 'made for the mail').id;
            await gate.promise;
            await ctx.sessionCreated({ platformSessionId: made ?? '' });
            return { ok: false, cause: 'scripted failure' };
          },
        },
      }),
    });
    hostRef = host;
    await bridge.start();
    const started = bridge.events.next('turn_started', undefined, { timeoutMs: 5_000 });
    await gw.push(mailFrame(1, newMail('m_made')));
    await started;
    const beats = () =>
      gw.requests
        .filter((r) => r.path === '/api/v1/agent/heartbeat')
        .map((r) => (r.json as { sessions?: Array<{ platform_id: string }> }).sessions ?? []);
    const before = beats().length;
    await until(() => made !== undefined && beats().length >= before + 2, 10_000);
    for (const sessions of beats().slice(before))
      expect(
        sessions.map((s) => s.platform_id),
        'offered while being created',
      ).not.toContain(made);
    gate.resolve();
    await bridge.events.next('failure_mail_sent', (e) => e.mail_id === 'm_made', { timeoutMs: 10_000 });
    const after = beats().length;
    await until(() => beats().length > after, 10_000);
    expect(
      beats()
        .at(-1)
        ?.map((s) => s.platform_id),
      'bound: never offered',
    ).not.toContain(made);
  });
});

describe('createBridge: turns (B-4, B-10, B-11)', () => {
  it("a mail runs a turn in a new host session, relayed once with the mail's relay key; a reply resumes it", async () => {
    const { bridge, gw, host } = await setup();
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    const done = await settled(bridge, 'm1');
    expect(done).toMatchObject({ platform_session_id: 'ref_1', relay: { sent: true } });
    expect(sends(gw).map((s) => s.relay_key)).toEqual([mailRelayKey('m1')]);
    expect((await bridgeInternals(bridge).bindings.get('s1'))?.platformSessionId).toBe('ref_1');
    await gw.push(mailFrame(2, newMail('m2')));
    await settled(bridge, 'm2');
    expect(host.sessions.size, 'the same Gateway session resumes the same host session').toBe(1);
    expect(host.sessions.get('ref_1')?.entries).toHaveLength(4);
  });

  it('the crash window (B-10, G-32): a mail run again after its relay was taken but before it was marked read relays with the same key', async () => {
    const gw = await agentGateway();
    // The crash: the Gateway took the relay, the bridge never recorded the mail (mark-read lost).
    gw.on('POST', '/api/v1/mail/read', () => ({ status: 503, json: { error: 'internal' } }));
    const host = new ReferenceHost();
    const first = await setup({}, {}, gw, { adapter: () => host.adapter() });
    await first.bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await settled(first.bridge, 'm1');
    await first.bridge.stop();
    // The restart: the mail is still unread; the host's session has moved on (new entry ids).
    gw.on('GET', '/api/v1/mail/inbox', () => ({
      json: { mails: [summary('m1')], unread_count: 1, has_more: false },
    }));
    const second = await setup({}, {}, gw, { adapter: () => host.adapter(), dataDir: first.dataDir });
    await second.bridge.start();
    await settled(second.bridge, 'm1');
    const keys = sends(gw).map((s) => s.relay_key);
    expect(keys, 'the mail ran twice, each run relayed').toHaveLength(2);
    expect(keys[1], 'the same key: the Gateway answers the second with duplicate_relay').toBe(keys[0]);
    expect(keys[0]).toBe(mailRelayKey('m1'));
  }, 30_000);

  it('a host without entry ids relays exactly once, keyed by the mail', async () => {
    const { bridge, gw } = await setup({ noEntryIds: true });
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m_noid')));
    await settled(bridge, 'm_noid');
    expect(sends(gw).map((s) => s.relay_key)).toEqual([mailRelayKey('m_noid')]);
  });

  it('while a turn runs, a host hook finds it by its platform session; a person’s session has none', async () => {
    const hold = deferred();
    let during: unknown;
    let personTurn: unknown = 'unset';
    const { bridge, gw, host } = await setup({ hold: () => hold.promise });
    const person = host.openPersonSession('/srv/app', 'mine');
    await bridge.start();
    const started = bridge.events.next('turn_started', undefined, { timeoutMs: 5_000 });
    await gw.push(mailFrame(1, newMail('m1')));
    await started;
    await new Promise<void>((resolve) => {
      const poll = (): void => {
        if (host.sessions.size < 2) return void setImmediate(poll);
        during = bridge.activeTurns.byPlatformSession('ref_2');
        personTurn = bridge.activeTurns.byPlatformSession(person.id);
        resolve();
      };
      poll();
    });
    hold.resolve();
    await settled(bridge, 'm1');
    expect((during as { mail?: NewMailEvent } | undefined)?.mail?.mail_id).toBe('m1');
    expect(personTurn).toBeUndefined();
    expect(bridgeInternals(bridge).activeTurns.size).toBe(0);
  });
});

// The turn timeout counts from the turn's start, its set-up before the host's attempt included:
// at 100 ms a loaded machine once timed out before the attempt began, so the case under test
// (a host that is running when the timeout comes) never happened. The tests wait for the attempt
// and fail with that cause if the timeout came first.
const TIMEOUT_MS = 1_000;

/** The turn's `turn_timed_out`; rejects when it came before the host's attempt started. */
function timedOutAfterAttempt(bridge: Bridge, mailId: string, started: Promise<void>) {
  let attempted = false;
  void started.then(() => {
    attempted = true;
  });
  return bridge.events
    .next('turn_timed_out', (e) => e.mail_id === mailId, { timeoutMs: 10_000 })
    .then((e) => {
      if (!attempted)
        throw new Error(
          `the turn timed out before the host's attempt started (turn timeout ${TIMEOUT_MS} ms)`,
        );
      return e;
    });
}

describe('createBridge: one outcome per mail at the timeout (B-7, B-9, B-10)', () => {
  it('regression: a turn that finishes and relays inside the grace period gets only its reply, no timeout failure mail', async () => {
    const started = deferred();
    const { bridge, gw } = await setup(
      {
        onAbort: 'late',
        lateMs: 50,
        hold: () => {
          started.resolve();
          return new Promise(() => undefined);
        },
      },
      { turnTimeoutMs: TIMEOUT_MS },
    );
    // The work never ends by itself; 50 ms after the abort the host ends the turn with an answer.
    await bridge.start();
    const timedOut = timedOutAfterAttempt(bridge, 'm_grace', started.promise);
    await gw.push(mailFrame(1, newMail('m_grace')));
    expect((await timedOut).late).toBe(true);
    await settled(bridge, 'm_grace');
    expect(sends(gw).map((s) => s.relay_key)).toEqual([mailRelayKey('m_grace')]);
  });

  it('a turn that does not end within the grace period: one timeout failure mail, and its late answer is never relayed', async () => {
    const hold = deferred();
    const started = deferred();
    const { bridge, gw } = await setup(
      {
        onAbort: 'ignore',
        hold: () => {
          started.resolve();
          return hold.promise;
        },
      },
      { turnTimeoutMs: TIMEOUT_MS },
    );
    await bridge.start();
    const timedOut = timedOutAfterAttempt(bridge, 'm_stuck', started.promise);
    const failed = bridge.events.next('failure_mail_sent', (e) => e.mail_id === 'm_stuck', {
      timeoutMs: 10_000,
    });
    await gw.push(mailFrame(1, newMail('m_stuck')));
    await timedOut;
    await failed;
    const skipped = bridge.events.next('relay_skipped', (e) => e.mail_id === 'm_stuck', { timeoutMs: 5_000 });
    hold.resolve(); // the host finally ends the turn with an answer
    expect((await skipped).reason).toMatch(/given up/);
    expect(sends(gw).map((s) => s.relay_key)).toEqual([failureRelayKey('m_stuck')]);
    expect(sends(gw)[0]?.body).toContain(formatText('failure.timeout', { timeout_s: 1 }));
  });
});

describe('createBridge: the permission seam of a turn (P-1..P-7)', () => {
  it('a guarded call asks by mail and waits; the decision on the stream lets it run', async () => {
    const { bridge, gw, host } = await setup({
      script: () => [{ tool: 'bash', command: 'wc -l notes.txt' }, { text: 'done' }],
    });
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    const asked = await bridge.events.next('permission_asked', undefined, { timeoutMs: 5_000 });
    await gw.push(
      frame(2, 'permission_decision', {
        relay_key: asked.relay_key,
        request_id: asked.request_id,
        session_id: 's1',
        answers: [],
        decision: 'approve_once',
        note: '',
        fresh_mails: [],
      }),
    );
    await settled(bridge, 'm1');
    expect(host.toolLog).toEqual([{ session: 'ref_1', command: 'wc -l notes.txt', allowed: true }]);
  });

  it('deny with a note: the host sees the note', async () => {
    const { bridge, gw, host } = await setup({
      script: () => [{ tool: 'bash', command: 'rm -rf build' }, { text: 'ok' }],
    });
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    const asked = await bridge.events.next('permission_asked', undefined, { timeoutMs: 5_000 });
    await gw.push(
      frame(2, 'permission_decision', {
        relay_key: asked.relay_key,
        request_id: asked.request_id,
        session_id: 's1',
        answers: [],
        decision: 'deny',
        note: 'use make clean',
        fresh_mails: [],
      }),
    );
    await settled(bridge, 'm1');
    expect(host.toolLog[0]).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('use make clean'),
    });
  });

  it('shutdown while a call waits: it is denied (P-7) and the bridge stops', async () => {
    const { bridge, gw, host, events } = await setup({
      script: () => [{ tool: 'bash', command: 'make' }, { text: 'ok' }],
    });
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await bridge.events.next('permission_asked', undefined, { timeoutMs: 5_000 });
    await bridge.stop();
    expect(events.find((e) => e.type === 'permission_decided')).toMatchObject({
      decision: 'deny',
      source: 'shutdown',
    });
    expect(host.toolLog[0]).toMatchObject({ allowed: false });
    expect(events.at(-1)?.type).toBe('stopped');
    expect(sends(gw), 'a shutdown sends no failure mail').toEqual([]);
  });
});

// Found by a bridge author's trial of the kit (each test was red before its fix).
describe('createBridge: hardening against odd hosts and Gateways', () => {
  it('a reply the Gateway refuses once (503) is retried and delivered', async () => {
    const gw = await agentGateway();
    let sendCalls = 0;
    gw.on('POST', '/api/v1/mail/send', () =>
      ++sendCalls === 1
        ? { status: 503, json: { error: 'unavailable' } }
        : {
            json: {
              status: 'sent',
              mail_id: 'm_out',
              session_id: 's1',
              session_alias: 'a',
              address: 'x',
              rounds_left: null,
            },
          },
    );
    const { bridge } = await setup({}, {}, gw);
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    const done = await settled(bridge, 'm1');
    expect(done).toMatchObject({ relay: { sent: true } });
    expect(sendCalls).toBe(2);
  });

  it('a reply the Gateway keeps refusing leaves the mail unread, and the next catch-up delivers it again', async () => {
    const gw = await agentGateway();
    let refuse = true;
    gw.on('POST', '/api/v1/mail/send', () =>
      refuse
        ? { status: 503, json: { error: 'unavailable' } }
        : {
            json: {
              status: 'sent',
              mail_id: 'm_out',
              session_id: 's1',
              session_alias: 'a',
              address: 'x',
              rounds_left: null,
            },
          },
    );
    const { bridge } = await setup({}, { heartbeatMs: 1_000 }, gw);
    await bridge.start();
    const first = bridge.events.next('turn_done', (e) => e.mail_id === 'm1', { timeoutMs: 15_000 });
    await gw.push(mailFrame(1, newMail('m1')));
    expect((await first).relay).toMatchObject({ sent: false, undelivered: true });
    expect(
      gw.requests.filter((r) => r.path === '/api/v1/mail/read'),
      'not marked read',
    ).toEqual([]);
    // The mail is still unread at the Gateway: the next pass (after the next heartbeat) runs it again.
    refuse = false;
    gw.on('GET', '/api/v1/mail/inbox', () => ({
      json: { mails: [summary('m1')], unread_count: 1, has_more: false },
    }));
    const again = await bridge.events.next('turn_done', (e) => e.mail_id === 'm1', { timeoutMs: 15_000 });
    expect(again.relay).toMatchObject({ sent: true });
  }, 30_000);

  it('ids a host repeats across mails never drop a reply as a duplicate', async () => {
    const { bridge, gw } = await setup();
    await bridge.start();
    await gw.push(
      mailFrame(1, newMail('m1', { session_id: 'sA' })),
      mailFrame(2, newMail('m2', { session_id: 'sB' })),
    );
    await settled(bridge, 'm1');
    await settled(bridge, 'm2');
    const keys = sends(gw).map((s) => s.relay_key);
    expect(new Set(keys).size, `two replies, two keys: ${keys.join(', ')}`).toBe(2);
  });

  it('stop() during start() returns at once and leaves no timer behind', async () => {
    const gw = await agentGateway();
    // An event stream that never answers: start() would wait out the first-open grace.
    gw.on('GET', '/api/v1/events', () => () => undefined);
    const { bridge } = await setup({}, {}, gw);
    const started = bridge.start();
    await bridge.events.next('registered', undefined, { timeoutMs: 5_000 });
    const t0 = Date.now();
    await bridge.stop();
    await started;
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(bridge.events).toBeDefined();
  });

  it('a turn given up after its timeout loses its powers: unregistered, its seam refuses, its token revoked', async () => {
    const hold = deferred();
    const started = deferred();
    let kept: { decide: () => Promise<unknown>; env?: Record<string, string> } | undefined;
    const { bridge, gw } = await setup(
      {
        onAbort: 'ignore',
        hold: () => {
          started.resolve();
          return hold.promise;
        },
      },
      { turnTimeoutMs: TIMEOUT_MS },
      undefined,
      {
        rpc: true,
        adapter: (a) => ({
          ...a,
          turns: {
            ...(a.turns as NonNullable<BridgeAdapter['turns']>),
            runAttempt: (attempt, ctx) => {
              kept = {
                decide: () => ctx.turn.decide({ toolName: 'bash', input: {}, toolCallId: 'c1' }),
                ...(ctx.turn.rpcEnv ? { env: { ...ctx.turn.rpcEnv } } : {}),
              };
              return (a.turns as NonNullable<BridgeAdapter['turns']>).runAttempt(attempt, ctx);
            },
          },
        }),
      },
    );
    await bridge.start();
    const timedOut = timedOutAfterAttempt(bridge, 'm_stuck', started.promise);
    const failed = bridge.events.next('failure_mail_sent', (e) => e.mail_id === 'm_stuck', {
      timeoutMs: 10_000,
    });
    await gw.push(mailFrame(1, newMail('m_stuck')));
    await timedOut;
    await failed;
    expect(bridgeInternals(bridge).activeTurns.size, 'no longer registered').toBe(0);
    expect(await kept?.decide()).toMatchObject({ allow: false, reason: formatText('permission.turn_ended') });
    const { TurnRpcClient } = await import('../src/rpc/client.js');
    const client = TurnRpcClient.fromEnv(kept?.env ?? {});
    await expect(client.context()).rejects.toMatchObject({ code: 'AM_RPC_TOKEN_INVALID' });
    hold.resolve();
  });

  it('a failing snapshot still sends the heartbeat (advisory) and the backlog runs', async () => {
    const gw = await agentGateway([summary('m_old')]);
    const { bridge } = await setup({}, {}, gw, {
      adapter: (a) => ({
        ...a,
        snapshot: async () => {
          throw new Error('host is sleepy');
        },
      }),
    });
    const backlog = settled(bridge, 'm_old');
    await bridge.start();
    const beat = gw.requests.find((r) => r.path === '/api/v1/agent/heartbeat')?.json as Record<
      string,
      unknown
    >;
    expect(beat).toMatchObject({ mode_enforcement: 'advisory' });
    expect(String(beat.mode_enforcement_reason)).toContain('host is sleepy');
    await backlog;
  });

  it('a snapshot with a wrong enforcement word is advisory, and bad sessions are left out', async () => {
    const gw = await agentGateway();
    const { bridge } = await setup({}, {}, gw, {
      adapter: (a) => ({
        ...a,
        snapshot: async () => ({ mode_enforcement: 'sometimes', sessions: [{ nope: 1 }] }) as never,
      }),
    });
    await bridge.start();
    const beat = gw.requests.find((r) => r.path === '/api/v1/agent/heartbeat')?.json as Record<
      string,
      unknown
    >;
    expect(beat.mode_enforcement).toBe('advisory');
    expect(beat.sessions).toBeUndefined();
  });

  it('a malformed attempt outcome is a failed attempt naming the field, never a silent success or a crash', async () => {
    const outcomes: unknown[] = [{ ok: 'yes' }, undefined, { ok: true, finalParts: 'a string' }];
    for (const [i, outcome] of outcomes.entries()) {
      const { bridge, gw } = await setup({}, {}, undefined, {
        adapter: (a) => ({
          ...a,
          turns: {
            ...(a.turns as NonNullable<BridgeAdapter['turns']>),
            runAttempt: async () => outcome as never,
          },
        }),
      });
      await bridge.start();
      const failed = bridge.events.next('turn_failed', undefined, { timeoutMs: 5_000 });
      await gw.push(mailFrame(1, newMail(`m_bad${i}`)));
      expect((await failed).cause).toMatch(/invalid attempt outcome/);
      await bridge.stop();
    }
  });

  it('a guarded call without a call id is still asked (a unique key), never a throw', async () => {
    let outcome: unknown;
    const { bridge, gw } = await setup({}, {}, undefined, {
      adapter: (a) => ({
        ...a,
        turns: {
          ...(a.turns as NonNullable<BridgeAdapter['turns']>),
          runAttempt: async (_attempt, ctx) => {
            outcome = await ctx.turn.decide({ toolName: 'bash', input: { command: 'make' }, toolCallId: '' });
            return { ok: true, finalParts: [{ type: 'text', text: 'done' }] };
          },
        },
      }),
    });
    await bridge.start();
    await gw.push(mailFrame(1, newMail('m1')));
    const asked = await bridge.events.next('permission_asked', undefined, { timeoutMs: 5_000 });
    expect(asked.relay_key).toMatch(/^permission:m1:/);
    await gw.push(
      frame(2, 'permission_decision', {
        relay_key: asked.relay_key,
        request_id: asked.request_id,
        session_id: 's1',
        answers: [],
        decision: 'approve_once',
        note: '',
        fresh_mails: [],
      }),
    );
    await settled(bridge, 'm1');
    expect(outcome).toEqual({ allow: true });
  });

  it('a socket path that is too long fails start(), not every mail', async () => {
    const long = join(tmpdir(), `am-kit-${'x'.repeat(120)}`);
    const { bridge } = await setup({}, {}, undefined, { rpc: true, dataDir: long });
    await expect(bridge.start()).rejects.toMatchObject({ code: 'AM_RPC_SOCKET_PATH_TOO_LONG' });
  });

  it('a hand-built configuration is checked: bad values name the setting', async () => {
    await expect(setup({}, { heartbeatMs: 0 })).rejects.toMatchObject({
      code: 'AM_BRIDGE_CONFIG_INVALID',
      message: expect.stringContaining('heartbeatMs'),
    });
    await expect(setup({}, { turnTimeoutMs: -5 })).rejects.toMatchObject({
      message: expect.stringContaining('turnTimeoutMs'),
    });
    await expect(setup({}, { dataDir: 'relative/dir' })).rejects.toMatchObject({
      message: expect.stringContaining('dataDir'),
    });
  });

  it('https:// for a plain-HTTP Gateway fails start() with the fix, instead of retrying forever', async () => {
    const gw = await agentGateway();
    const { bridge } = await setup({}, { gatewayUrl: gw.url.replace('http://', 'https://') }, gw);
    await expect(bridge.start()).rejects.toMatchObject({
      code: 'AM_BRIDGE_CONFIG_INVALID',
      message: expect.stringMatching(/does not speak TLS[\s\S]*use an http:\/\/ URL/),
    });
  });
});
