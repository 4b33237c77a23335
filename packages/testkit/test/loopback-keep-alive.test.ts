import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { GatewayProxy, startModelServer } from '../src/index.js';

// A host's HTTP client may keep an idle keep-alive socket longer than Node's default 5 s server
// side; reusing it as the server closes it is an ECONNRESET (seen as a failed Claude Code turn and a
// failed pi bench). The stand-ins must keep idle connections longer than any client does.

/** Node's own idle keep-alive timeout, the one the stand-ins used to have, in ms. */
const NODE_DEFAULT_KEEP_ALIVE_MS = 5_000;

/** One request on `socket`, resolved with the raw response head once it has arrived. */
function request(socket: Socket, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      resolve(seen.slice(0, seen.indexOf('\r\n')));
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

/** True when the server ends `socket` within `ms` of idleness (its `end` or `close` event). */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), ms);
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      resolve(closed);
    };
    const onEnd = (): void => done(true);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
  });
}

async function idleConnectionSurvives(url: URL, path: string): Promise<void> {
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  try {
    expect(await request(socket, url.host, path)).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(
      await closedWithin(socket, NODE_DEFAULT_KEEP_ALIVE_MS + 1_500),
      'the server closed the idle connection',
    ).toBe(false);
    expect(await request(socket, url.host, path), 'the idle connection is reused').toMatch(
      /^HTTP\/1\.1 \d{3}/,
    );
  } finally {
    socket.destroy();
  }
}

describe.concurrent('loopback stand-ins keep idle keep-alive connections (no ECONNRESET on reuse)', () => {
  it('the scripted model server', async () => {
    const server = await startModelServer({ scenarios: [] });
    try {
      await idleConnectionSurvives(new URL(server.baseUrl), '/v1/models');
    } finally {
      await server.close();
    }
  });

  it('the Gateway proxy', async () => {
    const target = await startModelServer({ scenarios: [] });
    const proxy = await GatewayProxy.start(new URL(target.baseUrl).origin);
    try {
      await idleConnectionSurvives(new URL(proxy.url), '/v1/models');
    } finally {
      await proxy.close();
      await target.close();
    }
  });
});
