/**
 * The deployment recipe of deploy/haproxy/agentmail.cfg, for real (gateway-postgres project
 * only): two Gateways on one PostgreSQL database behind Debian's HAProxy. Mail sent through the
 * proxy reaches a stream held through it, in order; when the Gateway holding the stream stops,
 * sends go on through the other, and the stream reconnected with Last-Event-ID misses nothing and
 * repeats nothing (SPEC G-42); an attachment uploaded through the proxy downloads through it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { FormData, fetch } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentStream } from '../src/event-hub.js';
import { addAgent, addUser, api, openSse, type SseStream, startGateways } from './helpers.js';

const CONFIG = join(import.meta.dirname, '..', '..', '..', 'deploy', 'haproxy', 'agentmail.cfg');
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const { port } = s.address() as { port: number };
  await new Promise<void>((done) => s.close(() => done()));
  return port;
}

/** HAProxy in the foreground with the shipped configuration; resolves once it answers /healthz. */
async function startProxy(gateways: string[]): Promise<{ url: string; child: ChildProcess }> {
  if (!HAPROXY) throw new Error('the proxy recipe test needs HAProxy (Debian: apt-get install haproxy)');
  const port = await freePort();
  const env = {
    ...process.env,
    AGENTMAIL_PROXY_BIND: `127.0.0.1:${port}`,
    AGENTMAIL_GATEWAY_1: new URL(gateways[0] ?? '').host,
    AGENTMAIL_GATEWAY_2: new URL(gateways[1] ?? '').host,
  };
  const child = spawn(HAPROXY, ['-db', '-f', CONFIG], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    said += s;
  });
  onTestFinished(async () => {
    if (child.exitCode === null) {
      const gone = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await gone;
    }
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode}: ${said}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { url, child };
    if (Date.now() > deadline) throw new Error(`haproxy did not answer in time: ${said}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

function mailIds(stream: SseStream): number[] {
  return stream.events.filter((e) => e.event === 'new_mail').map((e) => Number(e.id));
}

describe('two Gateways behind HAProxy (deploy/haproxy)', () => {
  it('sends and streams through the proxy; a stopped Gateway costs no event', async () => {
    const gws = await startGateways(2);
    const [a, b] = gws;
    if (!a || !b) throw new Error('two gateways');
    const proxy = await startProxy([a.url, b.url]);
    const via = { url: proxy.url };
    const pi = await addAgent(a, 'pi');
    const alice = await addUser(a, 'alice');
    const send = async (subject: string) => {
      const r = await api(via, 'POST', '/me/mail/send', alice, { to: 'pi@/w', subject, body: subject });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    const stream = openSse(via, '/events', pi);
    await stream.ready;
    for (let i = 0; i < 6; i++) await send(`m${i}`);
    await stream.waitFor(6, (e) => e.event === 'new_mail', 10_000);
    const before = mailIds(stream);
    expect(before).toEqual(Array.from({ length: 6 }, (_, i) => (before[0] ?? 0) + i));

    // Stop the Gateway that holds the stream: sends go on through the other one.
    const holder = [a, b].find((g) => g.app.gateway.hub.connectionCount(agentStream('pi')) > 0);
    if (!holder) throw new Error('no Gateway holds the stream');
    await holder.stop();
    for (let i = 0; i < 3; i++) await send(`after ${i}`);
    stream.close();
    const last = before.at(-1) ?? 0;
    const again = openSse(via, '/events', pi, String(last));
    await again.ready;
    await again.waitFor(3, (e) => e.event === 'new_mail', 10_000);
    expect(mailIds(again)).toEqual([last + 1, last + 2, last + 3]);
    again.close();

    // An attachment through the proxy: stored in the database, served by whichever Gateway.
    const bytes = randomBytes(700_000);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'x.bin');
    const up = await fetch(`${proxy.url}/api/v1/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pi}` },
      body: form,
    });
    expect(up.status).toBe(200);
    const { attachment } = (await up.json()) as { attachment: { id: string } };
    const down = await fetch(`${proxy.url}/api/v1/attachments/${attachment.id}`, {
      headers: { authorization: `Bearer ${pi}` },
    });
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
