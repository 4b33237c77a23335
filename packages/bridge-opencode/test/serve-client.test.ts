/**
 * The harness's opencode client never sends a request over a connection kept from an earlier
 * server on the same port. Seen in CI: `opencode serve --port 0` takes 4096 whenever it is free;
 * an opencode shutting down has stopped listening but not yet closed its kept-alive connections,
 * the next one binds 4096, and its warm-up went to the dying one: `fetch failed` / ECONNRESET.
 * Two plain TCP servers play the two opencodes, so the test needs no binary.
 */
import { once } from 'node:events';
import net from 'node:net';
import { ManagedProcess } from '@agentmail/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../harness/sandbox.js';
import { opencodeClient, SERVE_PORT_ATTEMPTS, startServe } from '../harness/serve.js';

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

/** Plays `opencode serve --port <p>`: prints opencode's listening line for that port and answers JSON. */
const FAKE_SERVE = `
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
require('node:http').createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ port })); }).listen(port, '127.0.0.1', () =>
  console.log('opencode server listening on http://127.0.0.1:' + port));
`;
/** Plays opencode failing to bind its port (exit 1, `ServeError`). */
const FAKE_BIND_FAILURE = "console.error('Error: Unexpected error\\n\\nServeError'); process.exit(1)";

describe('startServe', () => {
  it('serves on a port it picked (never 4096 by default) and picks anew when opencode could not bind it', async () => {
    const calls: string[][] = [];
    const procs: ManagedProcess[] = [];
    const spawn = (_command: string, args: readonly string[]): ManagedProcess => {
      calls.push([...args]);
      const script = calls.length === 1 ? FAKE_BIND_FAILURE : FAKE_SERVE;
      const proc = ManagedProcess.spawn('fake-opencode', process.execPath, ['-e', script, '--', ...args], {
        env: process.env,
      });
      procs.push(proc);
      return proc;
    };
    const sandbox = { projectDir: process.cwd(), env: {} } as unknown as Sandbox;
    try {
      const serve = await startServe(spawn, sandbox, process.env);
      expect(calls).toHaveLength(2);
      const ports = calls.map((args) => Number(args[args.indexOf('--port') + 1]));
      for (const port of ports) expect(port).toBeGreaterThan(0);
      expect(ports).not.toContain(4096);
      expect(serve.url).toBe(`http://127.0.0.1:${ports[1]}`);
      expect((await serve.client.config.get({ throwOnError: true })).data).toEqual({ port: ports[1] });
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
    }
  });

  it(`gives up after ${SERVE_PORT_ATTEMPTS} bind failures with opencode's output`, async () => {
    const procs: ManagedProcess[] = [];
    const spawn = (_command: string, args: readonly string[]): ManagedProcess => {
      const proc = ManagedProcess.spawn(
        'fake-opencode',
        process.execPath,
        ['-e', FAKE_BIND_FAILURE, '--', ...args],
        {
          env: process.env,
        },
      );
      procs.push(proc);
      return proc;
    };
    const sandbox = { projectDir: process.cwd(), env: {} } as unknown as Sandbox;
    await expect(startServe(spawn, sandbox, process.env)).rejects.toThrow(/ServeError/);
    expect(procs).toHaveLength(SERVE_PORT_ATTEMPTS);
  });
});
