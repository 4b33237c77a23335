import { SendMailResponse } from '@agentmail/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function setup(options: Parameters<typeof startGateway>[0] = {}) {
  gw = await startGateway(options);
  const pi = await addAgent(gw, 'pi');
  const oc = await addAgent(gw, 'oc');
  const alice = await addUser(gw, 'alice');
  const task = SendMailResponse.parse(
    (
      await api(gw, 'POST', '/me/mail/send', alice, {
        to: 'pi@/w.new',
        subject: 'Task',
        body: 'go',
        max_rounds: 2,
      })
    ).body,
  );
  if (task.status !== 'sent') throw new Error('task not sent');
  return { gw, pi, oc, alice, task };
}

describe('budgets and free relays (G-31)', () => {
  it('a summary relay to a person is free; other sends spend rounds; at zero a 409 and the relay key is released', async () => {
    const { gw, pi, alice, task } = await setup();
    const to = `alice@.${task.session_alias}`;
    // free: relay summary to a person, any number of times (distinct keys)
    for (const k of ['k1', 'k2', 'k3']) {
      const r = await api(gw, 'POST', '/mail/send', pi, {
        to,
        subject: 's',
        body: 'b',
        reply_to: task.mail_id,
        relay: 'summary',
        relay_key: k,
      });
      expect(r.status).toBe(200);
      expect(r.body.rounds_left).toBeNull();
    }
    // hand-written sends spend the budget of 2
    const one = await api(gw, 'POST', '/mail/send', pi, {
      to,
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
    });
    expect(one.body.rounds_left).toBe(1);
    const two = await api(gw, 'POST', '/mail/send', pi, {
      to,
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
    });
    expect(two.body.rounds_left).toBe(0);
    // an agent→agent relay is not free: refused, and its key not kept
    const refused = await api(gw, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: 'relay-x',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('budget_exhausted');
    const mails = await gw.app.gateway.db
      .selectFrom('mails')
      .select('id')
      .where('relay_key', '=', 'relay-x')
      .execute();
    expect(mails).toEqual([]);
    // a person's mail refills the budget; the same relay key now succeeds (it was released)
    await api(gw, 'POST', '/me/mail/send', alice, {
      to: 'pi',
      subject: 'more',
      body: 'x',
      reply_to: String(two.body.mail_id),
    });
    const retry = await api(gw, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: 'relay-x',
    });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.status).toBe('sent');
  });
});

describe('relay idempotency (G-32)', () => {
  it('the same relay key twice: 200 duplicate_relay and no new mail', async () => {
    const { gw, pi, task } = await setup();
    const body = {
      to: `alice@.${task.session_alias}`,
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: 'same',
    };
    const a = await api(gw, 'POST', '/mail/send', pi, body);
    const b = await api(gw, 'POST', '/mail/send', pi, body);
    expect(a.body.status).toBe('sent');
    expect(b.status).toBe(200);
    expect(b.body).toEqual({ status: 'duplicate_relay', mail_id: a.body.mail_id });
    const n = await gw.app.gateway.db
      .selectFrom('mails')
      .select('id')
      .where('relay_key', '=', 'same')
      .execute();
    expect(n.length).toBe(1);
  });

  it('concurrent sends with the same relay key create exactly one mail', async () => {
    const { gw, pi, task } = await setup();
    const body = {
      to: `alice@.${task.session_alias}`,
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: 'race',
    };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api(gw, 'POST', '/mail/send', pi, body)),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.status === 'sent').length).toBe(1);
    expect(new Set(results.map((r) => r.body.mail_id)).size).toBe(1);
    const n = await gw.app.gateway.db
      .selectFrom('mails')
      .select('id')
      .where('relay_key', '=', 'race')
      .execute();
    expect(n.length).toBe(1);
  });

  it('keys longer than 160 bytes are refused with a hint to clamp', async () => {
    const { gw, pi, task } = await setup();
    const r = await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: 'é'.repeat(81),
    });
    expect(r.status).toBe(400);
    expect(String(r.body.suggestion)).toContain('clampRelayKey');
  });
});

describe('hop limit (G-33)', () => {
  it('refuses the relay at the limit; a hand-written mail breaks the run; relays to people pass', async () => {
    const { gw, pi, alice, task } = await setup({ hopLimit: 3, defaultMaxRounds: 100 });
    await api(gw, 'POST', '/me/mail/send', alice, {
      to: 'pi',
      subject: 'budget',
      body: 'x',
      reply_to: task.mail_id,
      max_rounds: 100,
    });
    const relay = (k: string, to = 'oc') =>
      api(gw, 'POST', '/mail/send', pi, {
        to,
        subject: 'r',
        body: 'b',
        reply_to: task.mail_id,
        relay: 'summary',
        relay_key: k,
      });
    // raise the session budget so only the hop limit matters
    await gw.app.gateway.db
      .updateTable('sessions')
      .set({ max_rounds: 100 })
      .where('id', '=', task.session_id)
      .execute();
    expect((await relay('h1')).status).toBe(200);
    expect((await relay('h2')).status).toBe(200);
    expect((await relay('h3')).status).toBe(200);
    const fourth = await relay('h4');
    expect(fourth.status).toBe(409);
    expect(fourth.body.error).toBe('hop_limit_reached');
    // a relay to the person is never refused by the hop limit
    expect((await relay('h4p', `alice@.${task.session_alias}`)).status).toBe(200);
    // a hand-written send breaks the run
    expect(
      (
        await api(gw, 'POST', '/mail/send', pi, {
          to: 'oc',
          subject: 'hand',
          body: 'b',
          reply_to: task.mail_id,
        })
      ).status,
    ).toBe(200);
    expect((await relay('h5')).status).toBe(200);
  });
});

describe('new-session rate limit (G-34)', () => {
  it('limits new sessions per agent per hour, then lets them through an hour later', async () => {
    let now = Date.now();
    const { gw, alice } = await setup({ newSessionsPerHour: 3, clock: () => now });
    // setup created pi's task session: 2 left
    expect(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/a.new', subject: 's', body: 'b' })).status,
    ).toBe(200);
    expect(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/b.new', subject: 's', body: 'b' })).status,
    ).toBe(200);
    const limited = await api(gw, 'POST', '/me/mail/send', alice, {
      to: 'pi@/c.new',
      subject: 's',
      body: 'b',
    });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    // another agent is not affected
    expect(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'oc@/c.new', subject: 's', body: 'b' })).status,
    ).toBe(200);
    now += 61 * 60 * 1000;
    expect(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/c.new', subject: 's', body: 'b' })).status,
    ).toBe(200);
  });
});
