import {
  InboxResponse,
  MailResponse,
  PermissionDecisionEvent,
  PermissionRequestEvent,
  PermissionRequestResponse,
  PermissionsResponse,
  SendMailResponse,
} from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import { afterEach, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, dataOf, openSse, startGateway, type TestGateway } from './helpers.js';

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
  const bob = await addUser(gw, 'bob');
  return { gw, pi, oc, alice, bob };
}

const ask = (
  sessionId: string,
  key: string,
  kind: 'approval' | 'question' = 'approval',
  options = ['approve', 'always', 'deny'],
) => ({
  question: 'Run `rm -rf build`?',
  options,
  context: 'tool: bash',
  session_id: sessionId,
  relay_key: key,
  kind,
});

describe('permission routing (G-38)', () => {
  it('goes to the session owner; the person sees a question mail and a permission_request event', async () => {
    const { gw, pi, alice } = await setup();
    const me = openSse(gw, '/me/events', alice);
    await me.ready;
    const task = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Task', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    const r = PermissionRequestResponse.parse(
      (await api(gw, 'POST', '/permission/request', pi, ask(task.session_id, 'q1'))).body,
    );
    expect(r.status === 'pending' && r.asked).toBe('alice');
    const ev = await me.next((e) => e.event === 'permission_request');
    expect(PermissionRequestEvent.parse(dataOf(ev)).question).toContain('rm -rf');
    const list = PermissionsResponse.parse(
      (await api(gw, 'GET', '/me/permissions?status=pending', alice)).body,
    );
    expect(list.permissions.length).toBe(1);
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/me/inbox', alice)).body);
    const question = inbox.mails.find((m) => m.is_permission);
    expect(question?.from_name).toBe('pi');
    expect(question?.request, 'the question mail says its request waits').toEqual({
      status: 'pending',
      decision: null,
    });
    // the same relay key again: duplicate_relay, no second request
    const dup = await api(gw, 'POST', '/permission/request', pi, ask(task.session_id, 'q1'));
    expect(dup.body.status).toBe('duplicate_relay');
    // Decided: the question mail says how (a reader shows it decided, not as a request to answer).
    const id = r.status === 'pending' ? r.request_id : '';
    await api(gw, 'POST', `/me/permissions/${id}/decide`, alice, { decision: 'deny' });
    const mail = MailResponse.parse((await api(gw, 'GET', `/me/mail/${question?.id}`, alice)).body).mail;
    expect(mail.request).toEqual({ status: 'decided', decision: 'deny' });
    me.close();
  });

  it('without an owner it goes to the most recent person in the thread', async () => {
    const { gw, pi, oc, bob } = await setup();
    // oc (no owner) opens a session at pi; then bob writes into it
    const s = SendMailResponse.parse(
      (await api(gw, 'POST', '/mail/send', oc, { to: 'pi@/w.new', subject: 'agent task', body: 'x' })).body,
    );
    if (s.status !== 'sent') throw new Error('not sent');
    const none = await api(gw, 'POST', '/permission/request', pi, ask(s.session_id, 'n1'));
    expect(none.status).toBe(409);
    await api(gw, 'POST', '/me/mail/send', bob, {
      to: `pi@/w.${s.session_alias}`,
      subject: 'chiming in',
      body: 'x',
    });
    const r = await api(gw, 'POST', '/permission/request', pi, ask(s.session_id, 'n2'));
    expect(r.body.asked).toBe('bob');
  });

  it('a default session routes to the person who mailed the agent last, not its first writer', async () => {
    const { gw, pi, alice, bob } = await setup();
    const a = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.', subject: 'alice task', body: 'x' })).body,
    );
    const b = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', bob, { to: 'pi@.', subject: 'bob task', body: 'y' })).body,
    );
    if (a.status !== 'sent' || b.status !== 'sent') throw new Error('not sent');
    expect(b.session_id).toBe(a.session_id); // one shared default session
    const r = PermissionRequestResponse.parse(
      (await api(gw, 'POST', '/permission/request', pi, ask(b.session_id, 'def1'))).body,
    );
    expect(r.status === 'pending' && r.asked).toBe('bob');
    const bobs = PermissionsResponse.parse(
      (await api(gw, 'GET', '/me/permissions?status=pending', bob)).body,
    );
    expect(bobs.permissions.map((p) => p.id)).toEqual([r.request_id]);
    const alices = PermissionsResponse.parse(
      (await api(gw, 'GET', '/me/permissions?status=pending', alice)).body,
    );
    expect(alices.permissions).toEqual([]);
    // alice writes again while bob decides: the agent sees it as fresh, bob's copy does not
    const bridge = openSse(gw, '/events', pi);
    const bobEvents = openSse(gw, '/me/events', bob);
    await Promise.all([bridge.ready, bobEvents.ready]);
    await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@.', subject: 'alice again', body: 'z' });
    const d = await api(gw, 'POST', `/me/permissions/${r.request_id}/decide`, bob, { decision: 'approve' });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    const agentEv = PermissionDecisionEvent.parse(
      dataOf(await bridge.next((x) => x.event === 'permission_decision')),
    );
    expect(agentEv.fresh_mails.map((m) => m.subject)).toEqual(['alice again']);
    const bobEv = PermissionDecisionEvent.parse(
      dataOf(await bobEvents.next((x) => x.event === 'permission_decision')),
    );
    expect(bobEv.fresh_mails).toEqual([]);
    bridge.close();
    bobEvents.close();
  });

  it('with no person reachable: 409 with error, detail, suggestion and the real permission_mode', async () => {
    const { gw, pi, oc } = await setup();
    const s = SendMailResponse.parse(
      (await api(gw, 'POST', '/mail/send', oc, { to: 'pi@/w.new', subject: 'lonely', body: 'x' })).body,
    );
    if (s.status !== 'sent') throw new Error('not sent');
    await gw.app.gateway.db
      .updateTable('sessions')
      .set({ permission_mode: 'full' })
      .where('id', '=', s.session_id)
      .execute();
    const r = await api(gw, 'POST', '/permission/request', pi, ask(s.session_id, 'x1'));
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('no_person_reachable');
    expect(r.body.permission_mode).toBe('full');
    expect(typeof r.body.detail).toBe('string');
    expect(typeof r.body.suggestion).toBe('string');
  });

  it('a session of another agent is a 404', async () => {
    const { gw, oc, alice } = await setup();
    const t = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'T', body: 'x' })).body,
    );
    if (t.status !== 'sent') throw new Error('not sent');
    expect((await api(gw, 'POST', '/permission/request', oc, ask(t.session_id, 'o1'))).status).toBe(404);
  });
});

