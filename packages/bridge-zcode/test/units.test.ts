import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERMISSION_WAIT_ENV } from '@agentmail/host-tools';
import { isGuardedTool } from '@agentmail/shared-policy';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultPluginDir, readZcodeConfig } from '../src/config.js';
import { MAIL_TOOL_PREFIX, PLUGIN_ID } from '../src/constants.js';
import { GUARDED_TOOLS } from '../src/host.js';
import { checkPluginEntry, gatedToolNames, hookMatcherCovers } from '../src/self-check.js';
import { parseStreamLine } from '../src/stream-json.js';
import { runArgs, runEnv, zcodeModeFor } from '../src/turns.js';
import { readZcodeModels } from '../src/zcode-home.js';

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'am-zcode-unit-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('mode map (SPEC P-1, P-2, §7 ZCode)', () => {
  it('only `full` gives yolo; `FULL`, unknown and missing modes are workspace → build', () => {
    expect(zcodeModeFor('full', 'build')).toEqual({ zcodeMode: 'yolo', mappedDown: false });
    expect(zcodeModeFor('plan', 'build')).toEqual({ zcodeMode: 'plan', mappedDown: false });
    for (const m of ['workspace', 'FULL', ' full', 'yolo', 'Full', null, undefined, 42, ''])
      expect(zcodeModeFor(m, 'build'), String(m)).toEqual({ zcodeMode: 'build', mappedDown: false });
    for (const m of ['FULL', 'yolo', 'plan ', undefined])
      expect(zcodeModeFor(m, 'plan').zcodeMode, `fallback: ${String(m)}`).not.toBe('yolo');
  });

  it('the plan fallback maps workspace down, and says so', () => {
    expect(zcodeModeFor('workspace', 'plan')).toEqual({ zcodeMode: 'plan', mappedDown: true });
    expect(zcodeModeFor('full', 'plan')).toEqual({ zcodeMode: 'yolo', mappedDown: false });
  });
});

describe('run arguments and environment', () => {
  it('always --mode; only flags the pinned CLI has; the prompt as --prompt=…', () => {
    const args = runArgs({ prompt: '-rf everything', cwd: '/w', mode: 'build', resume: 'sess_1' });
    expect(args).toEqual([
      '--prompt=-rf everything',
      '--output-format',
      'stream-json',
      '--no-color',
      '--cwd',
      '/w',
      '--mode',
      'build',
      '--resume',
      'sess_1',
    ]);
    for (const flag of ['--model', '--max-turns', '--settings', '--permission-mode', '--allowed-tools'])
      expect(args).not.toContain(flag);
    expect(runArgs({ prompt: 'x', cwd: '/w', mode: 'plan' })).toContain('--mode');
  });

  it('the run env has the turn token, the model and the plugin node, never an AGENTMAIL_ key', () => {
    const env = runEnv(
      { nodeBin: '/opt/node/bin/node', locale: 'zh-CN', turnTimeoutMs: 1234 },
      { AGENTMAIL_BRIDGE_SOCKET: '/run/s.sock', AGENTMAIL_TURN_TOKEN: 't' },
      'scripted/m1',
      { PATH: '/usr/bin', AGENTMAIL_AGENT_KEY: 'secret', AGENTMAIL_GATEWAY_URL: 'http://x', HOME: '/h' },
    );
    expect(env).toMatchObject({
      AGENTMAIL_BRIDGE_SOCKET: '/run/s.sock',
      AGENTMAIL_TURN_TOKEN: 't',
      ZCODE_MODEL: 'scripted/m1',
      AGENTMAIL_LOCALE: 'zh-CN',
      [PERMISSION_WAIT_ENV]: '1234',
      PATH: '/opt/node/bin:/usr/bin',
      HOME: '/h',
    });
    expect(env.AGENTMAIL_AGENT_KEY).toBeUndefined();
    expect(env.AGENTMAIL_GATEWAY_URL).toBeUndefined();
    expect(
      runEnv({ nodeBin: '/n/node', locale: 'en', turnTimeoutMs: 1 }, undefined, undefined, {}).ZCODE_MODEL,
    ).toBeUndefined();
  });
});

