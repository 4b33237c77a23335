import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Question } from '@agentmail/shared-policy';
import { ERROR_CODES, formatText, renderInbox } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import {
  attachment,
  type FakeGateway,
  fakeGateway,
  fullMail,
  summary,
} from '@agentmail/shared-policy/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ASK_PERSON_TOOL,
  MAIL_TOOL_NAMES,
  type MailTool,
  type MailToolContext,
  mailTools,
  runMailTool,
} from '../src/mail-tools.js';
import type { QuestionOutcome } from '../src/question-flow.js';

const A = '/api/v1';
const SENT = {
  status: 'sent',
  mail_id: 'm9',
  session_id: 's1',
  session_alias: 'pi-fix',
  address: 'alice@.pi-fix',
  rounds_left: null,
};

let gw: FakeGateway;
let other: FakeGateway | undefined;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'am-tools-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await gw?.close();
  await other?.close();
  other = undefined;
});

function tool(name: string, tools: readonly MailTool[] = mailTools()): MailTool {
  const t = tools.find((x) => x.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t;
}

async function setup(over: Partial<MailToolContext> = {}): Promise<MailToolContext & { sends: string[] }> {
  gw = await fakeGateway();
  const sends: string[] = [];
  return {
    client: new GatewayClient({ baseUrl: gw.url, key: 'key-1', allowedRoots: [dir] }),
    mail: {
      mail_id: 'm1',
      session_id: 's1',
      reply_address: 'alice@.pi-fix',
      self_address: 'pi@/srv/app.pi-fix',
    },
    recordExplicitSend: (t) => {
      sends.push(t);
    },
    sends,
    ...over,
  };
}

const markRequests = () => gw.requests.filter((r) => r.path === `${A}/mail/read`);

describe('read_inbox (SPEC B-17)', () => {
  it('marks read exactly the ids it listed', async () => {
    const ctx = await setup();
    gw.on('GET', `${A}/mail/inbox`, () => ({
      json: { mails: [summary('m1'), summary('m2')], unread_count: 7, has_more: true },
    }));
    gw.on('POST', `${A}/mail/read`, () => ({ json: { updated: 2 } }));
    const res = await tool('read_inbox').run({ limit: 2 }, ctx);
    expect(res.isError).toBeUndefined();
    expect(gw.requests[0]?.query).toEqual({ status: 'unread', limit: '2' });
    expect(markRequests().map((r) => r.json)).toEqual([{ ids: ['m1', 'm2'] }]);
    expect(res.text).toContain('Marked as read: m1, m2.');
    expect(res.text).toContain(formatText('tools.inbox.more'));
  });

  it('never marks with status=all', async () => {
    const ctx = await setup();
    gw.on('GET', `${A}/mail/inbox`, () => ({
      json: { mails: [summary('m1'), summary('m2', { status: 'read' })], unread_count: 1, has_more: false },
    }));
    gw.on('POST', `${A}/mail/read`, () => ({ json: { updated: 1 } }));
    const res = await tool('read_inbox').run({ status: 'all' }, ctx);
    expect(gw.requests[0]?.query.status).toBe('all');
    expect(markRequests()).toEqual([]);
    expect(res.text).not.toContain('Marked as read');
  });

  it('an empty page marks nothing; a failed mark still shows the inbox', async () => {
    const ctx = await setup();
    gw.on('GET', `${A}/mail/inbox`, () => ({ json: { mails: [], unread_count: 0, has_more: false } }));
    const empty = await tool('read_inbox').run({}, ctx);
    expect(empty.text).toBe('No mails (unread).');
    expect(markRequests()).toEqual([]);

    gw.on('GET', `${A}/mail/inbox`, () => ({
      json: { mails: [summary('m3')], unread_count: 1, has_more: false },
    }));
    gw.on('POST', `${A}/mail/read`, () => ({ status: 503, json: { error: 'internal' } }));
    const res = await tool('read_inbox').run({}, ctx);
    expect(res.isError).toBeUndefined();
    expect(res.text).toContain('[m3]');
    expect(res.text).toContain('stay unread');
  });

  it('renders attachment ids, cc, the sender’s and own addresses, person/agent', async () => {
    const ctx = await setup();
    const m = summary('m1', { attachments: [attachment('att_7', 'plan.md')], in_reply_to: 'm0' });
    gw.on('GET', `${A}/mail/inbox`, () => ({ json: { mails: [m], unread_count: 1, has_more: false } }));
    gw.on('POST', `${A}/mail/read`, () => ({ json: { updated: 1 } }));
    const { text } = await tool('read_inbox').run({}, ctx);
    expect(text).toContain('att_7 (plan.md, 12 bytes)');
    expect(text).toContain('From: alice (person) <alice@.pi-fix>');
    expect(text).toContain('To: pi (agent) <pi@/srv/app.pi-fix>');
    expect(text).toContain('Cc: bob (agent) <bob@/srv/bob.>');
    expect(text).toContain('Reply to: alice@.pi-fix');
    expect(text).toContain('Your address: pi@/srv/app.pi-fix');
    expect(text).toContain('In reply to: m0');
    expect(text).toContain('> snippet of m1');

    const zh = renderInbox(
      { mails: [m], unread_count: 1, has_more: false },
      { status: 'unread', locale: 'zh-CN' },
    );
    expect(zh).toContain('发件人: alice （人） <alice@.pi-fix>');
    expect(zh).toContain('抄送: bob （智能体） <bob@/srv/bob.>');
    expect(zh).toContain('att_7');
  });
});

describe('send_mail and forward_mail (SPEC B-16, B-10)', () => {
  it.each([
    ['a JSON-array string', '["att_1", "att_2"]'],
    ['a comma-separated string', 'att_1, att_2'],
    ['an array with null and a duplicate', [null, 'att_1', '', 'att_2', 'att_1']],
  ])('attachment_ids as %s are normalised before sending', async (_label, ids) => {
    const ctx = await setup();
    gw.on('POST', `${A}/mail/send`, () => ({ json: SENT }));
    const res = await tool('send_mail').run(
      { to: 'alice@.pi-fix', subject: 'report', body: 'done', attachment_ids: ids },
      ctx,
    );
    expect(res.isError).toBeUndefined();
    expect(gw.requests[0]?.json).toEqual({
      to: 'alice@.pi-fix',
      subject: 'report',
      body: 'done',
      attachment_ids: ['att_1', 'att_2'],
      from_session_id: 's1',
    });
    expect(res.text).toBe('Sent mail m9 to alice@.pi-fix (session pi-fix, s1). Rounds left: free.');
  });

  it('no attachment ids left → the field is left out; cc as a string becomes a list; sends are recorded', async () => {
    const ctx = await setup();
    gw.on('POST', `${A}/mail/send`, () => ({ json: { ...SENT, rounds_left: 3 } }));
    const res = await tool('send_mail').run(
      { to: 'bob@/srv/bob.', body: 'hi', cc: 'carol, dave@/srv/d.', attachment_ids: '[]', reply_to: null },
      ctx,
    );
    expect(gw.requests[0]?.json).toEqual({
      to: 'bob@/srv/bob.',
      subject: '',
      body: 'hi',
      cc: ['carol', 'dave@/srv/d.'],
      from_session_id: 's1',
    });
    expect(ctx.sends).toEqual(['bob@/srv/bob.', 'carol', 'dave@/srv/d.']);
    expect(res.text).toContain('Rounds left: 3.');
  });

  it('a send to a default session names it "the default session", never an empty name (issue 20, 12b)', async () => {
    const ctx = await setup();
    const toDefault = { ...SENT, session_alias: '', address: 'bob@/srv/bob.' };
    gw.on('POST', `${A}/mail/send`, () => ({ json: toDefault }));
    gw.on('POST', `${A}/mail/:id/forward`, () => ({ json: toDefault }));
    const sent = await tool('send_mail').run({ to: 'bob@/srv/bob.', subject: 's', body: 'b' }, ctx);
    expect(sent.text).toBe('Sent mail m9 to bob@/srv/bob. (the default session, s1). Rounds left: free.');
    const forwarded = await tool('forward_mail').run({ mail_id: 'm1', to: 'bob@/srv/bob.' }, ctx);
    expect(forwarded.text).toBe('Forwarded mail m1 as mail m9 to bob@/srv/bob. (the default session).');
    const zh = await mailTools('zh-CN')
      .find((t) => t.name === 'send_mail')
      ?.run({ to: 'bob@/srv/bob.', subject: 's', body: 'b' }, { ...ctx, locale: 'zh-CN' });
    expect(zh?.text).toContain('（默认会话，s1）');
  });

  it('invalid arguments: an error result naming the field and the fix, no request', async () => {
    const ctx = await setup();
    const missing = await tool('send_mail').run({ subject: 's', body: 'b' }, ctx);
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('field "to": required, expected string');
    expect(missing.text).toContain('call send_mail again');
    expect((missing.details as { code: string }).code).toBe(ERROR_CODES.TOOL_ARGS_INVALID);
    const unknown = await tool('send_mail').run({ to: 'a', body: 'b', bcc: 'x' }, ctx);
    expect(unknown.text).toContain('unknown field "bcc"');
    expect(unknown.text).toContain('Accepted fields: to, subject, body, cc');
    const tooMany = await tool('send_mail').run(
      { to: 'a', body: 'b', attachment_ids: Array.from({ length: 21 }, (_, i) => `a${i}`) },
      ctx,
    );
    expect(tooMany.text).toContain('field "attachment_ids": must be at most 20 items');
    const badType = await tool('read_inbox').run({ limit: 'five' }, ctx);
    expect(badType.text).toContain('field "limit": expected integer, got string');
    expect(gw.requests).toEqual([]);
    expect(ctx.sends).toEqual([]);
  });

  it('arguments given as a JSON string are accepted', async () => {
    const ctx = await setup();
    gw.on('POST', `${A}/mail/send`, () => ({ json: SENT }));
    const res = await tool('send_mail').run(JSON.stringify({ to: 'alice@.pi-fix', body: 'x' }), ctx);
    expect(res.isError).toBeUndefined();
  });

  it('Gateway errors become error results saying whether a retry helps (SPEC G-13)', async () => {
    const ctx = await setup();
    gw.on('POST', `${A}/mail/send`, () => ({
      status: 404,
      json: { error: 'not_found', detail: 'no session alias "pi-x"', suggestion: 'use .new' },
    }));
    const permanent = await tool('send_mail').run({ to: 'pi@/srv.pi-x', body: 'b' }, ctx);
    expect(permanent.isError).toBe(true);
    expect(permanent.text).toContain('no session alias "pi-x"');
    expect(permanent.text).toContain('will not help');
    expect(permanent.details).toMatchObject({
      code: ERROR_CODES.GATEWAY_HTTP,
      status: 404,
      body: { error: 'not_found' },
    });
    expect(ctx.sends).toEqual([]); // nothing was sent: nothing recorded

    gw.on('POST', `${A}/mail/send`, () => ({ status: 503, json: { error: 'internal' } }));
    const transient = await tool('send_mail').run({ to: 'pi', body: 'b' }, ctx);
    expect(transient.text).toContain('try again later');
  });

  it('forward_mail forwards and records the target', async () => {
    const ctx = await setup();
    gw.on('POST', `${A}/mail/:id/forward`, () => ({ json: SENT }));
    const res = await tool('forward_mail').run({ mail_id: 'm1', to: 'alice@.pi-fix', comment: 'fyi' }, ctx);
    expect(gw.requests[0]?.path).toBe(`${A}/mail/m1/forward`);
    expect(gw.requests[0]?.json).toEqual({ to: 'alice@.pi-fix', comment: 'fyi', from_session_id: 's1' });
    expect(ctx.sends).toEqual(['alice@.pi-fix']);
    expect(res.text).toContain('Forwarded mail m1 as mail m9');
  });
});

describe('sender session of send_mail and forward_mail', () => {
  it("both write from the turn's current session; without one the field is left out", async () => {
    const ctx = await setup({ mail: { mail_id: 'm1', session_id: 's_turn' } });
    gw.on('POST', `${A}/mail/send`, () => ({ json: SENT }));
    gw.on('POST', `${A}/mail/:id/forward`, () => ({ json: SENT }));
    await tool('send_mail').run({ to: 'oc', body: 'b', reply_to: 'm0' }, ctx);
    await tool('forward_mail').run({ mail_id: 'm1', to: 'oc' }, ctx);
    expect(gw.requests.map((r) => (r.json as { from_session_id?: string }).from_session_id)).toEqual([
      's_turn',
      's_turn',
    ]);

    const { mail: _none, ...noTurn } = ctx;
    await tool('send_mail').run({ to: 'oc', body: 'b' }, noTurn);
    await tool('forward_mail').run({ mail_id: 'm1', to: 'oc' }, { ...noTurn, mail: { mail_id: 'm1' } });
    expect(gw.requests.slice(2).map((r) => r.json)).toEqual([
      { to: 'oc', subject: '', body: 'b' },
      { to: 'oc' },
    ]);
  });
});

describe('connect_to_server (SPEC B-18)', () => {
  it('a failed attempt leaves the old configuration; the switch hook is not called', async () => {
    const switched: unknown[] = [];
    const ctx = await setup({
      reconnect: (c) => void switched.push(c),
      identity: { name: 'pi', platform: 'pi' },
    });
    other = await fakeGateway();
    other.on('POST', `${A}/agent/register`, () => ({
      status: 403,
      json: { error: 'forbidden', detail: 'key bound to "bob"' },
    }));
    const oldClient = ctx.client;
    const res = await tool('connect_to_server').run({ url: other.url, key: 'wrong' }, ctx);
    expect(res.isError).toBe(true);
    expect(res.text).toContain(`Could not connect to ${other.url}`);
    expect(res.text).toContain('key bound to "bob"');
    expect(res.text).toContain(`Still connected to ${gw.url}`);
    expect(switched).toEqual([]);
    expect(ctx.client).toBe(oldClient);
    expect(ctx.client.baseUrl).toBe(gw.url);
    expect(other.requests[0]?.headers.authorization).toBe('Bearer wrong');

    const unreachable = await tool('connect_to_server').run({ url: 'http://127.0.0.1:1' }, ctx);
    expect(unreachable.isError).toBe(true);
    expect(unreachable.details).toMatchObject({ code: ERROR_CODES.GATEWAY_NETWORK });
    expect(unreachable.text).toContain(`Still connected to ${gw.url}`);
    expect(switched).toEqual([]);
  });

  it('tries the new Gateway first (register with the identity), then switches', async () => {
    const order: string[] = [];
    const switched: { url: string; key: string; client: GatewayClient }[] = [];
    const ctx = await setup({
      identity: { name: 'pi', platform: 'pi' },
      reconnect: (c) => {
        order.push(`switch after ${other?.requests.length} request(s)`);
        switched.push(c);
      },
    });
    other = await fakeGateway();
    other.on('POST', `${A}/agent/register`, () => ({
      json: { name: 'pi', platform: 'pi', created: false, heartbeat_interval_ms: 30000 },
    }));
    other.on('GET', `${A}/agent/contacts`, () => ({ json: { contacts: [] } }));
    const res = await tool('connect_to_server').run({ url: other.url, key: 'key-2' }, ctx);
    expect(res.text).toBe(`Connected to ${other.url}. Mail and events now come from this Gateway.`);
    expect(order).toEqual(['switch after 1 request(s)']);
    expect(other.requests[0]?.json).toEqual({ name: 'pi', platform: 'pi' });
    expect(switched[0]?.url).toBe(other.url);
    expect(switched[0]?.key).toBe('key-2');
    await switched[0]?.client.contacts();
    expect(other.requests[1]?.headers.authorization).toBe('Bearer key-2');
    expect(gw.requests).toEqual([]);
  });

  it('without identity it probes with an empty heartbeat and keeps the current key', async () => {
    const switched: { key: string }[] = [];
    const ctx = await setup({ reconnect: (c) => void switched.push(c) });
    other = await fakeGateway();
    other.on('POST', `${A}/agent/heartbeat`, () => ({
      json: {
        status: 'ok',
        server_time: 't',
        allowed_models: [],
        unknown_fields: [],
        heartbeat_interval_ms: 30000,
      },
    }));
    await tool('connect_to_server').run({ url: other.url }, ctx);
    expect(other.requests[0]?.json).toEqual({});
    expect(other.requests[0]?.headers.authorization).toBe('Bearer key-1');
    expect(switched[0]?.key).toBe('key-1');
  });

  it('a failing switch hook, the same server, no hook, a bad URL', async () => {
    const ctx = await setup({
      reconnect: () => {
        throw new Error('sse busy');
      },
    });
    other = await fakeGateway();
    other.on('POST', `${A}/agent/heartbeat`, () => ({
      json: {
        status: 'ok',
        server_time: 't',
        allowed_models: [],
        unknown_fields: [],
        heartbeat_interval_ms: 30000,
      },
    }));
    const failed = await tool('connect_to_server').run({ url: other.url }, ctx);
    expect(failed.isError).toBe(true);
    expect(failed.text).toContain('switching to it failed: sse busy');
    const same = await tool('connect_to_server').run({ url: gw.url }, ctx);
    expect(same.text).toContain('Already connected');
    const { reconnect: _, ...noHook } = ctx;
    const unsupported = await tool('connect_to_server').run({ url: other.url }, noHook);
    expect(unsupported.isError).toBe(true);
    expect(unsupported.text).toContain('not available on this platform');
    const bad = await tool('connect_to_server').run({ url: 'gateway.local' }, ctx);
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('"gateway.local" is not a URL');
  });
});

describe('the other tools', () => {
  it('read_mail and read_thread (thread defaults to the current mail)', async () => {
    const ctx = await setup();
    gw.on('GET', `${A}/agent/mail/:id`, () => ({
      json: { mail: fullMail('m5', { attachments: [attachment('att_9')] }) },
    }));
    gw.on('GET', `${A}/agent/mail/:id/thread`, () => ({
      json: {
        session_id: 's1',
        session_alias: 'pi-fix',
        mails: [fullMail('m1')],
        total: 3,
        offset: 0,
        next_offset: 1,
      },
    }));
    const mail = await tool('read_mail').run({ mail_id: 'm5' }, ctx);
    expect(mail.text).toContain('body of m5');
    expect(mail.text).toContain('att_9');
    expect(mail.text).toContain('Participants: alice (person) <alice@.pi-fix>, pi (agent)');
    const thread = await tool('read_thread').run({}, ctx);
    expect(gw.requests[1]?.path).toBe(`${A}/agent/mail/m1/thread`);
    expect(thread.text).toContain('mails 1-1 of 3');
    expect(thread.text).toContain('call read_thread with offset 1');
    const { mail: _m, ...noMail } = ctx;
    const none = await tool('read_thread').run({}, noMail);
    expect(none.isError).toBe(true);
    expect(none.text).toContain('Pass mail_id');
  });

  it('session_participants defaults to the current session; list_contacts; suggest_address', async () => {
    const ctx = await setup();
    gw.on('GET', `${A}/agent/sessions/:id/participants`, () => ({
      json: {
        session_id: 's1',
        session_alias: 'pi-fix',
        participants: [
          { name: 'alice', human: true, address: 'alice@.pi-fix', has_spoken: true, last_mail_at: 't1' },
          {
            name: 'bob',
            human: false,
            address: 'bob@/srv/bob.pi-fix',
            has_spoken: false,
            last_mail_at: null,
          },
        ],
        silent: ['bob'],
      },
    }));
    gw.on('GET', `${A}/agent/contacts`, () => ({
      json: {
        contacts: [
          {
            name: 'bob',
            kind: 'agent',
            platform: 'opencode',
            online: false,
            last_seen: null,
            workspaces: ['/srv/bob'],
            address: 'bob@.',
          },
        ],
      },
    }));
    gw.on('GET', `${A}/agent/contacts/suggest`, () => ({
      json: {
        suggestions: [
          {
            address: 'bob@/srv/bob.',
            name: 'bob',
            path: '/srv/bob',
            session_alias: '',
            reason: 'announced workspace',
          },
        ],
      },
    }));
    const parts = await tool('session_participants').run({}, ctx);
    expect(gw.requests[0]?.path).toBe(`${A}/agent/sessions/s1/participants`);
    expect(parts.text).toContain('- bob (agent) <bob@/srv/bob.pi-fix> · has not spoken yet');
    const contacts = await tool('list_contacts').run({}, ctx);
    expect(contacts.text).toContain(
      'bob (agent) <bob@.> · offline, last seen: never · Platform: opencode · Workspaces: /srv/bob',
    );
    const suggest = await tool('suggest_address').run({ name: 'bob' }, ctx);
    expect(suggest.text).toContain('bob@/srv/bob. — announced workspace');
    const neither = await tool('suggest_address').run({}, ctx);
    expect(neither.isError).toBe(true);
    const { mail: _m, ...noMail } = ctx;
    const noSession = await tool('session_participants').run({}, noMail);
    expect(noSession.text).toContain('Pass session_id');
  });

  it('upload_attachment and download_attachment go through the client (paths checked)', async () => {
    const ctx = await setup();
    const file = join(dir, 'in.txt');
    writeFileSync(file, 'hello');
    gw.on('POST', `${A}/attachments`, () => ({ json: { attachment: attachment('att_3', 'in.txt') } }));
    gw.on('GET', `${A}/attachments/:id`, () => (_req, res) => {
      res
        .writeHead(200, {
          'content-type': 'text/plain',
          'content-disposition': 'attachment; filename="in.txt"',
        })
        .end('hello');
    });
    const up = await tool('upload_attachment').run({ path: file }, ctx);
    expect(up.text).toContain('attachment_ids ["att_3"]');
    const target = join(dir, 'out.txt');
    const down = await tool('download_attachment').run({ attachment_id: 'att_3', path: target }, ctx);
    expect(down.text).toBe(`Saved attachment att_3 to ${target} (5 bytes).`);
    expect(readFileSync(target, 'utf8')).toBe('hello');
    const rel = await tool('download_attachment').run({ attachment_id: 'att_3', path: 'out.txt' }, ctx);
    expect(rel.isError).toBe(true);
    expect(rel.text).toContain('"out.txt" is relative');
    expect(rel.details).toMatchObject({ code: ERROR_CODES.GATEWAY_PATH_RELATIVE });
  });

  it('runMailTool dispatches by name and refuses unknown names', async () => {
    const ctx = await setup();
    gw.on('GET', `${A}/agent/contacts`, () => ({ json: { contacts: [] } }));
    expect((await runMailTool('list_contacts', {}, ctx)).text).toBe('No contacts.');
    const unknown = await runMailTool('delete_everything', {}, ctx);
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('read_inbox, read_mail');
  });
});

describe('the tool set is the same on every platform (SPEC B-17)', () => {
  const shape = (tools: readonly MailTool[]) =>
    tools.map((t) => ({
      name: t.name,
      annotations: t.annotations,
      required: t.parameters.required,
      properties: Object.fromEntries(
        Object.entries(t.parameters.properties).map(([k, { description: _d, ...schema }]) => [k, schema]),
      ),
    }));

  it('snapshot of names, parameters and annotations', () => {
    expect(shape(mailTools())).toMatchSnapshot();
  });

  it('names are the B-17 list; every locale has the same names and parameters', () => {
    const en = mailTools('en');
    const zh = mailTools('zh-CN');
    expect(en.map((t) => t.name)).toEqual([...MAIL_TOOL_NAMES, ASK_PERSON_TOOL]);
    expect(
      mailTools('en', { askPerson: false }).map((t) => t.name),
      'a host with its own question seam (DSH)',
    ).toEqual([...MAIL_TOOL_NAMES]);
    expect(MAIL_TOOL_NAMES).toEqual([
      'read_inbox',
      'read_mail',
      'read_thread',
      'send_mail',
      'forward_mail',
      'upload_attachment',
      'download_attachment',
      'suggest_address',
      'list_contacts',
      'session_participants',
      'connect_to_server',
    ]);
    expect(shape(zh)).toEqual(shape(en));
    for (const [i, t] of en.entries()) expect(zh[i]?.description).not.toBe(t.description);
  });

  it('parameters are closed JSON-Schema objects, documented from the catalogue', () => {
    for (const t of mailTools()) {
      expect(t.parameters.type).toBe('object');
      expect(t.parameters.additionalProperties).toBe(false);
      expect(t.description).toBe(formatText(`tools.${t.name}.description`));
      for (const r of t.parameters.required) expect(Object.keys(t.parameters.properties)).toContain(r);
      for (const [k, p] of Object.entries(t.parameters.properties)) {
        expect(p.description.length, `${t.name}.${k}`).toBeGreaterThan(5);
        expect(k).toMatch(/^[a-z_]+$/);
      }
    }
    expect(tool('send_mail').parameters.required).toEqual(['to', 'body']);
    expect(tool('read_mail').parameters.required).toEqual(['mail_id']);
    expect(tool('send_mail').parameters.properties.attachment_ids).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    });
  });

  it('annotations: reads are read-only; nothing is destructive; sends reach the open world', () => {
    const readOnly = mailTools()
      .filter((t) => t.annotations.readOnlyHint)
      .map((t) => t.name);
    expect(readOnly).toEqual([
      'read_mail',
      'read_thread',
      'suggest_address',
      'list_contacts',
      'session_participants',
    ]);
    expect(mailTools().every((t) => !t.annotations.destructiveHint)).toBe(true);
    expect(tool('send_mail').annotations.openWorldHint).toBe(true);
    expect(tool('read_inbox').annotations.readOnlyHint).toBe(false); // it marks mails read
  });
});

