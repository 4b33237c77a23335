import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOOK_READY_MARKER } from '@agentmail/host-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { pinnedClaudeBinary } from '../src/claude-bin.js';
import { readClaudeConfig } from '../src/config.js';
import { MCP_SERVER_NAME } from '../src/constants.js';
import { type InitLine, parseStreamLine, type StreamLine } from '../src/stream-json.js';
import {
  findTranscript,
  listSessions,
  readSessionModel,
  readTranscriptHead,
  TRANSCRIPT_HEAD_BYTES,
  TRANSCRIPT_TAIL_BYTES,
} from '../src/transcripts.js';
import { checkRunSetup, runArgs, runEnv } from '../src/turns.js';

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'am-claude-unit-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('run arguments and environment', () => {
  it('stream-json with hook events, the plugin, the mail tools allowed, never --bare; the prompt after --', () => {
    const args = runArgs({ prompt: '-rf everything', pluginDir: '/p', model: 'sonnet', resume: 'abc' });
    expect(args).not.toContain('--bare');
    expect(args.slice(0, 5)).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--include-hook-events',
    ]);
    expect(args).toEqual(
      expect.arrayContaining([
        '--plugin-dir',
        '/p',
        '--allowedTools',
        'mcp__plugin_agentmail_mail',
        '--model',
        'sonnet',
        '--resume',
        'abc',
      ]),
    );
    expect(args.slice(-2)).toEqual(['--', '-rf everything']);
  });

  it('the environment keeps no AGENTMAIL_* variable of the daemon, adds the turn RPC, node, locale and wait', () => {
    const env = runEnv(
      { nodeBin: '/usr/bin/node22', locale: 'zh-CN', turnTimeoutMs: 1234 },
      { AGENTMAIL_BRIDGE_SOCKET: '/run/s.sock', AGENTMAIL_TURN_TOKEN: 'id.secret' },
      {
        PATH: '/bin',
        AGENTMAIL_AGENT_KEY: 'amk_secret',
        AGENTMAIL_AGENT_SECRET: 'x',
        AGENTMAIL_GATEWAY_URL: 'http://g',
      },
    );
    expect(env).toEqual({
      PATH: '/bin',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ENABLE_TOOL_SEARCH: 'false',
      MCP_CONNECTION_NONBLOCKING: 'false',
      MCP_CONNECT_TIMEOUT_MS: '30000',
      AGENTMAIL_BRIDGE_SOCKET: '/run/s.sock',
      AGENTMAIL_TURN_TOKEN: 'id.secret',
      AGENTMAIL_NODE: '/usr/bin/node22',
      AGENTMAIL_LOCALE: 'zh-CN',
      AGENTMAIL_PERMISSION_WAIT_MS: '1234',
    });
  });
});

describe('the setup check at init (P-8)', () => {
  const init = (over: Partial<InitLine> = {}): InitLine => ({
    type: 'system',
    subtype: 'init',
    session_id: 's',
    tools: [],
    mcp_servers: [{ name: MCP_SERVER_NAME, status: 'connected' }],
    plugins: [{ name: 'agentmail', path: '/plugin' }],
    ...over,
  });
  const ready = (stderr = `${HOOK_READY_MARKER} platform=claude-code mode=workspace`): StreamLine =>
    ({
      kind: 'hook_response',
      line: {
        type: 'system',
        subtype: 'hook_response',
        hook_name: 'SessionStart:startup',
        hook_event: 'SessionStart',
        stderr,
        outcome: 'success',
      },
    }) as StreamLine;

  it('passes with our plugin, its SessionStart marker and a connected mail-tool server', () => {
    expect(checkRunSetup(init(), [ready()], '/plugin', 'en')).toBeUndefined();
  });
  it('fails without the marker, with another plugin path, or with the MCP server failed', () => {
    expect(checkRunSetup(init(), [], '/plugin', 'en')).toContain('SessionStart');
    expect(checkRunSetup(init(), [ready('some other hook')], '/plugin', 'en')).toContain('SessionStart');
    expect(
      checkRunSetup(
        init({ plugins: [{ name: 'agentmail', path: '/elsewhere' }] }),
        [ready()],
        '/plugin',
        'en',
      ),
    ).toContain('/plugin');
    expect(
      checkRunSetup(
        init({ mcp_servers: [{ name: MCP_SERVER_NAME, status: 'failed' }] }),
        [ready()],
        '/plugin',
        'en',
      ),
    ).toContain('failed');
    expect(checkRunSetup(init(), [], '/plugin', 'zh-CN')).toContain('钩子');
  });
});

