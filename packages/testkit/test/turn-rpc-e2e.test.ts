import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Bridge, type BridgeConfig, createBridge, type TurnRpcEnv } from '@agentmail/bridge-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../src/index.js';

// The out-of-process seam end to end (SPEC B-21, P-6, P-7): a real Gateway and person, a bridge
// made with createBridge({ rpc: true }), and a host whose guarded-call hook is a separate child
// process reaching the bridge only through the turn's RPC token — as Claude Code's and ZCode's
// PreToolUse hooks do.

const HOOK = fileURLToPath(new URL('./fixtures/hook-process.ts', import.meta.url));
const STEP_MS = 30_000;

interface HookLine {
  event: string;
  outcome?: { allow: boolean; reason?: string; code?: string };
  env?: Record<string, string>;
}

/** Run the hook process with the turn's RPC env (no agent key in it); resolves with its lines. */
function runHook(env: TurnRpcEnv, args: string[], onAsking?: () => void): Promise<HookLine[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@agentmail/source', '--import', 'tsx', HOOK, ...args],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        // A host gives its hooks its own environment: here nothing of ours but the RPC variables.
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        cwd: fileURLToPath(new URL('..', import.meta.url)),
      },
    );
    const lines: HookLine[] = [];
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text) as HookLine;
      lines.push(line);
      if (line.event === 'asking') onAsking?.();
    });
    child.once('error', reject);
    child.once('exit', () => resolve(lines));
  });
}

let stack: Stack;
let dataDir: string;
beforeAll(async () => {
  stack = await startStack({ agentName: 'hooky', platform: 'opencode' });
  dataDir = await mkdtemp(join(tmpdir(), 'am-rpc-e2e-'));
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A bridge whose every attempt runs the hook process for `command` and answers with its outcome. */
function hookBridge(forgeToken = false): { bridge: Bridge; outcomes: HookLine[]; asking: Promise<void> } {
  const config: BridgeConfig = {
    gatewayUrl: stack.gatewayUrl,
    agentName: stack.agent.name,
    agentKey: stack.agent.key,
    hostDefault: '',
    concurrency: 2,
    turnTimeoutMs: 60_000,
    heartbeatMs: 30_000,
    locale: 'en',
    dataDir,
  };
  const outcomes: HookLine[] = [];
  let asked!: () => void;
  const asking = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let n = 0;
  const run = Math.random().toString(36).slice(2, 8);
  const bridge = createBridge({
    platform: 'opencode',
    version: 'rpc-e2e/1',
    config,
    rpc: true,
    adapter: {
      snapshot: async () => ({ mode_enforcement: 'native' }),
      turns: {
        platform: 'opencode',
        findSession: async () => undefined,
        runAttempt: async (_attempt, ctx) => {
          const id = `hs_${run}_${++n}`;
          await ctx.sessionCreated({ platformSessionId: id });
          const env = ctx.turn.rpcEnv;
          if (!env) return { ok: false, cause: 'no turn RPC env' };
          const token = forgeToken ? `${env.AGENTMAIL_TURN_TOKEN.split('.')[0]}.forged` : undefined;
          const lines = await runHook(env, ['make', ...(token ? [token] : [])], asked);
          const outcome = lines.find((l) => l.event === 'outcome');
          if (outcome) outcomes.push(outcome);
          return {
            ok: true,
            finalParts: [{ type: 'text', text: `hook outcome: ${JSON.stringify(outcome?.outcome)}` }],
            platformSessionId: id,
            lastEntryId: `${id}:1`,
          };
        },
      },
    },
  });
  return { bridge, outcomes, asking };
}

describe('turn RPC end to end (B-21, P-6, P-7)', () => {
  it('a hook process asks a permission, the person approves by mail, the hook is allowed; the key is not in its env', async () => {
    const { bridge, outcomes } = hookBridge();
    await bridge.start();
    try {
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: 'Build it',
        body: 'Run make.',
      });
      const request = await stack.awaitPermission({ timeoutMs: STEP_MS });
      expect(request.question).toContain('bash');
      await stack.decide(request.id, 'approve');
      const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: STEP_MS });
      expect(reply.body).toContain('"allow":true');
      expect(outcomes[0]?.outcome).toEqual({ allow: true });
      expect(
        Object.values(outcomes[0]?.env ?? {}),
        'the agent key never reaches the host process',
      ).not.toContain(stack.agent.key);
    } finally {
      await bridge.stop();
    }
  }, 90_000);

  it('the bridge shuts down while the hook waits: the hook is denied (P-7)', async () => {
    const { bridge, outcomes, asking } = hookBridge();
    await bridge.start();
    await stack.sendAs(undefined, stack.taskAddress(), { subject: 'Build again', body: 'Run make.' });
    await asking;
    await stack.awaitPermission({ timeoutMs: STEP_MS });
    const interrupted = bridge.events.next('turn_interrupted', undefined, { timeoutMs: STEP_MS });
    await bridge.stop();
    await interrupted;
    // The hook process ended with the shutdown denial; stop() waited for the turn.
    expect(outcomes[0]?.outcome?.allow).toBe(false);
    expect(outcomes[0]?.outcome?.reason).toMatch(/shutting down/i);
  }, 90_000);

  it('a forged token is refused: the hook fails closed without reaching a handler', async () => {
    const { bridge, outcomes } = hookBridge(true);
    await bridge.start();
    try {
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: 'Forged',
        body: 'Run make.',
      });
      await stack.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: STEP_MS });
      expect(outcomes[0]?.outcome).toMatchObject({ allow: false, code: 'AM_RPC_TOKEN_INVALID' });
    } finally {
      await bridge.stop();
    }
  }, 90_000);
});
