/**
 * runPluginBridge (SPEC B-15, B-21): the steps a bridge inside its host's process repeats. The
 * signal modes run in a real host process (test/fixtures/plugin-host.ts) that the test signals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeEventBus } from '../src/events.js';
import { runPluginBridge } from '../src/plugin-bridge.js';
import { killAll, spawnFixture } from './rpc/fixtures/support.js';

afterEach(killAll);

const ENV = { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9', AGENTMAIL_AGENT_KEY: 'k_secret' };
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('runPluginBridge', () => {
  it("reads the settings, takes the key out of the host's environment (B-21) and feeds the host's log", async () => {
    const host = spawnFixture('../../fixtures/plugin-host.ts', ['reraise'], ENV);
    const mounted = await host.next('mounted');
    expect(mounted).toMatchObject({ key_read: 'k_secret', key_in_env: null });
    expect(await host.next('host_log')).toMatchObject({ message: 'AgentMail connected', agent: 'pi' });
  });

  it("'reraise' (opencode serve): SIGTERM stops the bridge to its end, then the signal does what it would have done (exit)", async () => {
    const host = spawnFixture('../../fixtures/plugin-host.ts', ['reraise'], ENV);
    await host.next('mounted');
    host.proc.kill('SIGTERM');
    await host.exited();
    expect(host.lines.map((l) => l.event).slice(-2)).toEqual(['stop_begun', 'stop_done']);
    expect(host.proc.signalCode, 'raised again once the bridge stopped').toBe('SIGTERM');
  });

  it("'host-continues' (DSH): the bridge's stop begins before the host's own SIGTERM listener, and the host's shutdown goes on", async () => {
    const host = spawnFixture('../../fixtures/plugin-host.ts', ['host-continues'], ENV);
    await host.next('mounted');
    host.proc.kill('SIGTERM');
    await host.exited();
    expect(host.lines.map((l) => l.event).slice(-3)).toEqual(['stop_begun', 'host_sigterm', 'stop_done']);
    expect(host.proc.exitCode, 'the host exited by itself').toBe(0);
  });

  it('a start whose host never got ready is a start_failed event, not a rejection; stop drops the signal listeners', async () => {
    const bus = new BridgeEventBus();
    const before = process.listenerCount('SIGTERM');
    const plugin = runPluginBridge({
      readConfig: () => ({
        gatewayUrl: 'http://127.0.0.1:9',
        agentName: 'pi',
        agentKey: 'k',
        hostDefault: '',
        concurrency: 1,
        turnTimeoutMs: 1_000,
        heartbeatMs: 1_000,
        locale: 'en',
        dataDir: '/nonexistent',
      }),
      log: silent,
      create: () => ({
        bridge: { emit: (e) => bus.emit(e), events: bus },
        start: async () => undefined,
        stop: async () => undefined,
      }),
      signals: 'host-continues',
    });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    const failed = bus.next('start_failed', undefined, { timeoutMs: 5_000 });
    await expect(plugin.start(() => Promise.reject(new Error('the loader failed')))).resolves.toBeUndefined();
    expect(await failed).toMatchObject({ error: 'Error: the loader failed', permanent: false });
    await plugin.stop();
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
