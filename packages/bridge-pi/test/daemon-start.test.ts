/**
 * How `agentmail-pi` starts (issue 10): it used to fork its launcher and probe pi before it
 * registered, so a wrong key failed only after the probe (~6 s) and a Gateway that was not up yet
 * ended the daemon; configuration errors were pino JSON only. Now it registers first: a refusal
 * is an exit 2 before pi is loaded, a Gateway that is not up is waited for with backoff, and on a
 * terminal each of those is a plain line with its fix.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { AGENT_KEY_CREDENTIAL } from '@agentmail/bridge-kit';
import { type BridgeEnv, ManagedProcess, runOnTerminal, type TerminalRun } from '@agentmail/testkit';
import { startConformanceStack } from '@agentmail/testkit/conformance';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildBridge } from '../harness/build.js';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

afterAll(removeBundle);

let daemonJs = '';
let removeBuild: () => Promise<void> = async () => {};
beforeAll(async () => {
  const built = await buildBridge();
  daemonJs = built.daemonJs;
  removeBuild = built.remove;
});
afterAll(() => removeBuild());

/** The daemon as the harness starts it, as a ManagedProcess (its typed events, its exit). */
async function startDaemon(env: BridgeEnv): Promise<ManagedProcess> {
  const started = await piAdapter.start(env);
  return started instanceof ManagedProcess ? started : ManagedProcess.adopt('bridge-pi', started);
}

/** Time a daemon that fails at once may take to exit on a loaded machine (one Node start), in ms. */
const EXIT_MS = 60_000;

/** Run the daemon under a real pseudo-terminal, so its stderr is a TTY; resolves with all it printed. */
function onTerminal(env: NodeJS.ProcessEnv): Promise<TerminalRun> {
  return runOnTerminal(process.execPath, [daemonJs], env, EXIT_MS);
}

describe('agentmail-pi start', () => {
  it('regression: a wrong key is refused at once, before pi is loaded: exit 2, no launcher, no probe', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const proc = await startDaemon(stack.bridgeEnv(piAdapter, { AGENTMAIL_AGENT_KEY: 'amk_wrong' }));
    const started = performance.now();
    const exit = await proc.exited;
    console.info(`agentmail-pi with a wrong key exited after ${Math.round(performance.now() - started)} ms`);
    expect(exit.code, proc.tail()).toBe(2);
    expect(proc.bridgeEvents('start_failed').map((e) => e.permanent)).toEqual([true]);
    expect(proc.bridgeEvents('launcher_forked'), 'pi was never loaded').toEqual([]);
    expect(proc.bridgeEvents('probe_done')).toEqual([]);

    // The same on a terminal: one plain line with the Gateway's words and the fix.
    const tty = await onTerminal(stack.bridgeEnv(piAdapter, { AGENTMAIL_AGENT_KEY: 'amk_wrong' }).processEnv);
    expect(tty.code).toBe(2);
    expect(tty.output).toContain(
      `agentmail-pi: the Gateway at ${stack.bridgeGatewayUrl} refused agent "${stack.agent.name}": unknown agent key (HTTP 401)\n  fix: check AGENTMAIL_AGENT_KEY\n`,
    );
  });

  it("the key from systemd's credential (the units' LoadCredential=): no key in the environment, the daemon starts (SPEC B-21)", async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const credentials = join(stack.bridgeStateDir, 'credentials');
    mkdirSync(credentials, { recursive: true });
    writeFileSync(join(credentials, AGENT_KEY_CREDENTIAL), `${stack.agent.key}\n`, { mode: 0o600 });
    const env = stack.bridgeEnv(piAdapter, { CREDENTIALS_DIRECTORY: credentials });
    delete env.processEnv.AGENTMAIL_AGENT_KEY;
    const proc = await startDaemon(env);
    onTestFinished(async () => {
      await proc.stop();
    });
    const ready = await proc.waitForEvent('ready', EXIT_MS);
    expect(ready.agent).toBe(stack.agent.name);
  });

  it('regression: a configuration error on a terminal is a plain line, not only pino JSON', async () => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('AGENTMAIL_') && !k.startsWith('PI_')) env[k] = v;
    const tty = await onTerminal({ ...env, AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9' });
    expect(tty.code).toBe(2);
    expect(tty.output).toMatch(
      /^agentmail-pi: bad configuration: AGENTMAIL_AGENT_KEY is not set: create one with `agentmail agent key pi`$/m,
    );
  });

  it('regression: a Gateway that is not up yet is waited for with backoff; the daemon connects once it is', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    // A port nothing listens on yet; later a plain TCP forwarder to the Gateway opens on it.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as { port: number }).port;
    await new Promise((done) => probe.close(done));
    const proc = await startDaemon(
      stack.bridgeEnv(piAdapter, { AGENTMAIL_GATEWAY_URL: `http://127.0.0.1:${port}` }),
    );
    const waiting = await proc.waitForEvent('start_failed', EXIT_MS);
    expect(waiting).toMatchObject({ permanent: false });
    expect(proc.exit, 'still running, waiting for the Gateway').toBeUndefined();
    expect(proc.bridgeEvents('launcher_forked'), 'pi is not loaded while the Gateway is away').toEqual([]);

    const target = new URL(stack.gatewayUrl);
    const forwarder: Server = createServer((socket) => {
      const upstream = connect(Number(target.port), target.hostname);
      socket.pipe(upstream).pipe(socket);
      const end = (): void => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    });
    await new Promise<void>((done) => forwarder.listen(port, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => forwarder.close(() => done())));
    await proc.waitForEvent('ready', piAdapter.readyTimeoutMs ?? 90_000);
    expect(proc.bridgeEvents('registered')).toHaveLength(1);
    await proc.stop();
  });
});
