import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MailSummary, NewMailEvent, PermissionDecisionEvent } from '@agentmail/protocol';
import { failureRelayKey, formatText } from '@agentmail/shared-policy';
import { type FakeGateway, summary } from '@agentmail/shared-policy/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BridgeHost,
  BridgeRuntime,
  type BridgeRuntimeConfig,
  type MailRun,
  TurnLostError,
} from '../src/bridge-runtime.js';
import type { MailTurnReport } from '../src/turn-report.js';
import { agentGateway, type Gw } from './support/agent-gateway.js';
import { deferred, frame, kicker, newMail, recordingBus, until } from './support/bridge-fixtures.js';

// The Gateway is a real loopback HTTP server with a real SSE stream (support/fake-gateway); the
// host is a scripted BridgeHost recording every call.

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function gateway(inbox: MailSummary[] = []): Promise<Gw> {
  const gw = await agentGateway(inbox);
  cleanup.push(() => gw.close());
  return gw;
}

const ok: MailTurnReport = {
  ok: true,
  model: 'p/a',
  platformSessionId: 'ps',
  relay: { sent: false, reason: 'test' },
};

function host(run: (r: MailRun) => Promise<MailTurnReport> = async () => ok) {
  const runs: MailRun[] = [];
  const changed = kicker();
  const events: string[] = [];
  const h: BridgeHost & { runs: MailRun[]; changed: typeof changed; events: string[] } = {
    runs,
    changed,
    events,
    heartbeat: async () => ({ mode_enforcement: 'native', models: [{ key: 'p/a', name: 'A' }] }),
    runMail: (r) => {
      runs.push(r);
      changed.kick();
      return run(r);
    },
    onPermissionDecision: (e) => {
      events.push(`decision ${e.relay_key}`);
      changed.kick();
    },
    onReconnect: (url) => events.push(`reconnect ${url}`),
    onShutdown: () => {
      events.push('shutdown');
    },
  };
  return h;
}

function runtime(gw: FakeGateway, h: BridgeHost, over: Partial<BridgeRuntimeConfig> = {}) {
  const log = recordingBus();
  const rt = new BridgeRuntime(
    {
      gatewayUrl: gw.url,
      agentKey: 'k1',
      agentName: 'pi',
      platform: 'pi',
      version: 'test/1',
      concurrency: 4,
      heartbeatMs: 60_000,
      turnTimeoutMs: 10_000,
      stopGraceMs: 1_000,
      firstSseOpenWaitMs: 5_000,
      redeliveryBackoffMs: [1, 2],
      ...over,
    },
    h,
    log.emitFn,
  );
  cleanup.push(() => rt.stop());
  return { rt, log };
}

const mailFrame = (id: number, mail: NewMailEvent) => frame(id, 'new_mail', mail);
const markedRead = (gw: FakeGateway) =>
  gw.requests.filter((r) => r.path === '/api/v1/mail/read').flatMap((r) => (r.json as { ids: string[] }).ids);
const sends = (gw: FakeGateway) =>
  gw.requests.filter((r) => r.path === '/api/v1/mail/send').map((r) => r.json as Record<string, string>);

