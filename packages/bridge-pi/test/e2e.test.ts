/**
 * End to end on the real pi SDK: a real Gateway, the scripted model on loopback as pi's provider,
 * and the `agentmail-pi` daemon as a child process forking one real worker per mail.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { InboxResponse, PermissionsResponse, SendMailResponse } from '@agentmail/protocol';
import type { Scenario } from '@agentmail/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBridge } from './helpers/build.js';
import { type BridgeEnv, type LogLine, startBridgeEnv } from './helpers/env.js';

const scenarios: Scenario[] = [
  // (1) read_inbox, then a reply
  {
    name: 't1-read',
    match: { lastUserMessage: 'T1-task', hasToolResult: false },
    reply: { type: 'tool_calls', calls: [{ name: 'read_inbox', arguments: { limit: 5 } }] },
  },
  {
    name: 't1-reply',
    match: { lastUserMessage: 'T1-task', toolResultContains: 'T1-task' },
    reply: { type: 'text', text: 'DONE T1: the answer is 42' },
  },
  // (2) guarded tool, approved
  {
    name: 't2-bash',
    match: { lastUserMessage: 'T2-task', hasToolResult: false },
    reply: {
      type: 'tool_calls',
      calls: [{ name: 'bash', arguments: { command: 'echo ran > approved.txt && echo T2-ran' } }],
    },
  },
  {
    name: 't2-reply',
    match: { lastUserMessage: 'T2-task', toolResultContains: 'T2-ran' },
    reply: { type: 'text', text: 'DONE T2' },
  },
  // (3) guarded tool, denied with a note
  {
    name: 't3-bash',
    match: { lastUserMessage: 'T3-task', hasToolResult: false },
    reply: { type: 'tool_calls', calls: [{ name: 'bash', arguments: { command: 'touch denied.txt' } }] },
  },
  {
    name: 't3-reply',
    match: { lastUserMessage: 'T3-task', toolResultContains: 'use the staging copy' },
    reply: { type: 'text', text: 'OK T3: I will use the staging copy' },
  },
  // (4) the model fails
  {
    name: 't4-500',
    match: { lastUserMessage: 'T4-task' },
    reply: { type: 'error', status: 500, message: 'upstream exploded' },
  },
];

let env: BridgeEnv;
let removeBuild: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  const built = await buildBridge();
  removeBuild = built.remove;
  env = await startBridgeEnv({ daemonJs: built.daemonJs, scenarios });
}, 60_000);

afterAll(async () => {
  await env?.close();
  await removeBuild();
});

async function mailPi(subject: string, body = 'please'): Promise<string> {
  const res = await env.me<SendMailResponse>('POST', '/me/mail/send', {
    to: `pi@${env.workDir}.new`,
    subject,
    body,
  });
  expect(res.status).toBe(200);
  if (res.body.status !== 'sent') throw new Error('not sent');
  return res.body.mail_id;
}

const turnEnd = (mailId: string) => (l: LogLine) =>
  l.mail_id === mailId && (l.msg === 'turn done' || l.msg === 'turn failed' || l.msg === 'worker given up');

async function repliesTo(mailId: string) {
  const inbox = await env.me<InboxResponse>('GET', '/me/inbox?status=all&limit=100');
  return inbox.body.mails.filter((m) => m.in_reply_to === mailId);
}

async function pendingPermission(): Promise<PermissionsResponse['permissions'][number]> {
  const line = await env.waitForLog(
    (l) => l.msg === 'permission requested' && !handled.has(String(l.relay_key)),
  );
  handled.add(String(line.relay_key));
  const res = await env.me<PermissionsResponse>('GET', '/me/permissions?status=pending');
  const p = res.body.permissions[0];
  if (!p) throw new Error('no pending permission');
  return p;
}
const handled = new Set<string>();

describe('bridge-pi on the real pi SDK', () => {
  it('a person mails a task: the model reads the inbox and exactly one reply is relayed, threaded', async () => {
    const id = await mailPi('T1-task: what is the answer?');
    const end = await env.waitForLog(turnEnd(id));
    expect(end.msg).toBe('turn done');
    const replies = await repliesTo(id);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      from_name: 'pi',
      relay: true,
      subject: 'Re: T1-task: what is the answer?',
    });
    const full = await env.me<{ mail: { body: string } }>('GET', `/me/mail/${replies[0]?.id}`);
    expect(full.body.mail.body).toBe('DONE T1: the answer is 42');
    // The model really called read_inbox (its result named the mail) before answering.
    expect(env.model.requests({ scenario: 't1-reply' })).toHaveLength(1);
  });

  it('workspace mode: a guarded tool asks by mail, the person approves, the tool ran', async () => {
    const id = await mailPi('T2-task: write a file');
    const p = await pendingPermission();
    expect(p.question).toContain('bash');
    expect(p.context).toContain('approved.txt');
    const decided = await env.me('POST', `/me/permissions/${p.id}/decide`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    const end = await env.waitForLog(turnEnd(id));
    expect(end.msg).toBe('turn done');
    expect(existsSync(join(env.workDir, 'approved.txt'))).toBe(true);
    expect((await repliesTo(id)).map((m) => m.subject)).toEqual(['Re: T2-task: write a file']);
  });

  it('deny with a note: the tool did not run and the model saw the note', async () => {
    const id = await mailPi('T3-task: touch a file');
    const p = await pendingPermission();
    await env.me('POST', `/me/permissions/${p.id}/decide`, {
      decision: 'deny',
      note: 'use the staging copy',
    });
    const end = await env.waitForLog(turnEnd(id));
    expect(end.msg).toBe('turn done');
    expect(existsSync(join(env.workDir, 'denied.txt'))).toBe(false);
    const [seen] = env.model.requests({ scenario: 't3-reply' });
    const result = seen?.toolResults.map((r) => r.text).join('\n') ?? '';
    expect(result).toContain('A person denied this tool call');
    expect(result).toContain('use the staging copy');
  });

  it('plan mode: a guarded tool is refused without any permission mail', async () => {
    env.model.addScenarios([
      {
        name: 't5-bash',
        match: { lastUserMessage: 'T5-task', hasToolResult: false },
        reply: { type: 'tool_calls', calls: [{ name: 'bash', arguments: { command: 'touch planned.txt' } }] },
      },
      {
        name: 't5-reply',
        match: { lastUserMessage: 'T5-task', hasToolResult: true },
        reply: { type: 'text', text: 'PLAN T5' },
      },
    ]);
    const res = await env.me<SendMailResponse>('POST', '/me/mail/send', {
      to: `pi@${env.workDir}.new`,
      subject: 'T5-task: plan only',
      body: 'plan it',
      permission_mode: 'plan',
    });
    if (res.body.status !== 'sent') throw new Error('not sent');
    const end = await env.waitForLog(turnEnd(res.body.mail_id));
    expect(end.msg).toBe('turn done');
    expect(existsSync(join(env.workDir, 'planned.txt'))).toBe(false);
    const [seen] = env.model.requests({ scenario: 't5-reply' });
    expect(seen?.toolResults.map((r) => r.text).join('\n')).toContain('plan mode');
    const all = await env.me<PermissionsResponse>('GET', '/me/permissions?status=all');
    expect(all.body.permissions).toHaveLength(2); // only T2 and T3 asked
  });

  it('a failing model (HTTP 500): a failure mail with the cause goes to the sender', async () => {
    const id = await mailPi('T4-task: will fail');
    const end = await env.waitForLog(turnEnd(id));
    expect(end.msg).toBe('turn failed');
    const replies = await repliesTo(id);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.subject).toBe('Could not process: T4-task: will fail');
    const full = await env.me<{ mail: { body: string } }>('GET', `/me/mail/${replies[0]?.id}`);
    expect(full.body.mail.body).toContain('upstream exploded');
    expect(full.body.mail.body).toContain('Every model');
  });
});
