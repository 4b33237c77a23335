/**
 * Several Gateways on one PostgreSQL database (gateway-postgres project only): a stream on any
 * Gateway delivers every event in order, whichever Gateway committed it (SPEC G-42), also after
 * moving to another Gateway with Last-Event-ID and after its wake-up connection was cut; an
 * attachment uploaded through one downloads through another.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SendMailResponse } from '@agentmail/protocol';
import { sql } from 'kysely';
import { FormData, fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { BLOB_CHUNK_BYTES } from '../src/index.js';
import {
  addAgent,
  addUser,
  api,
  openSse,
  type SseStream,
  startGateways,
  startPair,
  type TestGateway,
} from './helpers.js';

async function send(gw: TestGateway, token: string, subject: string): Promise<void> {
  const r = await api(gw, 'POST', '/me/mail/send', token, { to: 'pi@/w', subject, body: subject });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(SendMailResponse.parse(r.body).status).toBe('sent');
}

/** The ids of the `new_mail` events of a stream, as numbers. */
function mailIds(stream: SseStream): number[] {
  return stream.events.filter((e) => e.event === 'new_mail').map((e) => Number(e.id));
}

describe('events across Gateways on one database (G-42)', () => {
  it('a stream on one Gateway gets the events the others commit, live, each once, in id order', async () => {
    const [a, b, c] = await startGateways(3);
    if (!a || !b || !c) throw new Error('three gateways');
    const pi = await addAgent(a, 'pi');
    const alice = await addUser(a, 'alice');
    const stream = openSse(a, '/events', pi);
    await stream.ready;
    // Concurrent sends through all three: the commits interleave.
    const gws = [a, b, c];
    await Promise.all(Array.from({ length: 30 }, (_, i) => send(gws[i % 3] as TestGateway, alice, `m${i}`)));
    await stream.waitFor(30, (e) => e.event === 'new_mail', 15_000);
    const ids = mailIds(stream);
    expect(ids).toHaveLength(30);
    expect(ids, 'contiguous and increasing: nothing skipped, nothing twice').toEqual(
      Array.from({ length: 30 }, (_, i) => (ids[0] ?? 0) + i),
    );
    stream.close();
  });

  it('a stream moved to another Gateway with Last-Event-ID continues where it stopped', async () => {
    const { a, b, pi, alice } = await startPair();
    const first = openSse(a, '/events', pi);
    await first.ready;
    for (let i = 0; i < 3; i++) await send(b, alice, `before ${i}`);
    await first.waitFor(3, (e) => e.event === 'new_mail');
    first.close();
    const last = mailIds(first).at(-1);
    for (let i = 0; i < 3; i++) await send(a, alice, `between ${i}`);
    const moved = openSse(b, '/events', pi, String(last));
    await moved.ready;
    for (let i = 0; i < 3; i++) await send(a, alice, `after ${i}`);
    await moved.waitFor(6, (e) => e.event === 'new_mail');
    expect(mailIds(moved)).toEqual(Array.from({ length: 6 }, (_, i) => (last ?? 0) + 1 + i));
    moved.close();
  });

  it('with its wake-up connection cut, a Gateway still delivers (polling, then a new listener)', async () => {
    const { a, b, pi, alice } = await startPair();
    const stream = openSse(a, '/events', pi);
    await stream.ready;
    await send(b, alice, 'one');
    await stream.waitFor(1, (e) => e.event === 'new_mail');
    // Cut every LISTEN connection of this database (as a failover or a restarted pooler would).
    const cut = await sql<{ n: number }>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and query like 'LISTEN %'`.execute(a.app.gateway.db);
    expect(cut.rows[0]?.n).toBeGreaterThanOrEqual(2);
    await send(b, alice, 'two');
    await send(b, alice, 'three');
    await stream.waitFor(3, (e) => e.event === 'new_mail', 10_000);
    const ids = mailIds(stream);
    expect(ids).toEqual([ids[0], (ids[0] ?? 0) + 1, (ids[0] ?? 0) + 2]);
    stream.close();
  });

  it('an attachment uploaded through one Gateway downloads through another, byte for byte', async () => {
    const [a, b] = await startGateways(2);
    if (!a || !b) throw new Error('two gateways');
    const pi = await addAgent(a, 'pi');
    // Three chunks and a bit: the chunk edges must join exactly.
    const bytes = randomBytes(BLOB_CHUNK_BYTES * 3 + 17);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'big.bin');
    const up = await fetch(`${a.url}/api/v1/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pi}` },
      body: form,
    });
    expect(up.status).toBe(200);
    const { attachment } = (await up.json()) as { attachment: { id: string } };
    const down = await fetch(`${b.url}/api/v1/attachments/${attachment.id}`, {
      headers: { authorization: `Bearer ${pi}` },
    });
    expect(down.status).toBe(200);
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
    expect(down.headers.get('x-content-sha256')).toBe(createHash('sha256').update(bytes).digest('hex'));
  });
});