describe('ask_person (SPEC P-10)', () => {
  /** A context whose question seam records what it was asked and answers `outcome`. */
  function asking(outcome: QuestionOutcome): { ctx: MailToolContext; asked: Question[][] } {
    const asked: Question[][] = [];
    const ctx: MailToolContext = {
      client: new GatewayClient({ baseUrl: 'http://127.0.0.1:9', key: 'k' }),
      ask: async (questions) => {
        asked.push([...questions]);
        return outcome;
      },
    };
    return { ctx, asked };
  }
  const answered = (selected: string[], text?: string): QuestionOutcome => ({
    ok: true,
    answers: { declined: false, answers: [{ question: 'q', selected, ...(text ? { text } : {}) }] },
  });

  it('options as the model writes them (labels, a JSON-array string, { label } objects) become one question with those labels', async () => {
    for (const options of [['red', 'green'], '["red","green"]', [{ label: 'red' }, { label: ' green ' }]]) {
      const { ctx, asked } = asking(answered(['green']));
      const r = await runMailTool(ASK_PERSON_TOOL, { question: 'Which colour?', options }, ctx);
      expect(r.isError, JSON.stringify(options)).toBeFalsy();
      expect(r.text).toBe(formatText('tools.ask_person.chose', { labels: 'green' }));
      expect(asked).toEqual([
        [{ question: 'Which colour?', options: [{ label: 'red' }, { label: 'green' }] }],
      ]);
    }
  });

  it('multi_select (also "true" as a string) asks for several; free text has no options and no multi-select', async () => {
    const several = asking(answered(['red', 'blue']));
    const r = await runMailTool(
      ASK_PERSON_TOOL,
      { question: 'Which?', options: ['red', 'green', 'blue'], multi_select: 'true' },
      several.ctx,
    );
    expect(several.asked[0]?.[0]?.multiSelect).toBe(true);
    expect(r.text).toBe(formatText('tools.ask_person.chose', { labels: 'red, blue' }));
    const free = asking(answered([], 'Lighthouse'));
    const f = await runMailTool(ASK_PERSON_TOOL, { question: 'Name?', multi_select: true }, free.ctx);
    expect(free.asked).toEqual([[{ question: 'Name?' }]]);
    expect(f.text).toBe(formatText('tools.ask_person.wrote', { text: 'Lighthouse' }));
  });

  it("no answer (declined, timed out, shutdown) is an error result with the seam's words", async () => {
    const { ctx } = asking({ ok: false, error: formatText('permission.question.declined') });
    const r = await runMailTool(ASK_PERSON_TOOL, { question: 'Go?' }, ctx);
    expect(r).toMatchObject({
      isError: true,
      text: formatText('permission.question.declined'),
      details: { code: ERROR_CODES.QUESTION_UNANSWERED },
    });
  });

  it('bad input names the field; outside a mail turn it says to ask in the session', async () => {
    const { ctx, asked } = asking(answered(['x']));
    const empty = await runMailTool(ASK_PERSON_TOOL, { question: '  ' }, ctx);
    expect(empty).toMatchObject({
      isError: true,
      details: { code: ERROR_CODES.TOOL_ARGS_INVALID, field: 'question' },
    });
    const many = await runMailTool(
      ASK_PERSON_TOOL,
      { question: 'Which?', options: Array.from({ length: 51 }, (_, i) => `o${i}`) },
      ctx,
    );
    expect(many).toMatchObject({ isError: true, details: { field: 'options' } });
    const escaped = await runMailTool(
      ASK_PERSON_TOOL,
      { question: 'Which?', options: ['ok\u001b[2J', 'two\nlines'] },
      ctx,
    );
    expect(escaped, 'a label the person cannot type back as shown').toMatchObject({
      isError: true,
      details: { field: 'options[0]' },
    });
    const long = await runMailTool(ASK_PERSON_TOOL, { question: 'x'.repeat(4_001) }, ctx);
    expect(long, 'the question mail must fit the Gateway').toMatchObject({
      isError: true,
      details: { field: 'question' },
    });
    const notList = await runMailTool(ASK_PERSON_TOOL, { question: 'Which?', options: { a: 1 } }, ctx);
    expect(notList.text).toContain('field "options": expected array of strings, got object');
    expect(asked).toEqual([]);
    const standalone = await runMailTool(ASK_PERSON_TOOL, { question: 'Go?' }, { client: ctx.client });
    expect(standalone).toMatchObject({
      isError: true,
      text: formatText('tools.ask_person.no_turn', { tool: ASK_PERSON_TOOL }),
    });
  });
});