describe('decisions (G-21)', () => {
  it('reach every stream of the asking agent with the note and the mails that arrived meanwhile', async () => {
    const { gw, pi, alice, bob } = await setup();
    const task = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Task', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    const req = PermissionRequestResponse.parse(
      (await api(gw, 'POST', '/permission/request', pi, ask(task.session_id, 'd1'))).body,
    );
    if (req.status !== 'pending') throw new Error('not pending');
    const bridge = openSse(gw, '/events', pi);
    const hook = openSse(gw, '/events', pi); // a short-lived hook process beside the bridge
    await Promise.all([bridge.ready, hook.ready]);
    // mail arriving in the asking session while alice decides; and one elsewhere (not fresh)
    const fresh = SendMailResponse.parse(
      (
        await api(gw, 'POST', '/me/mail/send', bob, {
          to: `pi@/w.${task.session_alias}`,
          subject: 'wait, use the cache',
          body: 'x',
        })
      ).body,
    );
    await api(gw, 'POST', '/me/mail/send', bob, { to: 'pi@/elsewhere.new', subject: 'unrelated', body: 'x' });
    const d = await api(gw, 'POST', `/me/permissions/${req.request_id}/decide`, alice, {
      decision: 'deny',
      note: 'use make clean',
    });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body.decision).toBe('deny');
    for (const s of [bridge, hook]) {
      const e = await s.next((x) => x.event === 'permission_decision');
      const ev = PermissionDecisionEvent.parse(dataOf(e));
      expect(ev.relay_key).toBe('d1');
      expect(ev.decision).toBe('deny');
      expect(ev.note).toBe('use make clean');
      expect(ev.fresh_mails.map((m) => m.subject)).toEqual(['wait, use the cache']);
      expect(ev.fresh_mails[0]?.mail_id).toBe(fresh.mail_id);
    }
    // deciding twice is a 409
    expect(
      (await api(gw, 'POST', `/me/permissions/${req.request_id}/decide`, alice, { decision: 'approve' }))
        .status,
    ).toBe(409);
    // the person who was not asked can not decide
    const req2 = PermissionRequestResponse.parse(
      (await api(gw, 'POST', '/permission/request', pi, ask(task.session_id, 'd2'))).body,
    );
    if (req2.status !== 'pending') throw new Error('not pending');
    expect(
      (await api(gw, 'POST', `/me/permissions/${req2.request_id}/decide`, bob, { decision: 'approve' }))
        .status,
    ).toBe(404);
    const ok = await api(gw, 'POST', `/me/permissions/${req2.request_id}/decide`, alice, {
      decision: 'always',
    });
    expect(ok.body.decision).toBe('approve_always');
    bridge.close();
    hook.close();
  });

  it('questions are answered with labels or free text, never approve/deny words', async () => {
    const { gw, pi, alice } = await setup();
    const task = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Q', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    const q = PermissionRequestResponse.parse(
      (
        await api(
          gw,
          'POST',
          '/permission/request',
          pi,
          ask(task.session_id, 'qq', 'question', ['red', 'blue']),
        )
      ).body,
    );
    if (q.status !== 'pending') throw new Error('not pending');
    expect(
      (await api(gw, 'POST', `/me/permissions/${q.request_id}/decide`, alice, { decision: 'approve' }))
        .status,
    ).toBe(400);
    const s = openSse(gw, '/events', pi);
    await s.ready;
    const r = await api(gw, 'POST', `/me/permissions/${q.request_id}/decide`, alice, { answers: ['blue'] });
    expect(r.body.decision).toBe('answered');
    const ev = PermissionDecisionEvent.parse(dataOf(await s.next((x) => x.event === 'permission_decision')));
    expect(ev.answers).toEqual(['blue']);
    const view = PermissionsResponse.parse((await api(gw, 'GET', '/me/permissions?status=all', alice)).body);
    expect(view.permissions[0]?.answers).toEqual(['blue']);
    s.close();
  });

  it('question mails do not break or count in the relay run and are flagged for catch-up', async () => {
    const { gw, pi, alice } = await setup();
    const task = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Q', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    await api(gw, 'POST', '/permission/request', pi, ask(task.session_id, 'flag'));
    const inbox = InboxResponse.parse((await api(gw, 'GET', '/me/inbox', alice)).body);
    const perm = inbox.mails.filter((m) => m.is_permission);
    expect(perm.length).toBe(1);
    expect(perm[0]?.relay).toBe(false);
  });
});

