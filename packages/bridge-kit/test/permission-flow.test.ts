import { createServer } from 'node:net';
import { denialText, formatText, PendingPermissions } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { type FakeGateway, fakeGateway, type Reply } from '@agentmail/shared-policy/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GrantStore } from '../src/grant-store.js';
import { decideGuardedCall, type GuardedCall, type PermissionFlowOptions } from '../src/permission-flow.js';
import { withdrawalsSettled } from '../src/withdraw.js';
import { recordingBus, until } from './support/bridge-fixtures.js';

// The Gateway is a real loopback HTTP server (support/fake-gateway); decisions arrive through a
// real PendingPermissions registry, resolved when the request reaches the server.

let gw: FakeGateway;
beforeAll(async () => {
  gw = await fakeGateway();
});
afterAll(() => gw.close());
beforeEach(async () => {
  // A withdrawal an earlier test left under way (they run in the background) lands first.
  await withdrawalsSettled();
  gw.requests.length = 0;
});

const call: GuardedCall = {
  toolName: 'bash',
  input: { command: 'rm -rf build' },
  toolCallId: 'tc1',
  platformSessionId: 'ps1',
  cwd: '/srv/app',
};

function setup(
  over: Partial<PermissionFlowOptions> = {},
  decision?: { decision: string; note?: string; fresh?: Array<{ subject: string; from_name: string }> },
) {
  const pending = new PendingPermissions();
  const grants = new GrantStore();
  gw.on('POST', '/api/v1/permission/request', (req) => {
    const key = (req.json as { relay_key: string }).relay_key;
    if (decision)
      pending.resolve({
        relay_key: key,
        decision: decision.decision,
        note: decision.note ?? '',
        fresh_mails: (decision.fresh ?? []).map((m, i) => ({ mail_id: `f${i}`, from_human: true, ...m })),
      });
    return { json: { status: 'pending', request_id: 'p1', mail_id: 'mp1', asked: 'alice' } };
  });
  const options: PermissionFlowOptions = {
    platform: 'pi',
    guardedTools: ['bash', 'write', 'edit'],
    agentName: 'pi',
    mode: () => 'workspace',
    sessionId: () => 's1',
    client: () => new GatewayClient({ baseUrl: gw.url, key: 'k1' }),
    grants,
    waitForDecision: (key, signal) => pending.wait(key, signal ? { signal } : {}),
    hasLocalUi: false,
    locale: 'en',
    emit: recordingBus().emitFn,
    ...over,
  };
  return { options, grants };
}

const asked = () => gw.requests.filter((r) => r.path === '/api/v1/permission/request');

describe('decideGuardedCall: modes (P-1, P-2)', () => {
  it('plan refuses a guarded tool with the plan text, without asking', async () => {
    const { options } = setup({ mode: () => 'plan' });
    const o = await decideGuardedCall(call, options);
    expect(o).toEqual({ allow: false, reason: formatText('permission.plan.denied', { tool: 'bash' }) });
    expect(asked()).toEqual([]);
  });

  it('unguarded tools pass in every mode; full passes without asking', async () => {
    const { options } = setup({ mode: () => 'plan' });
    expect(await decideGuardedCall({ ...call, toolName: 'read' }, options)).toEqual({ allow: true });
    expect(await decideGuardedCall(call, { ...options, mode: () => 'full' })).toEqual({ allow: true });
    expect(asked()).toEqual([]);
  });

  it('forceGuarded: a call the platform asked about is asked by mail even with an unguarded name', async () => {
    const { options } = setup({}, { decision: 'approve_once' });
    expect(await decideGuardedCall({ ...call, toolName: 'webfetch', forceGuarded: true }, options)).toEqual({
      allow: true,
    });
    expect(asked()).toHaveLength(1);
  });

  it('an unknown mode ("FULL") falls back to workspace: a person is asked', async () => {
    const { options } = setup({ mode: () => 'FULL' }, { decision: 'deny' });
    const o = await decideGuardedCall(call, options);
    expect(o.allow).toBe(false);
    expect(asked()).toHaveLength(1);
    expect(asked()[0]?.json).toMatchObject({ session_id: 's1', kind: 'approval' });
  });
});

