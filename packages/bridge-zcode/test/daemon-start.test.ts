/**
 * How `agentmail-zcode` starts (host-tools' runDriverMain, shared with agentmail-claude), as a new
 * user meets it: a key the Gateway refuses is a configuration error (exit 2, as agentmail-pi); on a
 * terminal every failure to start is also one plain line with its fix (the same words as
 * agentmail-pi, from the kit's terminal lines); a failed setup check is logged at warn.
 */
import { join } from 'node:path';
import { cleanEnv, ManagedProcess, runOnTerminal, type TerminalRun } from '@agentmail/testkit';
import { startConformanceStack } from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  bundled,
  createZcodeAdapter,
  daemonEnv,
  removeBundle,
  zcodeAdapter,
} from '../harness/zcode-adapter.js';

afterAll(removeBundle);

/** Time a daemon that fails at once may take to exit on a loaded machine (one Node start), in ms. */
const EXIT_MS = 60_000;
/** pino's numeric level of `warn`. */
const PINO_WARN = 40;

/** The `event` field of a JSON log line (`[stderr] ` prefixed by ManagedProcess), or undefined. */
function logEvent(line: string): unknown {
  try {
    return (JSON.parse(line.replace(/^\[stderr\] /, '')) as { event?: unknown }).event;
  } catch {
    return undefined;
  }
}

/** The daemon under a real pseudo-terminal (its stderr is a TTY): its exit code and all it printed. */
async function onTerminal(env: NodeJS.ProcessEnv): Promise<TerminalRun> {
  return runOnTerminal(process.execPath, [(await bundled()).daemonJs], env, EXIT_MS);
}

describe('agentmail-zcode start', () => {
  it('regression: a key the Gateway refuses exits 2 (as agentmail-pi), and says so with the fix on a terminal', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(zcodeAdapter, { signal });
    onTestFinished(() => stack.close());
    const env = await daemonEnv(stack.bridgeEnv(zcodeAdapter, { AGENTMAIL_AGENT_KEY: 'amk_wrong' }));
    const proc = ManagedProcess.spawn('bridge-zcode', process.execPath, [(await bundled()).daemonJs], {
      env,
    });
    onTestFinished(async () => {
      await proc.stop();
    });
    const exit = await proc.exited;
    expect(exit.code, proc.tail()).toBe(2);
    expect(proc.bridgeEvents('start_failed').map((e) => e.permanent)).toEqual([true]);

    const tty = await onTerminal(env);
    expect(tty.code, tty.output).toBe(2);
    expect(tty.output).toContain(
      `agentmail-zcode: the Gateway at ${stack.bridgeGatewayUrl} refused agent "${stack.agent.name}": unknown agent key (HTTP 401)\n  fix: check AGENTMAIL_AGENT_KEY\n`,
    );
  });

  it('regression: a missing AGENTMAIL_GATEWAY_URL on a terminal is a plain line saying it is not set and how to set it', async () => {
    const tty = await onTerminal(cleanEnv({ AGENTMAIL_AGENT_KEY: 'amk_x' }));
    expect(tty.code, tty.output).toBe(2);
    expect(tty.output).toMatch(
      /^agentmail-zcode: bad configuration: AGENTMAIL_GATEWAY_URL is not set: set it to the Gateway's base URL, e\.g\. `export AGENTMAIL_GATEWAY_URL=http:\/\/127\.0\.0\.1:8787`$/m,
    );
    expect(tty.output).not.toContain('(got "")');
  });

  it('regression: a failed setup check is logged at warn (ok: false, the reason), after enforcement', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(zcodeAdapter, { signal });
    onTestFinished(() => stack.close());
    const missing = join(stack.bridgeStateDir, 'no-such-zcode');
    const adapter = createZcodeAdapter({ env: { AGENTMAIL_ZCODE_BIN: missing } });
    const proc = await stack.startBridge(adapter);
    onTestFinished(async () => {
      await stack.stopBridge();
    });
    const check = await proc.waitForEvent('self_check', EXIT_MS);
    expect(check).toMatchObject({ ok: false, level: PINO_WARN });
    expect(String(check.reason)).toContain('AGENTMAIL_ZCODE_BIN');
    // The start's events in their logged order, as the README lists them.
    const order = proc
      .lines()
      .map((line) => logEvent(line))
      .filter((type) => type === 'self_check' || type === 'enforcement');
    expect(order).toEqual(['enforcement', 'self_check']);
  });

  it('regression: after a SIGKILL the next daemon replaces the stale turn-RPC socket without an rpc_problem warning', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(zcodeAdapter, { signal });
    onTestFinished(() => stack.close());
    const first = await stack.startBridge(zcodeAdapter);
    first.kill(); // SIGKILL: the socket file run/bridge.sock stays behind
    await first.exited;
    const second = await stack.startBridge(zcodeAdapter);
    onTestFinished(async () => {
      await stack.stopBridge();
    });
    await second.waitForEvent('ready', EXIT_MS);
    expect(second.bridgeEvents('rpc_problem')).toEqual([]);
    // The turn RPC serves: a mail's turn runs and is relayed (its hooks and mail tools use it).
    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: 'after kill', body: 'hi' });
    await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name, timeoutMs: EXIT_MS });
    expect(second.bridgeEvents('rpc_problem')).toEqual([]);
  });
});