describe('stream-json lines', () => {
  it('classifies init, hook responses, assistant lines and the result; ignores what is not JSON', () => {
    expect(parseStreamLine('{"type":"system","subtype":"init","session_id":"x"}')?.kind).toBe('init');
    expect(parseStreamLine('{"type":"assistant","uuid":"u","message":{"model":"m"}}')).toEqual({
      kind: 'assistant',
      uuid: 'u',
      model: 'm',
    });
    const result = parseStreamLine(
      '{"duration_ms":3,"type":"result","subtype":"success","is_error":true,"result":"API Error: 400","terminal_reason":"api_error","api_error_status":400}',
    );
    expect(result).toMatchObject({ kind: 'result', line: { is_error: true, api_error_status: 400 } });
    expect(parseStreamLine('not json')).toBeUndefined();
    expect(parseStreamLine('{"type":"user"}')).toEqual({ kind: 'other', type: 'user' });
  });
});

describe('transcripts (G-25, G-37)', () => {
  const id = '0b5f8b8e-9d2a-4c4f-8e36-0123456789ab';
  async function transcript(home: string, lines: unknown[], padding = 0): Promise<string> {
    const dir = join(home, '.claude', 'projects', '-srv-app');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${id}.jsonl`);
    await writeFile(
      file,
      `${lines.map((l) => JSON.stringify(l)).join('\n')}\n${'x'.repeat(padding)}${padding ? '\n' : ''}`,
    );
    return file;
  }

  it('reads the id, cwd and first prompt from the head only, and the model from the end', async () => {
    const home = await tmp();
    const file = await transcript(
      home,
      [
        { type: 'queue-operation', sessionId: id, content: 'Fix the build' },
        {
          type: 'user',
          sessionId: id,
          cwd: '/srv/app',
          message: { role: 'user', content: 'Fix the build please' },
        },
        { type: 'assistant', message: { model: 'claude-sonnet-x' } },
      ],
      TRANSCRIPT_TAIL_BYTES + TRANSCRIPT_HEAD_BYTES,
    );
    expect(await readTranscriptHead(file)).toEqual({
      sessionId: id,
      cwd: '/srv/app',
      title: 'Fix the build please',
    });
    // The model is read from the end: after the padding there is none.
    expect(await readSessionModel(file)).toBeUndefined();
    await writeFile(
      file,
      `${JSON.stringify({ type: 'assistant', message: { model: 'claude-sonnet-x' } })}\n${JSON.stringify({ type: 'assistant', message: { model: '<synthetic>' } })}\n`,
      { flag: 'a' },
    );
    expect(await readSessionModel(file)).toBe('claude-sonnet-x');
    expect(await findTranscript(home, id)).toBe(file);
    expect(
      await findTranscript(home, '../../etc/passwd'),
      'an id that is not a session id never names a file',
    ).toBeUndefined();
    const sessions = await listSessions(home, 10);
    expect(sessions).toEqual([
      { platform_id: id, path: '/srv/app', title: 'Fix the build please', updated_at: expect.any(String) },
    ]);
  });

  it('no projects directory is an empty list, not an error', async () => {
    expect(await listSessions(await tmp(), 10)).toEqual([]);
  });
});

describe('configuration', () => {
  it('names the variable and the fix', async () => {
    const base = { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:1', AGENTMAIL_AGENT_KEY: 'k' };
    const dir = await tmp();
    expect(() => readClaudeConfig({ ...base, AGENTMAIL_CLAUDE_PLUGIN_DIR: 'relative' }, dir)).toThrow(
      /AGENTMAIL_CLAUDE_PLUGIN_DIR must be an absolute path/,
    );
    expect(() => readClaudeConfig({ ...base, AGENTMAIL_CLAUDE_PLUGIN_DIR: dir }, dir)).toThrow(
      /not the AgentMail plugin/,
    );
    await mkdir(join(dir, '.claude-plugin'));
    await writeFile(join(dir, '.claude-plugin', 'plugin.json'), '{}');
    expect(() => readClaudeConfig({ ...base, AGENTMAIL_CLAUDE_PLUGIN_DIR: dir }, dir)).toThrow(/not built/);
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist', 'hook.js'), '');
    await writeFile(join(dir, 'dist', 'mcp.js'), '');
    const ok = readClaudeConfig(
      { ...base, AGENTMAIL_CLAUDE_PLUGIN_DIR: dir, AGENTMAIL_CLAUDE_MODELS: 'a, b' },
      dir,
    );
    expect(ok).toMatchObject({
      agentName: 'claude-code',
      models: ['a', 'b'],
      modelProvider: 'anthropic',
      // No AGENTMAIL_CLAUDE_BIN: the pinned Claude Code `pnpm install` placed (issue 20: a fresh clone had none).
      claudeBin: pinnedClaudeBinary(),
    });
    expect(ok.dataDir).toBe(join(dir, '.local/share/agentmail/claude-code'));
    expect(() =>
      readClaudeConfig({ ...base, AGENTMAIL_CLAUDE_PLUGIN_DIR: dir, AGENTMAIL_CLAUDE_PROVIDER: 'a/b' }, dir),
    ).toThrow(/AGENTMAIL_CLAUDE_PROVIDER/);
    expect(() => readClaudeConfig({ AGENTMAIL_CLAUDE_PLUGIN_DIR: dir }, dir)).toThrow(
      /AGENTMAIL_GATEWAY_URL/,
    );
  });
});

describe('the pinned Claude Code (a fresh clone runs it)', () => {
  const STUB = '#!/bin/sh\necho "Error: claude native binary not installed." >&2\nexit 1\n';
  /** A node_modules like pnpm's: the wrapper package and its platform package beside it. */
  async function layout(opts: { placed: boolean; platform: boolean }): Promise<string> {
    const root = await tmp();
    const wrapper = join(root, 'node_modules/@anthropic-ai/claude-code');
    await mkdir(join(wrapper, 'bin'), { recursive: true });
    await writeFile(
      join(wrapper, 'package.json'),
      '{"name":"@anthropic-ai/claude-code","version":"2.1.328"}',
    );
    await writeFile(join(wrapper, 'bin/claude.exe'), opts.placed ? 'x'.repeat(8192) : STUB);
    if (opts.platform) {
      const name = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
      await mkdir(join(root, 'node_modules', name), { recursive: true });
      await writeFile(
        join(root, 'node_modules', name, 'package.json'),
        `{"name":"${name}","version":"2.1.328"}`,
      );
      await writeFile(join(root, 'node_modules', name, 'claude'), 'x'.repeat(8192));
    }
    return root;
  }

  it('is the binary the postinstall placed, else the platform package, never the stub', async () => {
    const placed = await layout({ placed: true, platform: true });
    expect(pinnedClaudeBinary(join(placed, 'index.js'))).toBe(
      join(placed, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe'),
    );
    const notPlaced = await layout({ placed: false, platform: true });
    expect(pinnedClaudeBinary(join(notPlaced, 'index.js'))).toBe(
      join(notPlaced, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`),
    );
    // (No "none found" case here: pnpm's NODE_PATH lets any directory resolve the workspace's copy.)
  });

  it("this checkout's: the pinned version runs after pnpm install", () => {
    const bin = pinnedClaudeBinary();
    expect(bin).toBeDefined();
    expect(execFileSync(bin ?? 'claude', ['--version'], { encoding: 'utf8' })).toMatch(/^2\.1\.328 /);
  });
});
