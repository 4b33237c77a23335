/**
 * The harness's opencode client never sends a request over a connection kept from an earlier
 * server on the same port. Seen in CI: `opencode serve --port 0` takes 4096 whenever it is free;
 * an opencode shutting down has stopped listening but not yet closed its kept-alive connections,
 * the next one binds 4096, and its warm-up went to the dying one: `fetch failed` / ECONNRESET.
 * Two plain TCP servers play the two opencodes there (the stale kept-alive connection cannot be
 * made with the binary on demand). startServe's own port handling is tested on the real binary.
 */
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManagedProcess } from '@agentmail/testkit';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../harness/sandbox.js';
import {
  opencodeClient,
  pickFreePort,
  SERVE_LISTEN_TIMEOUT_MS,
  SERVE_PORT_ATTEMPTS,
  startServe,
} from '../harness/serve.js';

/** A minimal HTTP/1.1 server that answers every request with `{"server": name}` and keeps its connections. */
function jsonServer(name: string, keepAlive: boolean): { server: net.Server; sockets: Set<net.Socket> } {
  const sockets = new Set<net.Socket>();
  const body = JSON.stringify({ server: name });
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', () => {
      const head = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
      socket.write(`${head}${keepAlive ? 'Keep-Alive: timeout=60' : 'Connection: close'}\r\n\r\n${body}`);
      if (!keepAlive) socket.end();
    });
  });
  return { server, sockets };
}

const open: net.Server[] = [];
afterEach(() => {
  for (const server of open.splice(0)) server.close();
});

describe('opencodeClient', () => {
  it('sends a request for a new server on a reused port to that server, not to a kept-alive connection of the old one', async () => {
    const old = jsonServer('old', true);
    open.push(old.server);
    old.server.listen(0, '127.0.0.1');
    await once(old.server, 'listening');
    const { port } = old.server.address() as net.AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    const client = opencodeClient(url, '/project');

    // Two requests: the second is the one that would leave an idle connection in the pool.
    for (let i = 0; i < 2; i++) {
      const answer = await client.config.get({ throwOnError: true });
      expect(answer.data).toEqual({ server: 'old' });
    }
    // The old server stops listening but keeps its connections open (a graceful shutdown).
    old.server.close();
    const next = jsonServer('new', false);
    open.push(next.server);
    next.server.listen(port, '127.0.0.1');
    await once(next.server, 'listening');

    const answer = await client.config.get({ throwOnError: true });
    expect(answer.data).toEqual({ server: 'new' });
    for (const socket of old.sockets) socket.destroy();
  });
});

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A sandbox for the real `opencode serve` (no plugin: only the server's start is under test). */
function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'oc-serve-'));
  roots.push(root);
  const projectDir = join(root, 'project');
  mkdirSync(projectDir);
  return createSandbox({
    root: join(root, 'opencode'),
    projectDir,
    modelProvider: 'scripted',
    modelBaseUrl: 'http://127.0.0.1:9/v1',
    modelIds: ['m'],
    modelId: 'm',
  });
}

/** A port held by another listener for the rest of the test. */
async function takenPort(): Promise<number> {
  const blocker = net.createServer();
  open.push(blocker);
  blocker.listen(0, '127.0.0.1');
  await once(blocker, 'listening');
  return (blocker.address() as net.AddressInfo).port;
}

describe('startServe (real opencode serve)', () => {
  const procs: ManagedProcess[] = [];
  const ports: number[] = [];
  const spawn = (
    command: string,
    args: readonly string[],
    options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) => {
    ports.push(Number(args[args.indexOf('--port') + 1]));
    const proc = ManagedProcess.spawn('opencode', command, args, {
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    procs.push(proc);
    return proc;
  };
  afterEach(async () => {
    ports.length = 0;
    await Promise.all(procs.splice(0).map((p) => p.stop()));
  });

  it('serves on a port it picked, not 4096, and picks anew when opencode could not bind it', async () => {
    const taken = await takenPort();
    const picks = [taken];
    const serve = await startServe(spawn, sandbox(), process.env, SERVE_LISTEN_TIMEOUT_MS, async () =>
      picks.length > 0 ? (picks.shift() as number) : pickFreePort(),
    );
    expect(procs).toHaveLength(2);
    expect(ports[0]).toBe(taken);
    expect(procs[0]?.exit?.code, 'opencode could not bind the taken port').toBe(1);
    const port = ports[1];
    expect(port).not.toBe(taken);
    expect(port).not.toBe(4096);
    expect(serve.url).toBe(`http://127.0.0.1:${port}`);
    expect((await serve.client.config.get({ throwOnError: true })).response.status).toBe(200);
  });

  it(`gives up after ${SERVE_PORT_ATTEMPTS} bind failures with opencode's output`, async () => {
    const taken = await takenPort();
    await expect(
      startServe(spawn, sandbox(), process.env, SERVE_LISTEN_TIMEOUT_MS, async () => taken),
    ).rejects.toThrow(/ServeError/);
    expect(procs).toHaveLength(SERVE_PORT_ATTEMPTS);
  });
});
