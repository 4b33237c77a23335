/**
 * The harness's person and peer agent on shared-policy's client, against a stack's real Gateway
 * child process (with `--check-responses`): mail with attachments both ways, a permission request
 * decided by the person, the person's event stream, and refusals as `AM_TESTKIT_API`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  PersonEvents,
  type Stack,
  startStack,
  TESTKIT_ERROR_CODES,
  type TestkitError,
} from '../src/index.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('PersonClient and AgentMailbox (shared-policy client)', () => {
  it('mail with files both ways, a permission asked and decided, events of both streams', async () => {
    stack = await startStack({ personName: 'alice' });
    const peer = await stack.addAgent('peer');
    const sent = await stack.person.send('peer', {
      subject: 'files',
      body: 'see attached',
      attachments: [{ filename: 'a – 1.txt', content: 'from alice', contentType: 'text/plain' }],
    });
    expect(sent.attachments.map((a) => a.filename)).toEqual(['a – 1.txt']);
    const got = await peer.awaitMail({ from: 'alice', timeoutMs: 10_000 });
    expect(got.id).toBe(sent.mail_id);

    const reply = await peer.client.send({
      to: got.reply_address,
      subject: 'Re: files',
      body: 'thanks',
      reply_to: got.id,
      attachment_ids: [got.attachments[0]?.id ?? ''],
    });
    if (reply.status !== 'sent') throw new Error('not sent');
    const answer = await stack.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: 10_000 });
    expect(answer.body).toBe('thanks');
    const file = await stack.person.download(answer.attachments[0]?.id ?? '');
    expect([new TextDecoder().decode(file.bytes), file.filename, file.contentType]).toEqual([
      'from alice',
      'a – 1.txt',
      'text/plain',
    ]);
    expect((await stack.thread(sent.mail_id)).map((m) => m.id)).toEqual([sent.mail_id, reply.mail_id]);

    const asked = await peer.client.permissionRequest({
      question: 'May I run `ls`?',
      options: ['approve', 'deny'],
      session_id: got.session_id,
      relay_key: 'perm:1',
      kind: 'approval',
    });
    expect(asked).toMatchObject({ status: 'pending', asked: 'alice' });
    const request = await stack.awaitPermission({ timeoutMs: 10_000 });
    expect(request.question).toBe('May I run `ls`?');
    expect((await stack.person.decide(request.id, 'approve', 'ok')).decision).toBe('approve_once');
    expect((await stack.person.permissions('all')).find((p) => p.id === request.id)?.status).toBe('decided');
    const types = stack.person.events.events().map((e) => e.type);
    expect(types).toContain('permission_request');
    expect(types).toContain('permission_decision');
  }, 30_000);

  it('a refusal is AM_TESTKIT_API with the status and the body; a refused stream does not open', async () => {
    stack = await startStack({ personName: 'alice' });
    const taken = (await thrown(stack.addPerson('alice'))) as TestkitError;
    expect(taken.code).toBe(TESTKIT_ERROR_CODES.API);
    expect(taken.message).toMatch(/POST \/api\/v1\/admin\/users failed with HTTP 409/);
    expect(taken.message).toContain('"code":"AM_GW_CONFLICT"');
    const stream = (await thrown(
      PersonEvents.open({ url: stack.gatewayUrl, token: 'nope' }, 'stranger'),
    )) as TestkitError;
    expect(stream.code).toBe(TESTKIT_ERROR_CODES.API);
    expect(stream.message).toMatch(/^stranger: event stream .* answered HTTP 401/);
  }, 30_000);
});
