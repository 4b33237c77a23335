/**
 * Test support: the bundled tool and hook files (built once per test file, as a plugin ships
 * them), a real turn RPC server of the kit with handlers the test decides, and running the hook
 * as a real child process.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type TurnRpcEnv, type TurnRpcHandlers, TurnRpcServer } from '@agentmail/bridge-kit';
import { buildHostTools } from '../src/bundle.js';

/** The bundled `mcp.js` and `hook.js` in a fresh directory. */
export async function bundle(): Promise<{
  mcpJs: string;
  hookJs: string;
  dir: string;
  remove: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'am-host-tools-'));
  const files = await buildHostTools(dir, fileURLToPath(new URL('./fixtures/hook-main.ts', import.meta.url)));
  return { ...files, dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** What a hook run left. */
export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `node hook.js <args>` with `stdin` and exactly `env` (plus PATH). */
export function runHookProcess(
  hookJs: string,
  args: string[],
  stdin: string,
  env: Record<string, string>,
): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [hookJs, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** A Claude Code PreToolUse event for `Bash` running `command`. */
export function preToolUse(command: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    session_id: '11111111-2222-3333-4444-555555555555',
    transcript_path: '/tmp/x.jsonl',
    cwd: '/tmp',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command, description: 'x' },
    tool_use_id: 'toolu_1',
    prompt_id: 'p1',
    ...extra,
  });
}

/** A Claude Code hook event `name` of session `s` in `/tmp`, with `fields`. */
export function claudeEvent(name: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ session_id: 's', cwd: '/tmp', hook_event_name: name, ...fields });
}

/** A turn the test's handlers see. */
export interface FakeTurn {
  id: string;
}

/** A real turn RPC server in a temp directory with `handlers`, and one open turn's env. */
export async function rpcServer(
  handlers: Partial<TurnRpcHandlers<FakeTurn>>,
): Promise<{ env: TurnRpcEnv; server: TurnRpcServer<FakeTurn>; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'am-rpc-'));
  const fail = async (): Promise<never> => {
    throw new Error('not used by this test');
  };
  const server = new TurnRpcServer<FakeTurn>({
    dir: join(dir, 'run'),
    handlers: {
      context: async () => ({
        mailId: 'm_1',
        sessionId: 's_1',
        replyAddress: 'alice@/tmp.',
        selfAddress: 'claude-code@/tmp.s',
        permissionMode: 'workspace',
        cwd: '/tmp',
        agentName: 'claude-code',
        platform: 'claude-code',
        locale: 'en',
      }),
      callTool: fail,
      decidePermission: fail,
      askQuestion: fail,
      recordSend: async () => undefined,
      ...handlers,
    },
  });
  await server.start();
  const lease = server.openTurn({ id: 't1' });
  return {
    env: lease.env,
    server,
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