describe('BridgeRuntime: start (B-1, B-20, G-25)', () => {
  it('register → heartbeat → SSE → catch-up, in that order; the heartbeat carries the host snapshot', async () => {
    const gw = await gateway([summary('m_old')]);
    const h = host();
    const { rt } = runtime(gw, h);
    await rt.start();
    const paths = gw.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths.slice(0, 4)).toEqual([
      'POST /api/v1/agent/register',
      'POST /api/v1/agent/heartbeat',
      'GET /api/v1/events',
      'GET /api/v1/mail/inbox',
    ]);
    expect(gw.requests[0]?.json).toEqual({
      name: 'pi',
      platform: 'pi',
      version: 'test/1',
      expire_pending: true,
    });
    expect(gw.requests[1]?.json).toEqual({
      mode_enforcement: 'native',
      version: 'test/1',
      models: [{ key: 'p/a', name: 'A' }],
    });
    expect(rt.allowedModels).toEqual(['p/a']);
    expect(h.runs.map((r) => [r.mail.mail_id, r.backlog, r.attempt, r.allowedModels])).toEqual([
      ['m_old', true, 1, ['p/a']],
    ]);
  });

  it('a mail both on the stream and in the catch-up listing runs once (shared de-duplication)', async () => {
    const gw = await gateway([summary('m_dup')]);
    const h = host();
    const { rt, log } = runtime(gw, h);
    const started = rt.start();
    await gw.push(mailFrame(1, newMail('m_dup')), mailFrame(2, newMail('m_dup')));
    await started;
    await gw.push(mailFrame(3, newMail('m_sentinel')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_sentinel');
    expect(h.runs.map((r) => r.mail.mail_id)).toEqual(['m_dup', 'm_sentinel']);
    expect(log.events.some((l) => l.type === 'mail_duplicate')).toBe(true);
  });

  it('a handled mail is marked read, so a restart does not deliver it again (B-20)', async () => {
    const gw = await gateway();
    const h = host();
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m_done')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_done');
    expect(markedRead(gw)).toEqual(['m_done']);
  });

  it('a failed turn whose failure mail could not be sent stays unread (nothing is lost)', async () => {
    const gw = await gateway();
    const h = host(async () => ({
      ok: false,
      kind: 'all_models_failed',
      cause: 'x',
      failureMailSent: false,
    }));
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m_lost')));
    await log.wait((l) => l.type === 'turn_failed' && l.mail_id === 'm_lost');
    expect(markedRead(gw)).toEqual([]);
  });

  it('forwards permission_decision events to the host', async () => {
    const gw = await gateway();
    const h = host();
    const { rt } = runtime(gw, h);
    await rt.start();
    const ev: PermissionDecisionEvent = {
      relay_key: 'rk1',
      request_id: 'p1',
      session_id: 's1',
      decision: 'approve_once',
      answers: [],
      note: '',
      fresh_mails: [],
    };
    await gw.push(frame(1, 'permission_decision', ev));
    await until(() => h.events.includes('decision rk1'), h.changed);
  });
});

