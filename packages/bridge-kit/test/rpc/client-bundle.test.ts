import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { TurnRpcServer } from '../../src/rpc/server.js';
import { stubHandlers } from './fixtures/support.js';

// A hook process is started for every tool call, so the client must load fast: it is bundled
// into hook scripts and may pull in only node:net and the small wire module — no zod, no undici,
// no text catalogue. Timings are printed for the record, not asserted (a loaded CI machine).

const run = promisify(execFile);
const PKG = fileURLToPath(new URL('../../', import.meta.url));
const CLIENT = join(PKG, 'src/rpc/client.ts');
const BRIDGE_ENTRY = join(PKG, 'src/index.ts');
const out = mkdtempSync(join(tmpdir(), 'am-rpc-bundle-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function bundle(entry: { file: string } | { contents: string }, outfile: string) {
  const result = await build({
    ...('file' in entry
      ? { entryPoints: [entry.file] }
      : { stdin: { contents: entry.contents, resolveDir: PKG, loader: 'ts' as const } }),
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile,
    metafile: true,
    logLevel: 'silent',
    conditions: ['@agentmail/source'],
  });
  // The files that put bytes into the output (the bundler visits more before tree shaking).
  const output = Object.values(result.metafile.outputs)[0];
  return Object.entries(output?.inputs ?? {})
    .filter(([, info]) => info.bytesInOutput > 0)
    .map(([p]) => relative(PKG, join(process.cwd(), p)));
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function timeNode(args: string[], env: NodeJS.ProcessEnv = process.env, runs = 5): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run(process.execPath, args, { env });
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

describe('the client bundle (hook startup)', () => {
  it('pulls in only the client, the wire module and the error registry', async () => {
    const inputs = await bundle({ file: CLIENT }, join(out, 'client.mjs'));
    expect(inputs.sort()).toEqual(['../shared-policy/src/errors.ts', 'src/rpc/client.ts', 'src/rpc/wire.ts']);
  });

  it("imported from the kit's entry, a bundler keeps the same three files (the kit is side-effect free)", async () => {
    const inputs = await bundle(
      { contents: `export { TurnRpcClient } from ${JSON.stringify(BRIDGE_ENTRY)};` },
      join(out, 'via-entry.mjs'),
    );
    expect(inputs.filter((p) => !p.startsWith('<stdin>')).sort()).toEqual([
      '../shared-policy/src/errors.ts',
      'src/rpc/client.ts',
      'src/rpc/wire.ts',
    ]);
  });

  it('a hook-like process (start node, import the bundle, one context call) — timings for the record', async () => {
    const bundleFile = join(out, 'client.mjs');
    await bundle({ file: CLIENT }, bundleFile);
    const hook = join(out, 'hook.mjs');
    writeFileSync(
      hook,
      `import { TurnRpcClient } from './client.mjs';\nconst v = await TurnRpcClient.fromEnv(process.env).context();\nprocess.stdout.write(v.mailId);\n`,
    );
    const server = new TurnRpcServer<string>({
      dir: join(out, 'run'),
      handlers: stubHandlers(),
    });
    await server.start();
    try {
      const lease = server.openTurn('m-hook');
      const env = { ...process.env, ...lease.env };
      const { stdout } = await run(process.execPath, [hook], { env });
      expect(stdout).toBe('m-hook');

      const bare = await timeNode(['--input-type=module', '-e', '0']);
      const imported = await timeNode([
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(bundleFile)})`,
      ]);
      const hookRun = await timeNode([hook], env);
      console.info(
        `turn RPC client: node --input-type=module -e 0 ${bare.toFixed(0)} ms; node -e import(client bundle) ${imported.toFixed(0)} ms (+${(imported - bare).toFixed(0)} ms); hook process with one context() call ${hookRun.toFixed(0)} ms (medians of 5)`,
      );
    } finally {
      await server.close();
    }
  });
});
