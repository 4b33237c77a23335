/**
 * The documented build and start commands, on a fresh clone: `pnpm --filter @agentmail/gateway
 * build` once failed there (TS2307: the declarations of the sibling packages did not exist yet),
 * left a half-built dist whose `serve` died with ERR_MODULE_NOT_FOUND, and `pnpm serve` rebuilt
 * every package (about 110 s) before starting.
 *
 * "A fresh clone" is made for real: the working tree's files of protocol, shared-policy and the
 * gateway (what git tracks or would track — no dist, no build cache) copied into a temporary
 * workspace after `pnpm install`: its node_modules link back to the installed packages (pnpm's
 * package links are relative, so the workspace links resolve inside the copy). pnpm runs there with
 * `verifyDepsBeforeRun` off: the copy is a partial workspace, and an install in it
 * would write through those links into the real node_modules.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GATEWAY_ROOT } from './helpers/cli-build.js';
import { cleanEnv, PROCESS_TEST_TIMEOUT_MS, run } from './helpers/processes.js';

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const REPO = resolve(GATEWAY_ROOT, '../..');
// host-tools: the CLI's `agentmail mcp` serves its mail-tool server (inlined from its sources), which
// runs the kit's mail tools and turn RPC client (bridge-kit, inlined likewise).
const PACKAGES = [
  'packages/protocol',
  'packages/shared-policy',
  'packages/bridge-kit',
  'packages/host-tools',
  'packages/gateway',
  'packages/web',
];
// The web package's tsconfig references these (for its tests); vite's build reads them.
const TSCONFIGS_ONLY = ['packages/testkit/tsconfig.json', 'packages/bridge-pi/tsconfig.json'];
let clone = '';
let env: NodeJS.ProcessEnv = {};
/** The package build with declarations, on a loaded 2-core machine (see its test). */
const GATEWAY_BUILD_TIMEOUT_MS = 240_000;

/** Copy what a clone of the working tree would hold of the workspace root and `PACKAGES`. */
async function freshClone(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentmail-clone-'));
  const files = execFileSync(
    'git',
    [
      'ls-files',
      '--cached',
      '--others',
      '--exclude-standard',
      '--',
      'package.json',
      'pnpm-workspace.yaml',
      'tsconfig.base.json',
      // The one build recipe every package's tsup config reads by path.
      'tooling',
      ...PACKAGES,
      ...TSCONFIGS_ONLY,
    ],
    { cwd: REPO, encoding: 'utf8' },
  )
    .split('\n')
    .filter((f) => f !== '' && existsSync(join(REPO, f)));
  for (const file of files) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await cp(join(REPO, file), join(dir, file));
  }
  // pnpm wants a real node_modules directory at the root (it keeps its run state there).
  await mkdir(join(dir, 'node_modules'));
  for (const entry of readdirSync(join(REPO, 'node_modules'))) {
    if (entry.startsWith('.pnpm-') || entry === '.modules.yaml' || entry.startsWith('.vite')) continue;
    await symlink(join(REPO, 'node_modules', entry), join(dir, 'node_modules', entry));
  }
  for (const pkg of PACKAGES) {
    // The package's links as pnpm made them (relative), without the build cache.
    await cp(join(REPO, pkg, 'node_modules'), join(dir, pkg, 'node_modules'), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !src.includes(`${join(pkg, 'node_modules', '.cache')}`),
    });
  }
  return dir;
}

/** Every import specifier of the JavaScript files under `dir` that names an `@agentmail/` package. */
function workspaceImports(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/(?:from\s*|import\s*\(\s*|import\s+)["'](@agentmail\/[^"']+)["']/g))
      found.push(m[1] ?? '');
  }
  return found;
}

beforeAll(async () => {
  clone = await freshClone();
  // HOME stays: pnpm keeps its cache there. The CLI reads no config file of the developer's.
  env = cleanEnv({
    AGENTMAIL_CONFIG: join(clone, 'absent.json'),
    PNPM_CONFIG_VERIFY_DEPS_BEFORE_RUN: 'false',
  });
});

afterAll(async () => {
  if (clone !== '') await rm(clone, { recursive: true, force: true });
});

describe('building and starting the Gateway from a fresh clone', () => {
  it('regression: `pnpm --filter @agentmail/gateway build` works without the sibling packages built', async () => {
    expect(existsSync(join(clone, 'packages/protocol/dist'))).toBe(false);
    expect(existsSync(join(clone, 'packages/shared-policy/dist'))).toBe(false);
    // CPU-bound (tsup's declaration step type-checks the Gateway and its siblings' sources: ~20 s
    // of one core); beside the other test files on 2 cores it took 46–60+ s, so the default
    // 60 s child limit was the run's, not the build's. The limit is the build's work under load.
    const built = await run('pnpm', ['--filter', '@agentmail/gateway', 'build'], {
      env,
      cwd: clone,
      timeoutMs: GATEWAY_BUILD_TIMEOUT_MS,
    });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    const dist = join(clone, 'packages/gateway/dist');
    expect(existsSync(join(dist, 'index.d.ts'))).toBe(true);
    // Nothing in the bundle imports a sibling package's dist at run time.
    expect(workspaceImports(dist)).toEqual([]);
    const version = await run(process.execPath, [join(dist, 'cli/main.js'), '--version'], { env });
    expect(version).toMatchObject({ code: 0, stderr: '' });
    // `agentmail mcp` loads the MCP server (its own chunk, the SDK from the Gateway's dependencies)
    // before it asks for the key.
    const mcp = await run(process.execPath, [join(dist, 'cli/main.js'), 'mcp'], { env });
    expect(mcp.code, mcp.stderr).toBe(2);
    expect(mcp.stderr).toContain('agentmail mcp needs an agent key');
  });

  it('regression: `pnpm serve` builds only the CLI and the web mailbox; the Gateway and the page answer', async () => {
    await rm(join(clone, 'packages/gateway/dist'), { recursive: true, force: true });
    const started = Date.now();
    // Its own process group, so the test ends pnpm and the Gateway under it together.
    const child = spawn('pnpm', ['serve', '--port', '0', '--log-level', 'warn'], {
      cwd: clone,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      output += s;
    });
    try {
      const url = await new Promise<string>((done, fail) => {
        child.once('exit', (code) => fail(new Error(`pnpm serve exited with ${code}:\n${output}`)));
        createInterface({ input: child.stdout }).on('line', (line) => {
          output += `${line}\n`;
          const m = /listening on (http:\/\/\S+)/.exec(line);
          if (m?.[1]) done(m[1]);
        });
      });
      console.info(`pnpm serve on a fresh clone: listening after ${Date.now() - started} ms`);
      // Only the JavaScript was built: no declarations, no sibling package but the web page.
      expect(existsSync(join(clone, 'packages/gateway/dist/index.d.ts'))).toBe(false);
      expect(existsSync(join(clone, 'packages/shared-policy/dist'))).toBe(false);
      // The web mailbox the README sends a person to is there, not "not built" (503).
      const page = await fetch(`${url}/`);
      expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      const status = await run(
        process.execPath,
        [join(clone, 'packages/gateway/dist/cli/main.js'), 'status', '--url', url],
        { env },
      );
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`${url}: ok`);
      expect(existsSync(join(clone, '.data'))).toBe(true); // the documented data directory
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    }
  });
});