describe('stream-json lines (B-7)', () => {
  it('classifies the outcome events and the result line', () => {
    const env = { eventId: 'e', sessionId: 'sess_a', seq: 1, timestamp: 1, traceId: 't' };
    expect(
      parseStreamLine(
        JSON.stringify({
          ...env,
          type: 'turn.completed',
          payload: { response: 'hi', resultType: 'success' },
        }),
      ),
    ).toEqual({
      kind: 'turn_completed',
      sessionId: 'sess_a',
      response: 'hi',
      resultType: 'success',
    });
    expect(
      parseStreamLine(
        JSON.stringify({ ...env, type: 'turn.failed', payload: { error: { message: 'boom', code: 'x' } } }),
      ),
    ).toEqual({
      kind: 'turn_failed',
      sessionId: 'sess_a',
      message: 'boom',
      code: 'x',
    });
    expect(
      parseStreamLine(JSON.stringify({ type: 'result', sessionId: 'sess_a', response: 'done' })),
    ).toMatchObject({
      kind: 'result',
      line: { sessionId: 'sess_a', response: 'done' },
    });
    expect(
      parseStreamLine(
        JSON.stringify({
          ...env,
          type: 'tool.updated',
          payload: { kind: 'error', toolName: 'Bash', error: { message: 'no' } },
        }),
      ),
    ).toEqual({
      kind: 'step',
      sessionId: 'sess_a',
      type: 'tool.updated',
      stepKind: 'error',
      tool: 'Bash',
      detail: 'no',
    });
    expect(parseStreamLine('not json')).toBeUndefined();
    expect(parseStreamLine('[1]')).toBeUndefined();
    expect(
      parseStreamLine(JSON.stringify({ ...env, type: 'model.streaming', payload: { kind: 'text_delta' } })),
    ).toMatchObject({ kind: 'other' });
  });
});

describe('the plugin directory', () => {
  const plugin = defaultPluginDir();
  const hooks = JSON.parse(readFileSync(join(plugin, 'hooks', 'hooks.json'), 'utf8')) as {
    hooks: Record<
      string,
      Array<{
        matcher?: string;
        hooks: Array<{ type: string; command: string; args: string[]; timeoutMs: number }>;
      }>
    >;
  };

  it('the PreToolUse matcher covers every guarded built-in and the mail tools, and nothing read-only', () => {
    const matcher = hooks.hooks.PreToolUse?.[0]?.matcher;
    for (const tool of gatedToolNames()) expect(hookMatcherCovers(matcher, tool), tool).toBe(true);
    for (const tool of GUARDED_TOOLS) expect(hookMatcherCovers(matcher, tool), tool).toBe(true);
    for (const tool of ['Read', 'Grep', 'BashOutput', 'mcp__other__x', `${MAIL_TOOL_PREFIX}`])
      expect(hookMatcherCovers(matcher, tool), tool).toBe(false);
    expect(isGuardedTool(GUARDED_TOOLS, 'js')).toBe(true);
  });

  it('hooks are argv processes (no shell) running the bundled hook for zcode, with a day of timeout', () => {
    for (const event of ['PreToolUse', 'PermissionRequest']) {
      const h = hooks.hooks[event]?.[0]?.hooks[0];
      expect(h, event).toMatchObject({
        type: 'process',
        command: 'node',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: ZCode's own template variable, expanded by ZCode
        args: ['${ZCODE_PLUGIN_ROOT}/dist/hook.js', 'zcode'],
        timeoutMs: 86_400_000,
      });
    }
    expect(Object.keys(hooks.hooks).sort()).toEqual(['PermissionRequest', 'PreToolUse']);
  });

  it("the manifest's name is a valid ZCode plugin name; the MCP server is stdio without env templates", () => {
    const manifest = JSON.parse(readFileSync(join(plugin, '.zcode-plugin', 'plugin.json'), 'utf8')) as {
      name: string;
    };
    expect(manifest.name).toMatch(/^[a-z0-9][a-z0-9._-]{0,127}$/);
    expect(`${manifest.name}@inline`).toBe(PLUGIN_ID);
    const mcp = JSON.parse(readFileSync(join(plugin, '.mcp.json'), 'utf8')) as {
      mcpServers: Record<string, { type: string; env?: unknown }>;
    };
    // A `${VAR}` in env that is missing disables the server in ZCode: none may be used.
    expect(mcp.mcpServers.mail).toMatchObject({ type: 'stdio' });
    expect(mcp.mcpServers.mail?.env).toBeUndefined();
  });
});