describe('decideGuardedCall: only an explicit approval passes (P-4)', () => {
  it('approve_once passes once and records no grant', async () => {
    const { options, grants } = setup({}, { decision: 'approve_once' });
    expect(await decideGuardedCall(call, options)).toEqual({ allow: true });
    expect(await grants.has('s1', 'bash')).toBe(false);
  });

  it('approve_always passes, says always, and the grant skips the next question', async () => {
    const { options, grants } = setup({}, { decision: 'approve_always' });
    expect(await decideGuardedCall(call, options)).toEqual({ allow: true, always: true });
    expect(await grants.has('s1', 'bash')).toBe(true);
    expect(await decideGuardedCall(call, options)).toEqual({ allow: true });
    expect(asked()).toHaveLength(1);
  });

  it.each(['deny', 'maybe', 'answered', ''])('%j (unrecognised or deny) is a denial', async (word) => {
    const { options } = setup({}, { decision: word });
    const o = await decideGuardedCall(call, options);
    expect(o.allow).toBe(false);
  });
});

describe('decideGuardedCall: failures fail closed (P-5)', () => {
  const failing = (reply: Reply) => {
    const s = setup();
    gw.on('POST', '/api/v1/permission/request', () => reply);
    return s;
  };

  it('409 denies with the server words', async () => {
    const { options } = failing({
      status: 409,
      json: { error: 'no_person', detail: 'nobody can approve this' },
    });
    const o = await decideGuardedCall(call, options);
    expect(o.allow).toBe(false);
    expect((o as { reason: string }).reason).toContain('nobody can approve this');
  });

  it('409 saying the mode is full allows (that mode never asks)', async () => {
    const { options } = failing({ status: 409, json: { error: 'full', permission_mode: 'full' } });
    expect(await decideGuardedCall(call, options)).toEqual({ allow: true });
  });

  it('another 4xx denies: refused, will not succeed on retry', async () => {
    const { options } = failing({ status: 403, json: { error: 'forbidden' } });
    const o = await decideGuardedCall(call, { ...options, hasLocalUi: true });
    expect(o).toEqual({
      allow: false,
      reason: formatText('permission.failure.refused', { status: 403, words: 'forbidden' }),
    });
  });

  it('duplicate_relay denies: already asked', async () => {
    const { options } = failing({ json: { status: 'duplicate_relay', request_id: 'p0' } });
    expect(await decideGuardedCall(call, options)).toEqual({
      allow: false,
      reason: formatText('permission.failure.duplicate'),
    });
  });

  it('5xx yields to the local prompt only when a local UI exists', async () => {
    const { options } = failing({ status: 503, json: { error: 'down' } });
    expect(await decideGuardedCall(call, { ...options, hasLocalUi: true })).toEqual({
      allow: 'local',
      reason: formatText('permission.failure.yield', { cause: 'HTTP 503' }),
    });
    expect(await decideGuardedCall(call, options)).toEqual({
      allow: false,
      reason: formatText('permission.failure.unavailable', { cause: 'HTTP 503' }),
    });
  });

  it('a network failure yields with a local UI, denies without', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const { options } = setup({
      client: () => new GatewayClient({ baseUrl: `http://127.0.0.1:${port}`, key: 'k' }),
    });
    expect((await decideGuardedCall(call, { ...options, hasLocalUi: true })).allow).toBe('local');
    expect((await decideGuardedCall(call, options)).allow).toBe(false);
  });

  it('not an AgentMail session: yield with a local UI, else deny, never a request', async () => {
    const { options } = setup({ sessionId: () => '' });
    expect((await decideGuardedCall(call, { ...options, hasLocalUi: true })).allow).toBe('local');
    expect((await decideGuardedCall(call, options)).allow).toBe(false);
    expect(asked()).toEqual([]);
  });
});

