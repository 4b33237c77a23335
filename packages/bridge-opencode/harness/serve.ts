/**
 * Starts `opencode serve` in a sandbox and boots the project's instance (opencode creates an
 * instance, and loads its plugins, only on the first request that names the directory).
 */
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import type { BridgeEnv, ManagedProcess } from '@agentmail/testkit';
import { createOpencodeClient, type OpencodeClient } from '@opencode-ai/sdk';
import { opencodeBinary } from './opencode-bin.js';
import type { Sandbox } from './sandbox.js';

/** Time from spawn until the "listening" line, in ms; the probe saw 2.7–15 s on 2 cores. @default 60_000 */
export const SERVE_LISTEN_TIMEOUT_MS = 60_000;

/** A running `opencode serve`. */
export interface Serve {
  proc: ManagedProcess;
  /** `http://127.0.0.1:<port>` from the "listening" line. */
  url: string;
  /** v1 client bound to the sandbox's project directory (over HTTP, from the test process). */
  client: OpencodeClient;
  /** ms from spawn to the listening line, and to the end of the warm-up request. */
  timings: { listenMs: number; warmMs: number };
}

/** Ports {@link startServe} tries when the one it picked was taken before opencode bound it. @default 3 */
export const SERVE_PORT_ATTEMPTS = 3;

/**
 * A port the kernel just handed out as free on 127.0.0.1 (listen on port 0, read, close). Why not
 * `serve --port 0`: opencode then takes 4096 whenever it is free, so every opencode of a test run
 * that starts after another ended serves on the same port, and a request meant for the new one can
 * meet what is left of the old one (seen in CI, more often with more test files at a time: the
 * warm-up request reset, `ECONNRESET`, right after the new opencode printed its listening line).
 * An ephemeral port is picked at random and not soon handed out again.
 */
export async function pickFreePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Spawns `opencode serve --hostname 127.0.0.1 --port <a free port>` with cwd = the project, waits
 * for `opencode server listening on http://…`, then calls `config.get` for the project directory
 * so the instance and its plugins boot. A port taken between the pick and opencode's bind (opencode
 * exits with `ServeError`) is picked anew, at most {@link SERVE_PORT_ATTEMPTS} times.
 * @param pickPort where each attempt's port comes from (tests hand it a taken one). @default pickFreePort
 */
export async function startServe(
  spawn: BridgeEnv['spawn'],
  sandbox: Sandbox,
  baseEnv: NodeJS.ProcessEnv,
  listenTimeoutMs: number = SERVE_LISTEN_TIMEOUT_MS,
  pickPort: () => Promise<number> = pickFreePort,
): Promise<Serve> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort();
    const proc = spawn(opencodeBinary(), ['serve', '--hostname', '127.0.0.1', '--port', String(port)], {
      env: { ...baseEnv, ...sandbox.env },
      cwd: sandbox.projectDir,
    });
    let line: string;
    try {
      line = await proc.waitForLine(/opencode server listening on http:\/\/\S+/, listenTimeoutMs);
    } catch (error) {
      // Exited (not timed out) with opencode's bind failure: the port went to another process.
      if (attempt < SERVE_PORT_ATTEMPTS && proc.exit?.code === 1 && /ServeError/.test(proc.tail())) continue;
      throw error;
    }
    const listenMs = performance.now() - started;
    const url = /(http:\/\/\S+)/.exec(line)?.[1];
    if (url === undefined) throw new Error(`opencode serve: no URL in ${JSON.stringify(line)}`);
    const client = opencodeClient(url, sandbox.projectDir);
    try {
      await client.config.get({ throwOnError: true });
    } catch (error) {
      throw new Error(
        `opencode serve (pid ${proc.pid}, ${proc.exit === undefined ? 'running' : `exited ${JSON.stringify(proc.exit)}`}) did not answer its warm-up request at ${url}: ${String(error)}; its output:\n${proc.tail()}`,
        { cause: error },
      );
    }
    return { proc, url, client, timings: { listenMs, warmMs: performance.now() - started } };
  }
}

/**
 * An SDK client for the opencode server at `url` whose connections are never reused: each request
 * asks for `Connection: close`. Why: the global fetch keeps idle connections per origin beyond the
 * life of the process behind it, and a port can serve several opencodes in one run (with
 * `serve --port 0`, every one got 4096): the next opencode on a port was sent its warm-up over a
 * kept-alive connection to the one before, which had died: `fetch failed` / `ECONNRESET`.
 */
export function opencodeClient(url: string, directory: string): OpencodeClient {
  return createOpencodeClient({
    baseUrl: url,
    directory,
    fetch: (request) => {
      const headers = new Headers(request.headers);
      headers.set('connection', 'close');
      return fetch(new Request(request, { headers }));
    },
  });
}