describe('the setup check reads `zcode plugins list --json` (P-8)', () => {
  const config = { pluginDir: '/p/plugin', zcodeHome: '/home/u' };
  const gate = {
    event: 'PreToolUse',
    matcher: '^(Bash|Write|Edit|ApplyPatch|js|mcp__plugin_agentmail_mail__.+)$',
    runnable: true,
    command: 'node',
    args: ['/p/plugin/dist/hook.js', 'zcode'],
  };
  const good = {
    id: PLUGIN_ID,
    enabled: true,
    rootPath: '/p/plugin',
    mcpServerNames: ['mail'],
    hookDetails: [gate],
    diagnostics: [],
  };
  it('passes a loaded, enabled plugin with the gate and the server', () => {
    expect(checkPluginEntry([good], config, 'en')).toBeUndefined();
  });
  it('names what is missing and the fix', () => {
    expect(checkPluginEntry([], config, 'en')).toMatch(
      /not loaded in ZCode.*plugins\.dirs of \/home\/u\/\.zcode\/cli\/config\.json.*zcode plugins list/,
    );
    expect(checkPluginEntry([{ ...good, enabled: false }], config, 'en')).toMatch(/disabled/);
    expect(checkPluginEntry([{ ...good, rootPath: '/elsewhere' }], config, 'en')).toMatch(/\/elsewhere/);
    expect(checkPluginEntry([{ ...good, hookDetails: [] }], config, 'en')).toMatch(
      /permission hooks did not run/,
    );
    expect(
      checkPluginEntry([{ ...good, hookDetails: [{ ...gate, matcher: 'Bash' }] }], config, 'en'),
    ).toMatch(/does not cover Write, Edit/);
    expect(
      checkPluginEntry([{ ...good, hookDetails: [{ ...gate, runnable: false }] }], config, 'en'),
    ).toMatch(/no runnable PreToolUse hook/);
    expect(checkPluginEntry([{ ...good, mcpServerNames: [] }], config, 'en')).toMatch(
      /mail tools did not start/,
    );
  });
});

describe('configuration (AM_BRIDGE_CONFIG_INVALID names the setting)', () => {
  async function builtPlugin(): Promise<string> {
    const dir = await tmp();
    await mkdir(join(dir, '.zcode-plugin'), { recursive: true });
    await mkdir(join(dir, 'dist'), { recursive: true });
    await writeFile(join(dir, '.zcode-plugin', 'plugin.json'), '{"name":"agentmail"}');
    await writeFile(join(dir, 'dist', 'hook.js'), '');
    await writeFile(join(dir, 'dist', 'mcp.js'), '');
    return dir;
  }
  const base = { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:1', AGENTMAIL_AGENT_KEY: 'k' };

  it('reads the defaults', async () => {
    const plugin = await builtPlugin();
    const c = readZcodeConfig({ ...base, AGENTMAIL_ZCODE_PLUGIN_DIR: plugin }, '/home/u');
    expect(c).toMatchObject({
      zcodeBin: 'zcode',
      pluginDir: plugin,
      workspaceMode: 'build',
      zcodeHome: '/home/u',
      agentName: 'zcode',
    });
  });

  it('refuses bad values with the fix', async () => {
    const plugin = await builtPlugin();
    const read = (env: Record<string, string>) => () =>
      readZcodeConfig({ ...base, AGENTMAIL_ZCODE_PLUGIN_DIR: plugin, ...env }, '/h');
    expect(read({ AGENTMAIL_ZCODE_WORKSPACE_MODE: 'yolo' })).toThrow(
      /AGENTMAIL_ZCODE_WORKSPACE_MODE must be "build".*got "yolo"/,
    );
    expect(read({ AGENTMAIL_ZCODE_BIN: 'zcode' })).toThrow(/AGENTMAIL_ZCODE_BIN must be an absolute path/);
    expect(read({ AGENTMAIL_ZCODE_PLUGIN_DIR: '/nowhere' })).toThrow(
      /not the AgentMail plugin.*packages\/bridge-zcode\/plugin/,
    );
    expect(read({ AGENTMAIL_TURN_TIMEOUT_MS: String(2 * 86_400_000) })).toThrow(/at most 86400000/);
    await rm(join(plugin, 'dist', 'mcp.js'));
    expect(read({})).toThrow(/not built.*pnpm --filter @agentmail\/bridge-zcode build/);
    for (const err of [read({ AGENTMAIL_ZCODE_WORKSPACE_MODE: 'x' })])
      expect(() => err()).toThrow(expect.objectContaining({ code: 'AM_BRIDGE_CONFIG_INVALID' }));
  });
});

describe("ZCode's model catalogue (G-26)", () => {
  it('lists provider/model keys from config.json; none without a file; throws on a broken file', async () => {
    const home = await tmp();
    expect(readZcodeModels(home)).toEqual([]);
    await mkdir(join(home, '.zcode', 'cli'), { recursive: true });
    await writeFile(
      join(home, '.zcode', 'cli', 'config.json'),
      JSON.stringify({
        provider: {
          zai: { kind: 'anthropic', models: { 'glm-5.2': { name: 'GLM-5.2' }, 'glm-5-turbo': {} } },
        },
      }),
    );
    expect(readZcodeModels(home)).toEqual([
      { key: 'zai/glm-5.2', name: 'GLM-5.2' },
      { key: 'zai/glm-5-turbo', name: 'glm-5-turbo' },
    ]);
    await writeFile(join(home, '.zcode', 'cli', 'config.json'), '{oops');
    expect(() => readZcodeModels(home)).toThrow();
  });
});
