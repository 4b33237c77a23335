import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeGateway, fakeGateway } from '@agentmail/shared-policy/testing';
import { afterEach, expect, it } from 'vitest';
import { BRIDGE_LOCK_STALE_MS } from '../src/bridge-lock.js';
import { type BridgeHost, BridgeRuntime } from '../src/bridge-runtime.js';
import { recordingBus } from './support/bridge-fixtures.js';

// SPEC G-22 in BridgeRuntime: with `lockDir`, a second runtime of the same agent and directory is a
// standby (no register, heartbeat, stream or catch-up) until the first stops; stop() hands over.

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function gateway(): Promise<FakeGateway> {
  const gw = await fakeGateway();
  const streams: ServerResponse[] = [];
  cleanup.push(() => gw.close());
  cleanup.push(() => {
    for (const s of streams) s.end();
  });
  gw.on('POST', '/api/v1/agent/register', () => ({
    json: { name: 'pi', platform: 'pi', created: true, heartbeat_interval_ms: 30_000 },
  }));
  gw.on('POST', '/api/v1/agent/heartbeat', () => ({
    json: {
      status: 'ok',
      server_time: new Date().toISOString(),
      allowed_models: [],
      unknown_fields: [],
      heartbeat_interval_ms: 30_000,
    },
  }));
  gw.on('GET', '/api/v1/mail/inbox', () => ({ json: { mails: [], unread_count: 0, has_more: false } }));
  gw.on('GET', '/api/v1/events', () => (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    streams.push(res);
  });
  return gw;
}

const host: BridgeHost = {
  heartbeat: async () => ({ mode_enforcement: 'native' }),
  runMail: async () => ({
    ok: true,
    model: 'p/a',
    platformSessionId: 'ps',
    relay: { sent: false, reason: 't' },
  }),
};

function runtime(gw: FakeGateway, lockDir: string) {
  const log = recordingBus();
  const rt = new BridgeRuntime(
    {
      gatewayUrl: gw.url,
      agentKey: 'k1',
      agentName: 'pi',
      platform: 'pi',
      version: 'test/1',
      concurrency: 1,
      heartbeatMs: 60_000,
      turnTimeoutMs: 10_000,
      stopGraceMs: 1_000,
      firstSseOpenWaitMs: 5_000,
      lockDir,
      lockRetryMs: 50,
    },
    host,
    log.emitFn,
  );
  cleanup.push(() => rt.stop());
  return { rt, log };
}

const registers = (gw: FakeGateway) => gw.requests.filter((r) => r.path === '/api/v1/agent/register').length;

it('G-22: the second runtime waits as a standby (one line, no Gateway calls) and takes over after stop()', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'am-rt-lock-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const gw = await gateway();
  const a = runtime(gw, dir);
  await a.rt.start();
  expect(a.log.events.map((l) => l.type)).toContain('lock_taken');

  const b = runtime(gw, dir);
  const bStarted = b.rt.start();
  await b.log.wait((l) => l.type === 'standby');
  const callsBefore = gw.requests.length;
  expect(registers(gw)).toBe(1);

  const stoppedAt = Date.now();
  await a.rt.stop();
  await bStarted;
  const taken = b.log.events.find((l) => l.type === 'lock_taken' && l.takeover);
  // Handed over by stop() (released), not by staleness (BRIDGE_LOCK_STALE_MS).
  const handoverMs = Date.now() - stoppedAt;
  expect(taken).toMatchObject({ waited_ms: expect.any(Number) });
  expect(handoverMs).toBeLessThan(BRIDGE_LOCK_STALE_MS / 3);
  expect(b.log.events.filter((l) => l.type === 'standby')).toHaveLength(1);
  // Nothing from the standby before the handover: the next calls are a's goodbye (H-3, sent before
  // it releases the lock), then b's register etc.
  expect(gw.requests.slice(callsBefore, callsBefore + 2).map((r) => r.path)).toEqual([
    '/api/v1/agent/offline',
    '/api/v1/agent/register',
  ]);
  expect(registers(gw)).toBe(2);
});

it('stop() of a standby ends its wait: start() resolves without touching the Gateway', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'am-rt-lock-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const gw = await gateway();
  const a = runtime(gw, dir);
  await a.rt.start();
  const b = runtime(gw, dir);
  const bStarted = b.rt.start();
  await b.log.wait((l) => l.type === 'standby');
  await b.rt.stop();
  await bStarted;
  expect(registers(gw)).toBe(1);
  // A standby is not the agent's bridge: its stop must not mark the agent offline (H-3).
  expect(gw.requests.filter((r) => r.path === '/api/v1/agent/offline')).toEqual([]);
});
