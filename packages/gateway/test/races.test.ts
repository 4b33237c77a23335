/**
 * Races of several Gateways on one PostgreSQL store, SPEC G-42 (the gateway-postgres project only:
 * SQLite has one Gateway per data directory). Each test runs the racing operation on separate
 * stores (separate pools, as separate instances have) at once, and fails on check-then-write code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermissionRequestResponse, SendMailResponse } from '@agentmail/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminIfMissing, type GatewayDb, openDatabase } from '../src/index.js';
import { testDatabaseFor } from './helpers/postgres.js';
import {
  addAgent,
  addUser,
  api,
  dataOf,
  openSse,
  startGateways,
  startPair,
  type TestGateway,
} from './helpers.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `n` stores over one new database, as `n` Gateways on it would hold. */
async function instances(n: number): Promise<GatewayDb[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agentmail-race-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseFor(dir);
  if (databaseUrl === undefined) throw new Error('races.test.ts runs in the gateway-postgres project only');
  const stores: GatewayDb[] = [];
  for (let i = 0; i < n; i++) stores.push(await openDatabase(dir, { databaseUrl }));
  cleanups.push(async () => {
    await Promise.all(stores.map((db) => db.destroy()));
  });
  return stores;
}

/** The statuses of concurrent calls, sorted (`[200, 409, 409]`). */
async function statuses(calls: Array<Promise<{ status: number }>>): Promise<number[]> {
  return (await Promise.all(calls)).map((r) => r.status).sort((a, b) => a - b);
}