describe('mail texts of the Gateway come from the text catalogue, in the configured locale', () => {
  async function askAndRead(
    g: TestGateway,
    pi: string,
    alice: string,
    body: ReturnType<typeof ask> & { multi_select?: boolean },
  ) {
    const task = SendMailResponse.parse(
      (await api(g, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Task', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    const r = PermissionRequestResponse.parse(
      (await api(g, 'POST', '/permission/request', pi, { ...body, session_id: task.session_id })).body,
    );
    if (r.status !== 'pending') throw new Error('not pending');
    const mail = MailResponse.parse((await api(g, 'GET', `/me/mail/${r.mail_id}`, alice)).body).mail;
    return { id: r.request_id, mail };
  }

  it('English by default: subject, options, context and how to answer with the request id', async () => {
    const { gw, pi, alice } = await setup();
    const { id, mail } = await askAndRead(gw, pi, alice, ask('', 'en1'));
    expect(mail.subject).toBe('Permission from pi: Run `rm -rf build`?');
    expect(mail.body).toBe(
      [
        'Run `rm -rf build`?',
        '',
        'Answer with one of:',
        '- approve',
        '- always',
        '- deny',
        '',
        'Context:',
        'tool: bash',
        '',
        `(asked by pi; answer with: agentmail approve ${id}, or agentmail deny ${id})`,
      ].join('\n'),
    );
  });

  it('zh-CN: question subject and body in Chinese, several options or free text', async () => {
    const { gw, pi, alice } = await setup({ locale: 'zh-CN' });
    const zh = (key: Parameters<typeof formatText>[0], params = {}) => formatText(key, params, 'zh-CN');
    const several = await askAndRead(gw, pi, alice, {
      ...ask('', 'zh1', 'question', ['Postgres', 'SQLite']),
      multi_select: true,
    });
    expect(several.mail.subject).toBe(
      zh('gateway.permission.subject.question', { agent: 'pi', question: 'Run `rm -rf build`?' }),
    );
    expect(several.mail.subject).toContain('提问');
    expect(several.mail.body).toContain(
      `${zh('gateway.permission.body.options_several')}\n- Postgres\n- SQLite`,
    );
    expect(several.mail.body).toContain(`${zh('gateway.permission.body.context')}\ntool: bash`);
    expect(several.mail.body).toContain(
      zh('gateway.permission.body.how_question', { agent: 'pi', request_id: several.id }),
    );
    expect(several.mail.body).not.toMatch(/Options|Context|asked by/);
    const free = await askAndRead(gw, pi, alice, ask('', 'zh2', 'question', []));
    expect(free.mail.body).toContain(zh('gateway.permission.body.free_text'));
    expect(free.mail.body).toContain('请用你自己的话回答');
  });

  it('zh-CN: the forward subject and quoting header; a forward of a forward keeps one prefix', async () => {
    const { gw, pi, oc, alice } = await setup({ locale: 'zh-CN' });
    const s = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi', subject: 'fwd me', body: 'line1' })).body,
    );
    if (s.status !== 'sent') throw new Error('not sent');
    const f = await api(gw, 'POST', `/mail/${s.mail_id}/forward`, pi, { to: 'oc', comment: 'FYI' });
    expect(f.status, JSON.stringify(f.body)).toBe(200);
    const m = MailResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${String(f.body.mail_id)}`, oc)).body,
    ).mail;
    expect(m.subject).toBe('转发：fwd me');
    expect(m.body).toBe('FYI\n\n---------- 转发的邮件 ----------\n发件人：alice\n主题：fwd me\n\n> line1');
    const again = await api(gw, 'POST', `/mail/${String(f.body.mail_id)}/forward`, oc, { to: 'pi' });
    const m2 = MailResponse.parse(
      (await api(gw, 'GET', `/agent/mail/${String(again.body.mail_id)}`, pi)).body,
    ).mail;
    expect(m2.subject).toBe('转发：fwd me');
  });
});

describe('stale requests: withdrawn by the asking call, expired on a bridge restart', () => {
  async function pending(key: string) {
    const { gw, pi, oc, alice } = await setup();
    const task = SendMailResponse.parse(
      (await api(gw, 'POST', '/me/mail/send', alice, { to: 'pi@/w.new', subject: 'Task', body: 'x' })).body,
    );
    if (task.status !== 'sent') throw new Error('not sent');
    const r = PermissionRequestResponse.parse(
      (await api(gw, 'POST', '/permission/request', pi, ask(task.session_id, key))).body,
    );
    if (r.status !== 'pending') throw new Error('not pending');
    return { gw, pi, oc, alice, id: r.request_id, mailId: r.mail_id };
  }

  it('a withdrawn request leaves the pending list, tells the person live, and deciding it says "no longer waiting"', async () => {
    const { gw, pi, oc, alice, id, mailId } = await pending('w1');
    const me = openSse(gw, '/me/events', alice, '0');
    await me.ready;
    const foreign = await api(gw, 'POST', `/permission/${id}/withdraw`, oc, { reason: 'timeout' });
    expect(foreign.status, 'only the asking agent may withdraw').toBe(404);
    const w = await api(gw, 'POST', `/permission/${id}/withdraw`, pi, { reason: 'aborted' });
    expect(w.body).toEqual({ id, status: 'withdrawn' });
    const again = await api(gw, 'POST', `/permission/${id}/withdraw`, pi, { reason: 'aborted' });
    expect(again.body, 'idempotent').toEqual({ id, status: 'withdrawn' });
    const ev = await me.next((e) => e.event === 'permission_withdrawn');
    expect(dataOf(ev)).toEqual({
      request_id: id,
      session_id: expect.any(String),
      status: 'withdrawn',
      reason: 'aborted',
    });
    const list = PermissionsResponse.parse(
      (await api(gw, 'GET', '/me/permissions?status=pending', alice)).body,
    );
    expect(list.permissions).toEqual([]);
    const all = PermissionsResponse.parse((await api(gw, 'GET', '/me/permissions?status=all', alice)).body);
    expect(all.permissions[0], 'the person can read why it ended').toMatchObject({
      status: 'withdrawn',
      decision: 'aborted',
    });
    const mail = MailResponse.parse((await api(gw, 'GET', `/me/mail/${mailId}`, alice)).body);
    expect(mail.mail.status, 'nothing left to answer: the question mail is read').toBe('read');
    const late = await api(gw, 'POST', `/me/permissions/${id}/decide`, alice, { decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'AM_GW_NO_LONGER_WAITING', status: 'withdrawn' });
    me.close();
  });

  it('a decision that came first wins over a later withdrawal', async () => {
    const { gw, pi, alice, id } = await pending('w2');
    await api(gw, 'POST', `/me/permissions/${id}/decide`, alice, { decision: 'deny', note: 'no' });
    const w = await api(gw, 'POST', `/permission/${id}/withdraw`, pi, { reason: 'timeout' });
    expect(w.body).toEqual({ id, status: 'decided' });
  });

  it("register with expire_pending expires the agent's pending requests; a plain register leaves them", async () => {
    const { gw, pi, alice, id } = await pending('w3');
    const plain = await api(gw, 'POST', '/agent/register', pi, { name: 'pi', platform: 'pi' });
    expect(plain.body.expired_requests).toBeUndefined();
    expect(
      PermissionsResponse.parse((await api(gw, 'GET', '/me/permissions', alice)).body).permissions,
    ).toHaveLength(1);
    const restart = await api(gw, 'POST', '/agent/register', pi, {
      name: 'pi',
      platform: 'pi',
      expire_pending: true,
    });
    expect(restart.body.expired_requests).toBe(1);
    expect(
      PermissionsResponse.parse((await api(gw, 'GET', '/me/permissions', alice)).body).permissions,
    ).toEqual([]);
    const late = await api(gw, 'POST', `/me/permissions/${id}/decide`, alice, { decision: 'approve' });
    expect(late.body).toMatchObject({ code: 'AM_GW_NO_LONGER_WAITING', status: 'expired' });
  });
});
