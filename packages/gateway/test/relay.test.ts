import { MailResponse, ParticipantsResponse, SendMailResponse } from '@agentmail/protocol';
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

  it('B-10: a relay marks the mail it answers read for the agent; a hand-written reply does not', async () => {
    const { gw, pi, alice, task } = await setup();
    const unread = async (): Promise<string[]> =>
      ((await api(gw, 'GET', '/mail/inbox?status=unread', pi)).body.mails as { id: string }[]).map(
        (m) => m.id,
      );
    expect(await unread()).toEqual([task.mail_id]);
    const to = `alice@.${task.session_alias}`;
    await api(gw, 'POST', '/mail/send', pi, { to, subject: 's', body: 'by hand', reply_to: task.mail_id });
    expect(await unread(), 'a send that is not a relay is not the outcome').toEqual([task.mail_id]);
    const relay = {
      to,
      subject: 'Re: Task',
      body: 'done',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: 'k',
    };
    const relayed = await api(gw, 'POST', '/mail/send', pi, relay);
    expect(relayed.body.status).toBe('sent');
    expect(await unread(), 'the relayed mail is read: a crashed bridge does not run it again').toEqual([]);
    // Only the agent's delivery of the answered mail: the person's copy of the relay stays unread.
    const personUnread = (await api(gw, 'GET', '/me/inbox?status=unread', alice)).body.mails as {
      id: string;
    }[];
    expect(personUnread.map((m) => m.id)).toContain(relayed.body.mail_id);
    expect((await api(gw, 'POST', '/mail/send', pi, relay)).body.status).toBe('duplicate_relay');
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

describe('sender session (from_session_id)', () => {
  /** Alice starts a second session of pi; returns its send answer. */
  async function secondTask(gw: TestGateway, alice: string) {
    const r = SendMailResponse.parse(
      (
        await api(gw, 'POST', '/me/mail/send', alice, {
          to: 'pi@/v.new',
          subject: 'Other',
          body: 'go',
          max_rounds: 5,
        })
      ).body,
    );
    if (r.status !== 'sent') throw new Error('second task not sent');
    return r;
  }
  const roundsUsed = async (gw: TestGateway, id: string) =>
    (
      await gw.app.gateway.db
        .selectFrom('sessions')
        .select('rounds_used')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).rounds_used;
  const mailOf = (gw: TestGateway, id: unknown) =>
    gw.app.gateway.db
      .selectFrom('mails')
      .select(['session_id', 'from_address'])
      .where('id', '=', String(id))
      .executeTakeFirstOrThrow();

  it('the mail is written from the named session: from address, budget, thread, participants', async () => {
    const { gw, pi, oc, task } = await setup();
    // no reply_to: without the field this would be pi's default session
    const sent = await api(gw, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 'help',
      body: 'b',
      from_session_id: task.session_id,
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.rounds_left).toBe(1); // the task session's budget of 2, not the default's 20
    expect(await roundsUsed(gw, task.session_id)).toBe(1);
    const row = await mailOf(gw, sent.body.mail_id);
    expect(row.session_id).toBe(task.session_id);
    expect(row.from_address).toBe(`pi@/w.${task.session_alias}`);
    const seen = MailResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${String(sent.body.mail_id)}`, oc)).body,
    ).mail;
    expect(seen.reply_address).toBe(`pi@/w.${task.session_alias}`);
    const p = ParticipantsResponse.parse(
      (await api(gw, 'GET', `/agent/sessions/${task.session_id}/participants`, pi)).body,
    );
    expect(p.participants.map((x) => x.name).sort()).toEqual(['alice', 'oc', 'pi']);
  });

  it('the named session wins over the session of reply_to; omitted keeps reply_to, else the default', async () => {
    const { gw, pi, alice, task } = await setup();
    const other = await secondTask(gw, alice);
    const fromOther = await api(gw, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
      from_session_id: other.session_id,
    });
    expect(fromOther.status, JSON.stringify(fromOther.body)).toBe(200);
    expect(fromOther.body.rounds_left).toBe(4);
    expect((await mailOf(gw, fromOther.body.mail_id)).from_address).toBe(`pi@/v.${other.session_alias}`);
    expect(await roundsUsed(gw, task.session_id)).toBe(0);
    // omitted + reply_to: the session pi has for the parent (today's behaviour)
    const viaReply = await api(gw, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 's',
      body: 'b',
      reply_to: task.mail_id,
    });
    expect((await mailOf(gw, viaReply.body.mail_id)).session_id).toBe(task.session_id);
    expect(await roundsUsed(gw, task.session_id)).toBe(1);
    // omitted, no reply_to: the default session
    const viaDefault = await api(gw, 'POST', '/mail/send', pi, { to: 'oc', subject: 's', body: 'b' });
    expect((await mailOf(gw, viaDefault.body.mail_id)).from_address).toBe('pi@.');
  });

  it('an unknown session is a 404 naming it; a session of another agent a 403 saying whose; nothing is written', async () => {
    const { gw, pi, alice, task } = await setup();
    const ocTask = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'oc@/o.new', subject: 'Oc work', body: 'x' }))
        .body,
    );
    if (ocTask.status !== 'sent') throw new Error('oc task not sent');
    const count = async () => (await gw.app.gateway.db.selectFrom('mails').select('id').execute()).length;
    const before = await count();

    const missing = await api(gw, 'POST', '/mail/send', pi, {
      to: 'oc',
      subject: 's',
      body: 'b',
      from_session_id: 's_no_such_session',
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
    expect(missing.body.field).toBe('from_session_id');
    expect(String(missing.body.detail)).toContain('"s_no_such_session"');

    const foreign = await api(gw, 'POST', '/mail/send', pi, {
      to: `alice@.${task.session_alias}`,
      subject: 's',
      body: 'b',
      from_session_id: ocTask.session_id,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe('forbidden');
    expect(foreign.body.field).toBe('from_session_id');
    expect(String(foreign.body.detail)).toContain('belongs to agent "oc"');

    const foreignForward = await api(gw, 'POST', `/mail/${task.mail_id}/forward`, pi, {
      to: 'oc',
      from_session_id: ocTask.session_id,
    });
    expect(foreignForward.status).toBe(403);
    expect(String(foreignForward.body.detail)).toContain('belongs to agent "oc"');
    const missingForward = await api(gw, 'POST', `/mail/${task.mail_id}/forward`, pi, {
      to: 'oc',
      from_session_id: 's_no_such_session',
    });
    expect(missingForward.status).toBe(404);
    expect(await count()).toBe(before);
    expect(await roundsUsed(gw, ocTask.session_id)).toBe(0);
  });

  it('forward is written from the named session', async () => {
    const { gw, pi, alice, task } = await setup();
    const other = await secondTask(gw, alice);
    const f = await api(gw, 'POST', `/mail/${task.mail_id}/forward`, pi, {
      to: 'oc',
      comment: 'fyi',
      from_session_id: other.session_id,
    });
    expect(f.status, JSON.stringify(f.body)).toBe(200);
    const row = await mailOf(gw, f.body.mail_id);
    expect(row.session_id).toBe(other.session_id);
    expect(row.from_address).toBe(`pi@/v.${other.session_alias}`);
    expect(f.body.rounds_left).toBe(4);
  });

  it('the hop-limit run is the named session’s', async () => {
    const { gw, pi, alice, task } = await setup({ hopLimit: 2 });
    const other = await secondTask(gw, alice);
    const relay = (k: string, from: string | undefined) =>
      api(gw, 'POST', '/mail/send', pi, {
        to: 'oc',
        subject: 'r',
        body: 'b',
        relay: 'summary',
        relay_key: k,
        ...(from === undefined ? {} : { from_session_id: from }),
      });
    expect((await relay('o1', other.session_id)).status).toBe(200);
    expect((await relay('o2', other.session_id)).status).toBe(200);
    const third = await relay('o3', other.session_id);
    expect(third.status).toBe(409);
    expect(third.body.error).toBe('hop_limit_reached');
    // the task session has no run yet
    expect((await relay('t1', task.session_id)).status).toBe(200);
  });
});