describe('BridgeRuntime: stream reopened without a cursor (B-20, G-22)', () => {
  const inboxCalls = (gw: FakeGateway) => gw.requests.filter((r) => r.path === '/api/v1/mail/inbox').length;
  const runsOf = (h: { runs: MailRun[] }, id: string) => h.runs.filter((r) => r.mail.mail_id === id);
  const immediate = { sseSleep: async () => undefined };

  it('a mail created while the stream was down, only in the inbox, runs exactly once (backlog)', async () => {
    const inbox: MailSummary[] = [];
    const gw = await gateway(inbox);
    const h = host();
    const { rt, log } = runtime(gw, h, immediate);
    await rt.start(); // no event yet: the bridge has no cursor
    expect(inboxCalls(gw), 'the start pass only').toBe(1);
    inbox.push(summary('m_gap')); // created while the Gateway restarts
    gw.drop();
    await log.wait((l) => l.type === 'stream_open' && l.connection === 2);
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_gap');
    const reopened = await log.wait((l) => l.type === 'catch_up_done' && l.trigger === 'stream_reopened');
    expect(reopened).toMatchObject({ delivered: ['m_gap'] });
    expect(
      gw.requests.filter((r) => r.path === '/api/v1/events').map((r) => r.headers['last-event-id']),
    ).toEqual([undefined, undefined]);
    // A sentinel on the new stream proves the runtime is past any second delivery of m_gap.
    await gw.push(mailFrame(1, newMail('m_sentinel')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_sentinel');
    expect(runsOf(h, 'm_gap').map((r) => r.backlog)).toEqual([true]);
    expect(inboxCalls(gw)).toBe(2);
  });

  it('a mail both in the inbox and on the reopened stream runs once', async () => {
    const inbox: MailSummary[] = [];
    const gw = await gateway(inbox);
    const listing = deferred<void>();
    const secondListing = deferred<void>();
    let calls = 0;
    gw.on('GET', '/api/v1/mail/inbox', async () => {
      calls++;
      if (calls === 2) {
        secondListing.resolve();
        await listing.promise; // hold the reconnect pass until the stream delivered the mail
      }
      return { json: { mails: inbox, unread_count: inbox.length, has_more: false } };
    });
    const h = host();
    const { rt, log } = runtime(gw, h, immediate);
    await rt.start();
    inbox.push(summary('m_both'));
    gw.drop();
    await gw.push(mailFrame(1, newMail('m_both')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_both');
    await secondListing.promise;
    listing.resolve();
    const reopened = await log.wait((l) => l.type === 'catch_up_done' && l.trigger === 'stream_reopened');
    expect(reopened).toMatchObject({ delivered: [] });
    expect(reopened).toMatchObject({ skipped: [{ id: 'm_both', reason: 'seen' }] });
    expect(runsOf(h, 'm_both').map((r) => r.backlog)).toEqual([false]);
  });

  it('a reconnect that resumes with Last-Event-ID runs no extra pass (the Gateway replays)', async () => {
    const gw = await gateway();
    const h = host();
    const { rt, log } = runtime(gw, h, immediate);
    await rt.start();
    await gw.push(mailFrame(7, newMail('m1')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm1');
    gw.drop();
    await log.wait((l) => l.type === 'stream_open' && l.connection === 2);
    expect(gw.requests.filter((r) => r.path === '/api/v1/events')[1]?.headers['last-event-id']).toBe('7');
    await gw.push(mailFrame(8, newMail('m_sentinel')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_sentinel');
    expect(inboxCalls(gw)).toBe(1);
  });
});

describe('BridgeRuntime: queue (B-13)', () => {
  it('serial per session, parallel across sessions', async () => {
    const gw = await gateway();
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const h = host(async (r) => {
      const d = deferred<void>();
      gates.set(r.mail.mail_id, d);
      await d.promise;
      return ok;
    });
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(
      mailFrame(1, newMail('a1', { session_id: 'sa' })),
      mailFrame(2, newMail('a2', { session_id: 'sa' })),
      mailFrame(3, newMail('b1', { session_id: 'sb' })),
    );
    await until(() => h.runs.length === 2, h.changed);
    expect(h.runs.map((r) => r.mail.mail_id).sort(), 'a1 and b1 run together; a2 waits').toEqual([
      'a1',
      'b1',
    ]);
    gates.get('b1')?.resolve();
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'b1');
    expect(h.runs).toHaveLength(2);
    gates.get('a1')?.resolve();
    await until(() => h.runs.length === 3, h.changed);
    expect(h.runs[2]?.mail.mail_id).toBe('a2');
    gates.get('a2')?.resolve();
  });
});

describe('BridgeRuntime: timeout and lost turns (B-7, B-14, B-9)', () => {
  it('a turn over the timeout: its signal is aborted with "timeout", then a timeout failure mail', async () => {
    const gw = await gateway();
    const reasons: unknown[] = [];
    const h = host(
      (r) =>
        new Promise<MailTurnReport>(() => {
          r.signal.addEventListener('abort', () => reasons.push(r.signal.reason));
        }),
    );
    const { rt, log } = runtime(gw, h, { turnTimeoutMs: 100, stopGraceMs: 50 });
    await rt.start();
    await gw.push(mailFrame(1, newMail('m_slow')));
    await log.wait((l) => l.type === 'failure_mail_sent');
    expect(reasons).toEqual(['timeout']);
    const [fm] = sends(gw);
    expect(fm?.relay_key).toBe(failureRelayKey('m_slow'));
    expect(fm?.body).toContain(formatText('failure.timeout', { timeout_s: 0 }));
  });

  it('a lost turn is redelivered and succeeds on a later attempt', async () => {
    const gw = await gateway();
    const h = host(async (r) => {
      if (r.attempt < 3) throw new TurnLostError(`lost ${r.attempt}`);
      return ok;
    });
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await log.wait((l) => l.type === 'turn_done');
    expect(h.runs.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(sends(gw)).toEqual([]);
  });

  it('B-14: a redelivery of a lost turn is a retry; the first delivery is not', async () => {
    const gw = await gateway();
    const h = host(async (r) => {
      if (r.attempt < 2) throw new TurnLostError('lost');
      return ok;
    });
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await log.wait((l) => l.type === 'turn_done');
    expect(h.runs.map((r) => [r.attempt, r.retry])).toEqual([
      [1, false],
      [2, true],
    ]);
  });

  it('B-10: a mail whose turn a stop interrupted runs as a retry in the next process; once read, the record is gone', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'am-started-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const gw = await gateway([summary('m1')]);
    const started = deferred();
    // The first process: the turn starts, then the bridge stops (the turn is interrupted, unread).
    const first = host(
      (r) =>
        new Promise<MailTurnReport>((resolve) => {
          started.resolve();
          r.signal.addEventListener('abort', () =>
            resolve({ ok: false, kind: 'timeout', cause: 'stopped', failureMailSent: false }),
          );
        }),
    );
    const one = runtime(gw, first, { dataDir });
    // start() resolves after its catch-up pass, which runs the mail: stop while it runs.
    const starting = one.rt.start();
    await started.promise;
    await one.rt.stop();
    await starting;
    expect(one.log.events.map((e) => e.type)).toContain('turn_interrupted');
    expect(first.runs.map((r) => r.retry)).toEqual([false]);
    expect(markedRead(gw)).toEqual([]);
    // The next process runs it again (still unread) as a retry, and marks it read.
    const second = host();
    const two = runtime(gw, second, { dataDir });
    await two.rt.start();
    await two.log.wait((l) => l.type === 'turn_done');
    expect(markedRead(gw)).toEqual(['m1']);
    expect(second.runs.map((r) => r.retry)).toEqual([true]);
    expect(readdirSync(join(dataDir, 'turns-started')), 'read: no longer a started turn').toEqual([]);
    await two.rt.stop();
    // A third process that sees the mail (say, marked unread again) runs it fresh.
    const third = host();
    const three = runtime(gw, third, { dataDir });
    await three.rt.start();
    await three.log.wait((l) => l.type === 'turn_done');
    expect(third.runs.map((r) => r.retry)).toEqual([false]);
  });

  it('lost three times: given up with a worker_lost failure mail', async () => {
    const gw = await gateway();
    const h = host(async (r) => {
      throw new TurnLostError(`worker died ${r.attempt}`);
    });
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await log.wait((l) => l.type === 'failure_mail_sent');
    expect(h.runs.map((r) => r.attempt)).toEqual([1, 2, 3]);
    const [fm] = sends(gw);
    expect(fm?.body).toContain('worker died 3');
    expect(fm?.body).toContain(formatText('failure.worker_lost', { attempts: 3 }));
  });

  it('an ordinary error is not redelivered', async () => {
    const gw = await gateway();
    const h = host(async () => {
      throw new Error('bug');
    });
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await log.wait((l) => l.type === 'failure_mail_sent');
    expect(h.runs).toHaveLength(1);
  });
});

describe('BridgeRuntime: stop (B-15) and reconnect (B-18)', () => {
  it('stop aborts running turns with "shutdown", calls the host hook, sends no failure mail', async () => {
    const gw = await gateway();
    const reasons: unknown[] = [];
    const h = host(
      (r) =>
        new Promise<MailTurnReport>((_resolve, reject) => {
          r.signal.addEventListener('abort', () => {
            reasons.push(r.signal.reason);
            reject(new TurnLostError('stopped'));
          });
        }),
    );
    const { rt, log } = runtime(gw, h);
    await rt.start();
    await gw.push(mailFrame(1, newMail('m1')));
    await until(() => h.runs.length === 1, h.changed);
    await rt.stop();
    expect(reasons).toEqual(['shutdown']);
    expect(h.events).toContain('shutdown');
    await log.wait((l) => l.type === 'turn_interrupted');
    expect(sends(gw)).toEqual([]);
    expect(markedRead(gw), 'an interrupted mail stays unread for the next catch-up').toEqual([]);
    expect(h.runs).toHaveLength(1);
  });

  it('H-3: a stop says the agent is offline (POST /agent/offline), once, after it stopped reading', async () => {
    const gw = await gateway();
    gw.on('POST', '/api/v1/agent/offline', () => ({
      json: { status: 'offline', name: 'pi', offline_since: new Date().toISOString() },
    }));
    const { rt } = runtime(gw, host());
    await rt.start();
    await rt.stop();
    await rt.stop();
    const goodbyes = gw.requests.filter((r) => r.path === '/api/v1/agent/offline');
    expect(goodbyes.map((r) => [r.method, r.headers.authorization, r.json])).toEqual([
      ['POST', 'Bearer k1', { reason: 'shutdown' }],
    ]);
    const paths = gw.requests.map((r) => r.path);
    expect(paths.lastIndexOf('/api/v1/agent/heartbeat')).toBeLessThan(paths.indexOf('/api/v1/agent/offline'));
  });

  it('H-3: a Gateway that refuses or lacks the goodbye does not keep the bridge from stopping', async () => {
    const gw = await gateway(); // no route: the fake Gateway answers 404
    const { rt, log } = runtime(gw, host());
    await rt.start();
    await rt.stop();
    await log.wait((l) => l.type === 'stopped');
    expect(gw.requests.filter((r) => r.path === '/api/v1/agent/offline')).toHaveLength(1);
  });

  it('reconnect switches the client and the stream to the new Gateway and key', async () => {
    const gw = await gateway();
    const gw2 = await gateway();
    const h = host();
    const { rt, log } = runtime(gw, h);
    await rt.start();
    rt.reconnect(gw2.url, 'k2');
    expect(rt.client.baseUrl).toBe(gw2.url);
    expect(h.events).toContain(`reconnect ${gw2.url}`);
    await gw2.push(mailFrame(1, newMail('m_new')));
    await log.wait((l) => l.type === 'turn_done' && l.mail_id === 'm_new');
    const ev = gw2.requests.find((r) => r.path === '/api/v1/events');
    expect(ev?.headers.authorization).toBe('Bearer k2');
    expect(ev?.headers['last-event-id'], 'the cursor is dropped for another Gateway').toBeUndefined();
    expect(h.runs[0]?.client.baseUrl).toBe(gw2.url);
  });
});
