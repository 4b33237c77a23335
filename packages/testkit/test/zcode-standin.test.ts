import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runZcodeCli } from '../src/zcode/index.js';

// The ZCode stand-in's command line in-process: the parts of ZCode's v3.15.1 contract a driver
// trips over first (a strict parser, the headless failure shape, `plugins list --json`).

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'am-zcode-standin-'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

async function cli(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runZcodeCli(argv, {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    env: { HOME: home, ...env },
    signal: new AbortController().signal,
  });
  return { code, out, err };
}

describe('the ZCode stand-in CLI', () => {
  it('rejects the flags ZCode does not have with exit 1, the error and the help on stderr', async () => {
    for (const flag of ['--model', '--max-turns', '--settings', '--permission-mode', '--allowed-tools']) {
      const r = await cli(['--prompt', 'hi', flag, 'x']);
      expect(r.code, flag).toBe(1);
      expect(r.out, flag).toBe('');
      expect(r.err, flag).toContain(flag);
      expect(r.err, flag).toContain('Usage: zcode');
    }
    expect((await cli(['--prompt', 'hi', '--mode', 'auto'])).err).toContain('Unsupported --mode value: auto');
  });

  // The wording Q00/ouroboros saw from the real CLI (no trace id: it fails before a trace exists).
  it('without a model: exit 1, nothing on stdout, ZCode\'s own "Model config is missing"', async () => {
    const r = await cli([
      '--prompt',
      'hi',
      '--output-format',
      'stream-json',
      '--mode',
      'build',
      '--cwd',
      home,
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `Error: Model config is missing. Create ${join(home, '.zcode', 'cli', 'config.json')} with an explicit model provider before running ZCode.\n`,
    );
  });

  it('plugins list --json: a plugins.dirs plugin is `<name>@inline` with its hooks and MCP servers', async () => {
    const plugin = join(home, 'my-plugin');
    await mkdir(join(plugin, '.zcode-plugin'), { recursive: true });
    await mkdir(join(plugin, 'hooks'), { recursive: true });
    await writeFile(join(plugin, '.zcode-plugin', 'plugin.json'), JSON.stringify({ name: 'demo' }));
    await writeFile(
      join(plugin, '.mcp.json'),
      JSON.stringify({ mcpServers: { tools: { type: 'stdio', command: 'node', args: ['x.js'] } } }),
    );
    await writeFile(
      join(plugin, 'hooks', 'hooks.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'process', command: 'node', args: ['h.js'] }] }],
        },
      }),
    );
    await mkdir(join(home, '.zcode', 'cli'), { recursive: true });
    await writeFile(
      join(home, '.zcode', 'cli', 'config.json'),
      JSON.stringify({ plugins: { dirs: [plugin] } }),
    );
    const r = await cli(['plugins', 'list', '--json']);
    expect(r.code, r.err).toBe(0);
    const list = JSON.parse(r.out) as Array<Record<string, unknown>>;
    expect(list).toEqual([
      expect.objectContaining({
        id: 'demo@inline',
        enabled: true,
        rootPath: plugin,
        mcpServerNames: ['tools'],
        hookDetails: [expect.objectContaining({ event: 'PreToolUse', matcher: 'Bash', runnable: true })],
      }),
    ]);
    const human = await cli(['plugins', 'list']);
    expect(human.out).toContain('- demo@inline [enabled]');
    expect(human.out).toContain('hooks: 1, mcp: tools');
  });
});