describe('several Gateways on one PostgreSQL store', () => {
  it('starting together, they create one admin (a conditional insert, not check-then-insert)', async () => {
    const stores = await instances(4);
    const results = await Promise.allSettled(stores.map((db) => createAdminIfMissing(db)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const tokens = results.flatMap((r) =>
      r.status === 'fulfilled' && r.value.adminToken ? [r.value.adminToken] : [],
    );
    expect(tokens).toHaveLength(1);
    const [db] = stores;
    expect((await db?.selectFrom('users').select('name').execute())?.map((u) => u.name)).toEqual(['admin']);
    expect(await db?.selectFrom('user_tokens').select('id').execute()).toHaveLength(1);
  });

  it('approve and deny of one request on two Gateways: exactly one decision is stored and reaches the agent', async () => {
    const { a, b, pi, alice } = await startPair();
    const stream = openSse(a, '/events', pi);
    await stream.ready;
    const task = SendMailResponse.parse(
      (await api(a, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Task', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    const rounds = 6;
    for (let i = 0; i < rounds; i++) {
      const r = PermissionRequestResponse.parse(
        (
          await api(a, 'POST', '/permission/request', pi, {
            question: 'Run `make`?',
            options: ['approve', 'always', 'deny'],
            context: 'tool: bash',
            session_id: task.session_id,
            relay_key: `race-${i}`,
            kind: 'approval',
          })
        ).body,
      );
      if (r.status !== 'pending') throw new Error('not pending');
      const decide = (gw: TestGateway, decision: string) =>
        api(gw, 'POST', `/me/permissions/${r.request_id}/decide`, alice, { decision });
      const got = await statuses([
        decide(a, 'approve'),
        decide(b, 'deny'),
        decide(a, 'deny'),
        decide(b, 'approve'),
      ]);
      expect(got, `round ${i}: one decision wins, the others are told it was decided`).toEqual([
        200, 409, 409, 409,
      ]);
    }
    // One decision per request reached the agent: the count settles at `rounds`, never more.
    const decisions = await stream.waitFor(rounds, (e) => e.event === 'permission_decision');
    await api(a, 'GET', '/inbox', pi); // a round trip after the last event
    const ids = stream.events
      .filter((e) => e.event === 'permission_decision')
      .map((e) => (dataOf(e) as { request_id: string }).request_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(decisions).toHaveLength(rounds);
    stream.close();
  });

  /** Two Gateways with pi, oc and alice, and a task mail from alice to pi in a new session. */
  async function twoWithTask(options: Parameters<typeof startGateways>[1] = {}) {
    const [a, b] = await startGateways(2, options);
    if (!a || !b) throw new Error('two gateways');
    const pi = await addAgent(a, 'pi');
    await addAgent(a, 'oc', 'opencode');
    const alice = await addUser(a, 'alice');
    const task = SendMailResponse.parse(
      (await api(a, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Task', body: 'go' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    // One hand-written mail from the task's session to oc first (it spends a round): oc's default
    // session exists before the race, so the race is on the budget or the hop limit alone.
    const warm = await api(a, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 'hello',
      body: 'b',
      from_session_id: task.session_id,
    });
    expect(warm.status).toBe(200);
    return { a, b, pi, alice, task };
  }

  it('sends of one session on two Gateways never overspend its round budget (a guarded counter)', async () => {
    const { a, b, pi, task } = await twoWithTask({ defaultMaxRounds: 4 });
    const send = (gw: TestGateway, i: number) =>
      api(gw, 'POST', '/mail/send', pi, {
        to: 'oc',
        subject: `s${i}`,
        body: 'b',
        from_session_id: task.session_id,
      });
    const got = await statuses(Array.from({ length: 10 }, (_, i) => send(i % 2 ? a : b, i)));
    expect(got).toEqual([200, 200, 200, 409, 409, 409, 409, 409, 409, 409]);
    const row = await a.app.gateway.db
      .selectFrom('sessions')
      .select(['rounds_used', 'max_rounds'])
      .where('id', '=', task.session_id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ rounds_used: 4, max_rounds: 4 });
  });

  it('relays of one session on two Gateways stop at its hop limit', async () => {
    const { a, b, pi, task } = await twoWithTask({ hopLimit: 2, defaultMaxRounds: 100 });
    const relay = (gw: TestGateway, i: number) =>
      api(gw, 'POST', '/mail/send', pi, {
        to: 'oc',
        subject: `r${i}`,
        body: 'b',
        from_session_id: task.session_id,
        relay: 'summary',
        relay_key: `hop-${i}`,
      });
    const got = await statuses(Array.from({ length: 8 }, (_, i) => relay(i % 2 ? a : b, i)));
    expect(got).toEqual([200, 200, 409, 409, 409, 409, 409, 409]);
  });

  it('new sessions of one agent on two Gateways stop at the hourly limit', async () => {
    const { a, b, alice } = await startPair({ newSessionsPerHour: 3 });
    const got = await statuses(
      Array.from({ length: 8 }, (_, i) =>
        api(i % 2 ? a : b, 'POST', '/me/mail/send', alice, { to: `pi@/w${i}.new`, subject: 'x', body: 'x' }),
      ),
    );
    expect(got).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
  });

  it('first mails to one workspace on two Gateways all arrive, in one default session', async () => {
    const { a, b, alice } = await startPair();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api(i % 2 ? a : b, 'POST', '/me/mail/send', alice, {
          to: 'pi@/srv/app',
          subject: `m${i}`,
          body: 'x',
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const sessions = new Set(
      results.map((r) => SendMailResponse.parse(r.body)).map((r) => r.status === 'sent' && r.session_id),
    );
    expect(sessions.size).toBe(1);
  });

  it('new sessions with one subject on two Gateways get distinct aliases', async () => {
    const { a, b, alice } = await startPair();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api(i % 2 ? a : b, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Fix it', body: 'x' }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const aliases = results
      .map((r) => SendMailResponse.parse(r.body))
      .map((r) => r.status === 'sent' && r.session_alias);
    expect(new Set(aliases).size).toBe(8);
  });

  it('one name claimed at once as a person and as an agent on two Gateways: exactly one kind gets it', async () => {
    const [a, b] = await startGateways(2);
    if (!a || !b) throw new Error('two gateways');
    for (let i = 0; i < 5; i++) {
      const name = `n${i}`;
      const got = await Promise.all([
        api(a, 'POST', '/admin/users', a.adminToken, { name }),
        api(b, 'POST', '/admin/agent-keys', b.adminToken, { agent_name: name }),
        api(b, 'POST', '/admin/users', b.adminToken, { name }),
        api(a, 'POST', '/admin/agent-keys', a.adminToken, { agent_name: name }),
      ]);
      const users = got.filter((r, k) => k % 2 === 0 && r.status === 200).length;
      const keys = got.filter((r, k) => k % 2 === 1 && r.status === 200).length;
      expect(got.map((r) => r.status).every((st) => st === 200 || st === 409)).toBe(true);
      // A person once, or an agent (that may hold two keys): never both.
      expect(users === 1 ? keys : users, `${name}: users ${users}, agent keys ${keys}`).toBe(0);
    }
  });

  it("two admins saving a platform's models at once on two Gateways: one whole selection wins, no error", async () => {
    const [a, b] = await startGateways(2);
    if (!a || !b) throw new Error('two gateways');
    const put = (gw: TestGateway, models: string[]) =>
      api(gw, 'PUT', '/admin/platforms/pi/models', gw.adminToken, { models });
    const one = ['p/a', 'p/b', 'p/c'];
    const two = ['q/x', 'q/y'];
    for (let i = 0; i < 4; i++) {
      const got = await Promise.all([put(a, one), put(b, two), put(a, two), put(b, one)]);
      expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const now = await a.app.gateway.db
        .selectFrom('allowed_models')
        .select('model_key')
        .where('platform', '=', 'pi')
        .orderBy('position')
        .execute();
      expect([one, two]).toContainEqual(now.map((r) => r.model_key));
    }
  });

  it('one Idempotency-Key (G-41) sent at once to two Gateways: one mail, both answers the same', async () => {
    const { a, b, alice } = await startPair();
    for (let i = 0; i < 5; i++) {
      const body = { to: 'pi@/w.new', subject: `t${i}`, body: 'go' };
      const answers = await Promise.all(
        [a, b, a, b].map((gw) =>
          api(gw, 'POST', '/me/mail/send', alice, body, { 'idempotency-key': `same-${i}` }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const ids = new Set(answers.map((r) => (r.body as { mail_id: string }).mail_id));
      expect(ids.size, `round ${i}: one mail`).toBe(1);
    }
    expect(await a.app.gateway.db.selectFrom('mails').select('id').execute()).toHaveLength(5);
  });
});
