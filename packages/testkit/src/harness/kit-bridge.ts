/**
 * A bridge made with the kit's own `createBridge` whose "host" is a function of the test: for
 * tests of the kit's seams (questions, the turn RPC, the web's live requests) against a real
 * Gateway, without a real host. Each turn gets a new platform session and ends with the text the
 * function returns.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttemptContext, type Bridge, type BridgeConfig, createBridge } from '@agentmail/bridge-kit';
import type { Platform } from '@agentmail/shared-policy';

/** Options of {@link scriptedKitBridge}. */
export interface ScriptedKitBridgeOptions {
  /** The Gateway to connect to (a stack's `gatewayUrl`). */
  gatewayUrl: string;
  /** The agent it runs as (a stack's `addAgent` or `agent`). */
  agent: { name: string; key: string };
  platform: Platform;
  /** Serve the turn RPC (`ctx.turn.rpcEnv`). @default false */
  rpc?: boolean;
  /** More bridge settings (turn timeout, question timeout, …). */
  config?: Partial<BridgeConfig>;
  /** The turn: do what the test needs with `ctx`, return the reply's text. */
  turn(ctx: AttemptContext): Promise<string>;
}

/**
 * A started kit bridge over `options.turn`; `close()` stops it and removes its data directory.
 * @example const { bridge, close } = await scriptedKitBridge({ gatewayUrl, agent, platform: 'opencode', turn: async (ctx) => 'done' });
 */
export async function scriptedKitBridge(
  options: ScriptedKitBridgeOptions,
): Promise<{ bridge: Bridge; close(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'am-kit-bridge-'));
  const run = Math.random().toString(36).slice(2, 8);
  let n = 0;
  const bridge = createBridge({
    platform: options.platform,
    version: 'scripted-kit-bridge/1',
    config: {
      gatewayUrl: options.gatewayUrl,
      agentName: options.agent.name,
      agentKey: options.agent.key,
      hostDefault: '',
      concurrency: 4,
      turnTimeoutMs: 60_000,
      heartbeatMs: 30_000,
      locale: 'en',
      dataDir,
      ...options.config,
    },
    ...(options.rpc ? { rpc: true } : {}),
    adapter: {
      snapshot: async () => ({ mode_enforcement: 'native' }),
      turns: {
        platform: options.platform,
        findSession: async () => undefined,
        runAttempt: async (_attempt, ctx) => {
          const id = `ks_${run}_${++n}`;
          await ctx.sessionCreated({ platformSessionId: id });
          const text = await options.turn(ctx);
          return {
            ok: true,
            finalParts: [{ type: 'text', text }],
            platformSessionId: id,
            lastEntryId: `${id}:1`,
          };
        },
      },
    },
  });
  await bridge.start();
  return {
    bridge,
    close: async () => {
      await bridge.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
