import type { PermissionQuery } from '@agentmail/bridge-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_READY_MARKER, HOOK_SELF_CHECK_ENV, PERMISSION_WAIT_ENV } from '../src/hook-runner.js';
import { bundle, claudeEvent, preToolUse, rpcServer, runHookProcess } from './support.js';

// The hook as Claude Code runs it: the bundled hook.js as a child process, stdin the host's JSON,
// the decision on stdout; in mail-driven runs against a real turn RPC server of the kit.

let files: Awaited<ReturnType<typeof bundle>>;
beforeAll(async () => {
  files = await bundle();
}, 60_000);
afterAll(() => files?.remove());

const decision = (stdout: string): unknown => (stdout.trim() ? JSON.parse(stdout) : undefined);

describe("a person's own session (no bridge): Claude Code keeps its own prompt (P-5)", () => {
  it('PreToolUse and PermissionRequest give no decision', async () => {
    const pre = await runHookProcess(files.hookJs, ['claude-code'], preToolUse('rm -rf x'), {});
    expect(pre).toMatchObject({ code: 0, stdout: '' });
    const perm = await runHookProcess(
      files.hookJs,
      ['claude-code'],
      claudeEvent('PermissionRequest', { tool_name: 'WebFetch', tool_input: {} }),
      {},
    );
    expect(perm).toMatchObject({ code: 0, stdout: '' });
  });

  it('bad input yields too (nothing to fail closed for), naming the field', async () => {
    const run = await runHookProcess(files.hookJs, ['claude-code'], preToolUse('ls', { tool_name: 7 }), {});
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain('"tool_name"');
  });

  it('SessionStart writes the ready marker only for a self-check, and never to stdout', async () => {
    const start = claudeEvent('SessionStart', { source: 'startup' });
    expect(await runHookProcess(files.hookJs, ['claude-code'], start, {})).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
    const check = await runHookProcess(files.hookJs, ['claude-code'], start, { [HOOK_SELF_CHECK_ENV]: '1' });
    expect(check).toMatchObject({ code: 0, stdout: '' });
    expect(check.stderr).toContain(HOOK_READY_MARKER);
  });
});

describe('a mail-driven run: the bridge decides, every failure denies (P-1..P-7, B-21)', () => {
  it("an allow from the bridge is Claude Code's allow; a denial carries the bridge's text", async () => {
    const seen: PermissionQuery[] = [];
    const answers = [
      { allow: true } as const,
      { allow: false, reason: 'Denied by alice: use a copy (note)' } as const,
    ];
    const rpc = await rpcServer({
      decidePermission: async (_t, q) => {
        seen.push(q);
        return answers[seen.length - 1] ?? { allow: false, reason: 'unexpected' };
      },
    });
    try {
      const allowed = await runHookProcess(files.hookJs, ['claude-code'], preToolUse('make'), { ...rpc.env });
      expect(decision(allowed.stdout)).toEqual({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
      });
      const denied = await runHookProcess(files.hookJs, ['claude-code'], preToolUse('make'), { ...rpc.env });
      expect(decision(denied.stdout)).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'Denied by alice: use a copy (note)',
        },
      });
      expect(seen[0]).toEqual({
        toolName: 'Bash',
        input: { command: 'make', description: 'x' },
        toolCallId: 'toolu_1',
        platformSessionId: '11111111-2222-3333-4444-555555555555',
        cwd: '/tmp',
      });
    } finally {
      await rpc.close();
    }
  });

  it("PermissionRequest (Claude Code's own ask) is decided as a guarded call, with a stable call id", async () => {
    const seen: PermissionQuery[] = [];
    const rpc = await rpcServer({
      decidePermission: async (_t, q) => {
        seen.push(q);
        return { allow: false, reason: 'no' };
      },
    });
    try {
      const event = claudeEvent('PermissionRequest', {
        tool_name: 'WebFetch',
        tool_input: { url: 'https://example.org' },
        prompt_id: 'p9',
      });
      const run = await runHookProcess(files.hookJs, ['claude-code'], event, { ...rpc.env });
      expect(decision(run.stdout)).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: { behavior: 'deny', message: 'no' },
        },
      });
      await runHookProcess(files.hookJs, ['claude-code'], event, { ...rpc.env });
      expect(seen[0]).toMatchObject({ toolName: 'WebFetch', forceGuarded: true });
      expect(seen[0]?.toolCallId).toMatch(/^permission-request:p9:[0-9a-f]{16}$/);
      expect(seen[1]?.toolCallId, 'the same call in the same prompt keeps its id').toBe(seen[0]?.toolCallId);
    } finally {
      await rpc.close();
    }
  });

  it('a bridge that is gone denies (fail closed), naming why', async () => {
    const rpc = await rpcServer({});
    const env = { ...rpc.env };
    await rpc.close();
    const run = await runHookProcess(files.hookJs, ['claude-code'], preToolUse('make'), env);
    const out = decision(run.stdout) as {
      hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string };
    };
    expect(run.code).toBe(0);
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(out.hookSpecificOutput.permissionDecisionReason).toMatch(/could not be reached/);
  });

  it('the permission wait budget ends in a denial before the host would kill the hook', async () => {
    const rpc = await rpcServer({ decidePermission: () => new Promise(() => undefined) });
    try {
      const run = await runHookProcess(files.hookJs, ['claude-code'], preToolUse('make'), {
        ...rpc.env,
        [PERMISSION_WAIT_ENV]: '300',
      });
      const out = decision(run.stdout) as { hookSpecificOutput: { permissionDecision: string } };
      expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    } finally {
      await rpc.close();
    }
  });

  it('bad input from the host denies with exit 2 (no JSON answer fits an unknown event)', async () => {
    const rpc = await rpcServer({});
    try {
      for (const stdin of [
        'not json',
        preToolUse('ls', { tool_use_id: undefined }),
        '{"hook_event_name":"Stop","session_id":"s"}',
      ]) {
        const run = await runHookProcess(files.hookJs, ['claude-code'], stdin, { ...rpc.env });
        expect(run.code, stdin).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/^Denied: /);
      }
    } finally {
      await rpc.close();
    }
  });

  it('SessionStart proves the hook reaches the bridge (P-8): the marker names the mode', async () => {
    const rpc = await rpcServer({});
    try {
      const start = claudeEvent('SessionStart', { source: 'resume' });
      const run = await runHookProcess(files.hookJs, ['claude-code'], start, { ...rpc.env });
      expect(run).toMatchObject({ code: 0, stdout: '' });
      expect(run.stderr).toContain(`${HOOK_READY_MARKER} platform=claude-code mode=workspace`);
    } finally {
      await rpc.close();
    }
  });

  it('an unknown host id blocks (exit 2) and lists the hosts', async () => {
    const run = await runHookProcess(files.hookJs, ['claud'], preToolUse('ls'), {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('claude-code');
  });
});

describe('the hook bundle', () => {
  it('is small and does not load the MCP SDK or zod (its start is on every tool call)', async () => {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(files.hookJs, 'utf8');
    expect(text).not.toMatch(/modelcontextprotocol|ZodType|zod\/v4/);
    expect(text.length).toBeLessThan(60_000);
  });
});
