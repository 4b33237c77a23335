/**
 * Starts `opencode serve` in a sandbox and boots the project's instance (opencode creates an
 * instance, and loads its plugins, only on the first request that names the directory).
 */
import type { BridgeEnv, ManagedProcess } from '@agentmail/testkit';
import { createOpencodeClient, type OpencodeClient } from '@opencode-ai/sdk';
import { opencodeBinary } from './opencode-bin.js';
import type { Sandbox } from './sandbox.js';

/** Time from spawn until the "listening" line, in ms; the probe saw 2.7–15 s on 2 cores. @default 60_000 */
export const SERVE_LISTEN_TIMEOUT_MS = 60_000;

/** A running `opencode serve`. */
export interface Serve {
  proc: ManagedProcess;
  /** `http://127.0.0.1:<port>` from the "listening" line (port 0 tries 4096 first). */
  url: string;
  /** v1 client bound to the sandbox's project directory (over HTTP, from the test process). */
  client: OpencodeClient;
  /** ms from spawn to the listening line, and to the end of the warm-up request. */
  timings: { listenMs: number; warmMs: number };
}

/**
 * Spawns `opencode serve --hostname 127.0.0.1 --port 0` with cwd = the project, waits for
 * `opencode server listening on http://…`, then calls `config.get` for the project directory so
 * the instance and its plugins boot.
 */
export async function startServe(
  spawn: BridgeEnv['spawn'],
  sandbox: Sandbox,
  baseEnv: NodeJS.ProcessEnv,
  listenTimeoutMs: number = SERVE_LISTEN_TIMEOUT_MS,
): Promise<Serve> {
  const started = performance.now();
  const proc = spawn(opencodeBinary(), ['serve', '--hostname', '127.0.0.1', '--port', '0'], {
    env: { ...baseEnv, ...sandbox.env },
    cwd: sandbox.projectDir,
  });
  const line = await proc.waitForLine(/opencode server listening on http:\/\/\S+/, listenTimeoutMs);
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

/**
 * An SDK client for the opencode server at `url` whose connections are never reused: each request
 * asks for `Connection: close`. Why: the global fetch keeps idle connections per origin beyond the
 * life of the process behind it, and `serve --port 0` takes port 4096 whenever it is free, so the
 * next opencode on 4096 (the next test, or the next file in the same worker) was sent its warm-up
 * over a kept-alive connection to the one before, which had died: `fetch failed` / `ECONNRESET`.
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