describe('decideGuardedCall: the denial text (P-6)', () => {
  it('carries the note and the subjects of mails that arrived while waiting', async () => {
    const { options } = setup(
      {},
      { decision: 'deny', note: 'use the staging db', fresh: [{ subject: 'wait, stop', from_name: 'ann' }] },
    );
    const o = await decideGuardedCall(call, options);
    expect(o.allow).toBe(false);
    const reason = (o as { reason: string }).reason;
    expect(reason).toContain(formatText('permission.denied.note', { note: 'use the staging db' }));
    expect(reason).toContain('wait, stop');
    expect(reason).toContain(formatText('permission.denied.person'));
  });

  it('a shutdown that cuts the request short is a shutdown denial, not "could not reach the Gateway"', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    gw.on('POST', '/api/v1/permission/request', async () => {
      await held;
      return { json: { status: 'pending', request_id: 'p1', mail_id: 'mp1', asked: 'alice' } };
    });
    const { options } = setup();
    const ac = new AbortController();
    const o = decideGuardedCall(call, options, ac.signal);
    await until(() => gw.requests.some((r) => r.path === '/api/v1/permission/request'), {
      on: (cb) => setImmediate(cb),
    });
    ac.abort('shutdown');
    const out = await o;
    release();
    expect(out).toEqual({ allow: false, reason: denialText({ cause: 'shutdown', locale: 'en' }) });
  });

  it('an aborted wait denies (the turn was stopped)', async () => {
    const log = recordingBus();
    const { options } = setup({ emit: log.emitFn });
    const ac = new AbortController();
    const o = decideGuardedCall(call, options, ac.signal);
    await log.wait((l) => l.type === 'permission_asked');
    ac.abort();
    expect(await o).toEqual({
      allow: false,
      reason: expect.stringContaining(formatText('permission.denied.aborted')),
    });
  });
});

describe('decideGuardedCall: a wait that ends without a decision withdraws the request', () => {
  const withdrawals = () => gw.requests.filter((r) => r.path === '/api/v1/permission/p1/withdraw');

  it("a stopped turn withdraws (reason aborted) and says so in an event; a person's decision withdraws nothing", async () => {
    gw.on('POST', '/api/v1/permission/p1/withdraw', () => ({ json: { id: 'p1', status: 'withdrawn' } }));
    const bus = recordingBus();
    const { options } = setup({ emit: bus.emitFn });
    const stop = new AbortController();
    const outcome = decideGuardedCall(call, options, stop.signal);
    await expect.poll(() => asked().length).toBe(1);
    stop.abort();
    expect((await outcome).allow).toBe(false);
    await withdrawalsSettled();
    expect(withdrawals().map((r) => r.json)).toEqual([{ reason: 'aborted' }]);
    expect(bus.events.filter((e) => e.type === 'permission_withdrawn')).toEqual([
      {
        type: 'permission_withdrawn',
        tool: 'bash',
        request_id: 'p1',
        reason: 'aborted',
        status: 'withdrawn',
      },
    ]);

    gw.requests.length = 0;
    const decided = setup({}, { decision: 'approve_once' });
    expect(await decideGuardedCall(call, decided.options)).toEqual({ allow: true });
    expect(withdrawals()).toEqual([]);
  });

  it('a failed withdrawal is an event, never a throw (the Gateway expires the request on the next start)', async () => {
    gw.on('POST', '/api/v1/permission/p1/withdraw', () => ({ status: 500, json: { error: 'internal' } }));
    const bus = recordingBus();
    const { options } = setup({
      emit: bus.emitFn,
      waitForDecision: () =>
        Promise.resolve({
          decision: 'deny',
          raw: '',
          answers: [],
          note: '',
          freshMails: [],
          source: 'timeout',
        }),
    });
    expect((await decideGuardedCall(call, options)).allow).toBe(false);
    await withdrawalsSettled();
    const event = bus.events.find((e) => e.type === 'permission_withdrawn');
    expect(event).toMatchObject({ reason: 'timeout', error: expect.stringContaining('500') });
  });
});
