/**
 * Self-test of the e2e harness with a trivial bridge: examples/remote-agent/remote_agent.py
 * (Python 3, standard library only) answers every mail with "received: <subject>". Checks that
 * startStack runs a real Gateway child process, that sendAs → awaitReply works over the person's
 * event stream, that the proxy cuts an event stream inside a frame and sees the reconnect's
 * Last-Event-ID, and that close() leaves no process behind.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routePath } from '@agentmail/protocol';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type HostHarness, type Stack, startStack, TURN_TIMEOUT_ENV } from '../src/index.js';

const SCRIPT = resolve(fileURLToPath(import.meta.url), '../../../../examples/remote-agent/remote_agent.py');

const echoAdapter: HostHarness = {
  platform: 'python-example',
  // The echo agent has no tools; the names are never used here.
  toolNames: { shell: 'bash', readFile: 'read' },
  start: (env) =>
    env.spawn('python3', [SCRIPT, '--platform', 'python-example'], {
      env: { ...env.processEnv, PYTHONUNBUFFERED: '1' },
      cwd: env.workdir,
    }),
  stopGraceMs: 5_000,
};

/** True while a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('e2e harness', () => {
  it('runs a Gateway and a bridge as child processes, relays mail both ways, survives a cut stream and cleans up', async () => {
    stack = await startStack({ agentName: 'echo', platform: 'python-example' });
    const bridge = await stack.startBridge(echoAdapter);
    const pids = [stack.gateway.pid, bridge.pid];
    expect(pids.every(alive)).toBe(true);

    const first = await stack.sendAs(stack.person, stack.taskAddress(), { subject: 'hello', body: 'ping' });
    const reply = await stack.awaitReply({ inReplyTo: first.mail_id, timeoutMs: 10_000 });
    expect(reply).toMatchObject({ from_name: 'echo', from_human: false, subject: 'Re: hello' });
    expect(reply.body).toBe('received: hello');
    expect(reply.session_id).toBe(first.session_id);
    expect((await stack.thread(first.mail_id)).map((m) => m.id)).toEqual([first.mail_id, reply.id]);

    // Cut the bridge's event stream inside the next frame and hold reconnects until a second
    // mail exists: the reconnect must carry the last complete event id.
    const cut = stack.proxy.cutNextEvent({ hold: true });
    const second = await stack.sendAs(undefined, reply.reply_address, {
      subject: 'again',
      body: 'pong',
      replyTo: reply.id,
    });
    const { stream, lastDeliveredId, partialBytes } = await cut;
    expect(stream.cut).toBe(true);
    expect(partialBytes).toBeGreaterThan(0);
    // Only the first mail's event got through whole; the second one's frame was cut short.
    expect(stream.deliveredIds).toEqual([lastDeliveredId]);
    expect(lastDeliveredId).toMatch(/^\d+$/);
    const third = await stack.sendAs(undefined, stack.taskAddress(), { subject: 'third', body: '3' });
    stack.proxy.release();
    const reconnect = await stack.proxy.waitForEventStream(
      (s) => s.seq > stream.seq && s.status === 200,
      10_000,
    );
    expect(reconnect.lastEventIdSent).toBe(lastDeliveredId);
    const replies = await Promise.all([
      stack.awaitReply({ inReplyTo: second.mail_id, timeoutMs: 10_000 }),
      stack.awaitReply({ inReplyTo: third.mail_id, timeoutMs: 10_000 }),
    ]);
    expect(replies.map((m) => m.body)).toEqual(['received: again', 'received: third']);

    await stack.close();
    expect(bridge.exit).toBeDefined();
    expect(stack.gateway.exit).toBeDefined();
    expect(pids.filter(alive)).toEqual([]);
    expect(stack.processes()).toEqual([]);
  }, 30_000);

  it('hands bridge settings on, records event frames, holds a request until released, lists contacts', async () => {
    stack = await startStack({ agentName: 'echo', platform: 'python-example' });
    const env = stack.bridgeEnv(echoAdapter, {}, { turnTimeoutMs: 4_000 });
    expect(env.turnTimeoutMs).toBe(4_000);
    expect(env.processEnv[TURN_TIMEOUT_ENV]).toBe('4000');
    expect(stack.bridgeEnv(echoAdapter).processEnv[TURN_TIMEOUT_ENV]).toBeUndefined();

    await stack.startBridge(echoAdapter);
    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: 'frames', body: 'f' });
    await stack.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: 10_000 });
    const frame = stack.proxy
      .eventStreams()
      .flatMap((s) => s.frames)
      .find((f) => f.event === 'new_mail' && f.data.includes(sent.mail_id));
    expect(frame?.id).toMatch(/^\d+$/);
    expect(JSON.parse(frame?.data ?? '{}')).toMatchObject({ mail_id: sent.mail_id, from_name: 'alice' });

    const inbox = routePath('inbox');
    // The bridge lists its own inbox too (catch-up): hold only the test's own request.
    const held = stack.proxy.holdNextRequest(
      (method, path, url) => method === 'GET' && path === inbox && url.endsWith('?status=all'),
    );
    let answered = false;
    const answer = request(`${stack.bridgeGatewayUrl}${inbox}?status=all`, {
      headers: { authorization: `Bearer ${stack.agent.key}` },
    }).then(async (res) => {
      answered = true;
      return { status: res.statusCode, body: await res.body.text() };
    });
    const hold = await held;
    expect(hold).toMatchObject({ method: 'GET', url: `${inbox}?status=all` });
    // A second request to another route is not held.
    const other = await request(`${stack.bridgeGatewayUrl}${routePath('contacts')}`, {
      headers: { authorization: `Bearer ${stack.agent.key}` },
    });
    expect(other.statusCode).toBe(200);
    await other.body.text();
    expect(answered, 'the held request waits for release()').toBe(false);
    await hold.release();
    expect(await answer).toMatchObject({ status: 200, body: expect.stringContaining(sent.mail_id) });

    // A client that gives up while held (its own timeout): release() resolves, forwarding nothing.
    const heldAgain = stack.proxy.holdNextRequest(
      (method, path, url) => method === 'GET' && path === inbox && url.endsWith('?status=all'),
    );
    const gaveUp = new AbortController();
    const abandoned = request(`${stack.bridgeGatewayUrl}${inbox}?status=all`, {
      headers: { authorization: `Bearer ${stack.agent.key}` },
      signal: gaveUp.signal,
    }).catch((err: unknown) => err);
    const second = await heldAgain;
    expect(second.abandoned).toBe(false);
    gaveUp.abort();
    expect(await abandoned).toBeInstanceOf(Error);
    await vi.waitFor(() => expect(second.abandoned).toBe(true), { timeout: 5_000 });
    await second.release();

    expect((await stack.person.contacts()).find((c) => c.name === 'echo')).toMatchObject({
      kind: 'agent',
      platform: 'python-example',
      online: true,
    });
  }, 30_000);

  it('stops the bridge even when the test fails before close (registered cleanup)', async () => {
    stack = await startStack({ agentName: 'echo', platform: 'python-example' });
    const bridge = await stack.startBridge(echoAdapter);
    // What afterEach does after a failure: close() kills the bridge's whole process group.
    await stack.close();
    expect(alive(bridge.pid)).toBe(false);
    await expect(stack.startBridge(echoAdapter)).rejects.toMatchObject({ code: 'AM_TESTKIT_STACK_CLOSED' });
  }, 20_000);
});
