/**
 * The browser's event stream reader (`SseClient` of `@agentmail/shared-policy/client/browser`,
 * on `fetch`: what the web mailbox runs) against a real Gateway child process and its real SSE
 * endpoint, through the testkit's proxy: an event frame cut in the middle, reconnects refused
 * for a while, then the reconnect carries the last complete id as `Last-Event-ID` and every
 * mail arrives once, in order (SPEC B-2, G-22).
 */
import type { AgentEvent } from '@agentmail/protocol';
import { fetchTransport, SseClient, type SseOpenInfo } from '@agentmail/shared-policy/client/browser';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog, type Stack, startStack } from '../src/index.js';

const WAIT_MS = 10_000;

let stack: Stack | undefined;
let sse: SseClient | undefined;
afterEach(async () => {
  await sse?.close();
  sse = undefined;
  await stack?.close();
  stack = undefined;
});

describe('SseClient on fetch against the real Gateway', () => {
  it('a frame cut mid-way: the reconnect sends Last-Event-ID and no event is lost or twice', async () => {
    stack = await startStack({ agentName: 'reader', platform: 'pi' });
    const s = stack;
    const events = new EventLog<AgentEvent>('reader', (e) => `#${e.id} ${e.type}`);
    const opens = new EventLog<SseOpenInfo>('opens', (o) => `#${o.connection} after ${o.lastEventId}`);
    sse = new SseClient({
      url: s.bridgeGatewayUrl,
      key: s.agent.key,
      transport: fetchTransport(), // the default, said out loud: globalThis.fetch, as in a browser
      initialBackoffMs: 50,
      maxBackoffMs: 200,
      onOpen: (info) => opens.push(info),
      onEvent: (e) => events.push(e),
      onError: (e) => events.problem(`${e.code}: ${e.message}`),
    });
    void sse.start();
    await opens.waitFor((o) => o, WAIT_MS, 'the first connection');
    const mailEvent = (mailId: string) => (e: AgentEvent) =>
      e.type === 'new_mail' && e.data.mail_id === mailId ? e : undefined;

    const one = await s.sendAs(undefined, s.taskAddress(), { subject: 'one', body: '1' });
    const first = await events.waitFor(mailEvent(one.mail_id), WAIT_MS, 'mail one');

    // The next frame is cut after its data line (the client holds all of it but the end), the
    // connection dropped, and reconnects answered 503 until a third mail exists.
    const cut = s.proxy.cutNextEvent({ hold: true });
    const two = await s.sendAs(undefined, s.taskAddress(), { subject: 'two', body: '2' });
    const { stream, lastDeliveredId, partialBytes } = await cut;
    expect(partialBytes).toBeGreaterThan(0);
    expect(lastDeliveredId).toBe(first.id);
    const three = await s.sendAs(undefined, s.taskAddress(), { subject: 'three', body: '3' });
    s.proxy.release();

    const reconnect = await s.proxy.waitForEventStream(
      (r) => r.seq > stream.seq && r.status === 200,
      WAIT_MS,
    );
    expect(reconnect.lastEventIdSent).toBe(first.id);
    await events.waitFor(mailEvent(three.mail_id), WAIT_MS, 'mail three');
    const mails = events.all().flatMap((e) => (e.type === 'new_mail' ? [e.data.mail_id] : []));
    expect(mails).toEqual([one.mail_id, two.mail_id, three.mail_id]);
    // Every refused attempt in between asked for the same cursor; the open one said so too.
    const after = s.proxy.eventStreams().filter((r) => r.seq > stream.seq && r.seq <= reconnect.seq);
    expect(after.every((r) => r.lastEventIdSent === first.id)).toBe(true);
    expect(opens.all().at(-1)).toMatchObject({ connection: 2, lastEventId: first.id });
    expect(sse.lastEventId).toBe(events.all().at(-1)?.id);
  }, 60_000);
});
