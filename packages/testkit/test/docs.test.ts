/**
 * The READMEs stay true (issue 20: stale counts, a layout table missing four packages, a build
 * command that failed on a fresh clone, no way to try Claude Code or DSH without a key):
 *
 * - every package under `packages/` is a row of the root README's layout table;
 * - every relative link of every Markdown file names a file that exists, and an anchor that is one
 *   of its headings;
 * - every `pnpm --filter <pkg> build` in the docs builds the package's dependencies too
 *   (`<pkg>...`), but for the packages that build from sources alone (tested elsewhere);
 * - every "Try it locally" section runs, for real: in a fresh copy of the working tree (what git
 *   tracks or would track, `node_modules` linked), its build commands once (all sections' together),
 *   then each section's shell block, in a temporary HOME and directory with ports of its own, all
 *   five at once; a block passes when it ends with the scripted model's answer read back from its
 *   own Gateway. Each block runs in a process group of its own, ended when it is done.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, gatewayCliPath, ManagedProcess } from '../src/index.js';
import { REPO, readRepoFile, workingTreeFiles } from './support/working-tree.js';

/** Packages whose `build` inlines its siblings from sources, so it works without `...`. */
const BUILDS_ALONE: Readonly<Record<string, string>> = {
  // packages/gateway/test/build.test.ts runs exactly this command on a fresh clone.
  '@agentmail/gateway': 'gateway test/build.test.ts',
  // `pnpm serve` builds it on a fresh clone (same test file).
  '@agentmail/web': 'gateway test/build.test.ts (pnpm serve)',
  // Their try-it sections build them alone on a fresh copy: the last test of this file.
  '@agentmail/bridge-pi': 'testkit test/docs.test.ts (try it locally)',
  '@agentmail/bridge-opencode': 'testkit test/docs.test.ts (try it locally)',
  '@agentmail/bridge-dsh': 'testkit test/docs.test.ts (try it locally)',
  '@agentmail/bridge-claude': 'testkit test/docs.test.ts (try it locally)',
  '@agentmail/bridge-zcode': 'testkit test/docs.test.ts (try it locally)',
  '@agentmail/testkit': 'testkit test/docs.test.ts (the ZCode try-it section)',
};

/** How long one section's block may take to the reply (it needs ~10–20 s on 2 cores). */
const BLOCK_TIMEOUT_MS = 180_000;
/** The build of every section (≈ `pnpm build` without the web page: 1–3 min on 2 cores). */
const BUILD_TIMEOUT_MS = 480_000;
/** A block's processes get this long to stop on SIGTERM before the group is killed. */
const STOP_GRACE_MS = 10_000;

const MARKDOWN = workingTreeFiles('*.md').filter((f) => !f.includes('/test/'));
const read = readRepoFile;

/** A fenced code block. */
interface Block {
  lang: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
}

function fencedBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    blocks.push({ lang: open[1] ?? '', body: `${body.join('\n')}\n`, line: start + 1 });
  }
  return blocks;
}

/** The text without fenced blocks and inline code (where links are not links). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors of a Markdown text (duplicates get `-1`, `-2`, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^```[\s\S]*?^```\s*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = (m[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The "Try it locally" sections: heading, file and the fenced blocks under it. */
interface TrySection {
  file: string;
  heading: string;
  blocks: Block[];
}

function trySections(): TrySection[] {
  const sections: TrySection[] = [];
  for (const file of MARKDOWN) {
    const text = read(file);
    const lines = text.split('\n');
    let inFence = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (/^```/.test(line)) inFence = !inFence;
      const head = inFence ? null : /^(#{2,4})\s+(Try it locally.*)$/i.exec(line);
      if (!head) continue;
      const level = head[1]?.length ?? 2;
      let end = i + 1;
      let fence = false;
      for (; end < lines.length; end++) {
        const l = lines[end] ?? '';
        if (/^```/.test(l)) fence = !fence;
        const h = fence ? null : /^(#{1,6})\s/.exec(l);
        if (h && (h[1]?.length ?? 0) <= level) break;
      }
      const body = lines.slice(i, end).join('\n');
      sections.push({
        file,
        heading: head[2] ?? '',
        blocks: fencedBlocks(body).map((b) => ({ ...b, line: b.line + i })),
      });
    }
  }
  return sections;
}

/** One `--filter X` or `--filter-prod X` of a pnpm command (the latter leaves devDependencies out of `X...`). */
interface Filter {
  flag: '--filter' | '--filter-prod';
  name: string;
}

/** `pnpm … --filter[-prod] X … build` commands of a text: each with the packages it filters. */
function filterBuilds(text: string): Array<{ command: string; filters: Filter[] }> {
  const found: Array<{ command: string; filters: Filter[] }> = [];
  for (const m of text.matchAll(
    /pnpm((?:\s+(?:--filter(?:-prod)?\s+\S+|--[\w-]+))+)\s+(?:run\s+)?build(?![\w:-])/g,
  )) {
    const filters = [...(m[1] ?? '').matchAll(/(--filter(?:-prod)?)\s+("?)([^\s"]+)\2/g)].map((f) => ({
      flag: f[1] === '--filter-prod' ? ('--filter-prod' as const) : ('--filter' as const),
      name: f[3] ?? '',
    }));
    if (filters.length > 0) found.push({ command: m[0], filters });
  }
  return found;
}

/** The ini block of the Claude Code README's service paragraph, as `Key=value` lines. */
function claudeUnitLines(): string[] {
  const text = read('packages/bridge-claude/README.md');
  const block = fencedBlocks(text).find(
    (b) => b.lang === 'ini' && b.body.includes('agentmail-claude.service'),
  );
  if (block === undefined)
    throw new Error('packages/bridge-claude/README.md: no ini block of agentmail-claude.service');
  return block.body.split('\n').filter((l) => /^\w+=/.test(l));
}

describe('the docs name what is there', () => {
  it('every package under packages/ is a row of the root README layout table', () => {
    const readme = read('README.md');
    const layout = readme.slice(readme.indexOf('\n## Layout'));
    expect(layout.length, 'the root README has a "## Layout" section').toBeGreaterThan(20);
    const rows = new Set([...layout.matchAll(/^\|\s*`(packages\/[^`/]+)`/gm)].map((m) => m[1]));
    const packages = readdirSync(join(REPO, 'packages'), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(REPO, 'packages', d.name, 'package.json')))
      .map((d) => `packages/${d.name}`);
    expect(packages.length).toBeGreaterThan(5);
    expect(
      packages.filter((p) => !rows.has(p)),
      'add a row for each to the table under README ## Layout',
    ).toEqual([]);
    expect([...rows].filter((r) => !packages.includes(r ?? ''))).toEqual([]);
  });

  it('every relative link names a file that exists, and an anchor that is one of its headings', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      const text = read(file);
      for (const m of prose(text).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1] ?? '';
        if (/^[a-z][\w+.-]*:/i.test(target)) continue; // http:, https:, mailto:, file:
        const [path = '', anchor] = target.split('#');
        const targetFile = path === '' ? file : relative(REPO, resolve(REPO, dirname(file), path));
        if (!existsSync(join(REPO, targetFile))) {
          broken.push(`${file}: ${target} (no ${targetFile})`);
          continue;
        }
        if (anchor !== undefined && targetFile.endsWith('.md') && !anchors(read(targetFile)).has(anchor))
          broken.push(`${file}: ${target} (no heading #${anchor} in ${targetFile})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every `pnpm --filter <pkg> build` builds its dependencies too (<pkg>...)', () => {
    const alone: string[] = [];
    let commands = 0;
    for (const file of MARKDOWN)
      for (const { command, filters } of filterBuilds(read(file))) {
        commands++;
        for (const { name } of filters)
          if (!name.endsWith('...') && !name.startsWith('<') && BUILDS_ALONE[name] === undefined)
            alone.push(`${file}: ${command}`);
      }
    expect(commands).toBeGreaterThan(5);
    expect(alone).toEqual([]);
  });
});

describe('the Claude Code README shows the unit `agentmail service install claude` writes', () => {
  it('each of its lines is a line of the rendered unit (paths: /home/me is HOME, /path/to/… any)', async () => {
    const home = await mkdtemp(join(tmpdir(), 'agentmail-docs-unit-'));
    try {
      const env = cleanEnv({
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local/share'),
        AGENTMAIL_CONFIG: join(home, 'no-cli-config.json'),
      });
      const cli = ManagedProcess.spawn(
        'service-install',
        process.execPath,
        [
          await gatewayCliPath(),
          '--url',
          'http://127.0.0.1:8787',
          'service',
          'install',
          'claude',
          '--agent-key',
          'amk_docs',
        ],
        { env },
      );
      expect(await cli.exited, cli.lines().join('\n')).toEqual({ code: 0, signal: null });
      const unit = readFileSync(join(home, '.config/systemd/user/agentmail-claude.service'), 'utf8').split(
        '\n',
      );
      const lines = claudeUnitLines();
      expect(lines.length).toBeGreaterThan(5);
      const missing = lines.filter((line) => {
        const pattern = line
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          .replaceAll('/home/me', home)
          .replace(/\/path\/to\/[\w-]+/g, '\\S+');
        return !unit.some((u) => new RegExp(`^${pattern}$`).test(u));
      });
      expect(missing).toEqual([]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 120_000); // the CLI is built first when its sources changed
});

/** One section made runnable: its build commands and its shell block. */
interface Runnable {
  name: string;
  section: TrySection;
  script: string;
}

/** The setup lines a section may have: the install (done already) and builds. */
function setupCommands(block: Block, where: string): { cli: boolean; filters: Filter[] } {
  let cli = false;
  const filters: Filter[] = [];
  for (const raw of block.body.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    for (const part of line.split('&&').map((p) => p.trim())) {
      if (part === 'source scripts/env.sh' || part === 'pnpm install') continue;
      if (part === 'pnpm build:cli') {
        cli = true;
        continue;
      }
      const builds = filterBuilds(part);
      if (builds.length === 1 && builds[0]?.command === part) {
        filters.push(...builds[0].filters);
        continue;
      }
      throw new Error(`${where}: a setup line this test cannot run for you: "${part}"`);
    }
  }
  return { cli, filters };
}

const sections = trySections();
const runnable: Runnable[] = [];
const build = { cli: false, filters: new Set<string>() };
for (const section of sections) {
  const where = `${section.file} "${section.heading}"`;
  const sh = section.blocks.filter((b) => b.lang === 'sh');
  const setup = sh.filter((b) => /^\s*(?:source scripts\/env\.sh && )?pnpm install\s*$/m.test(b.body));
  const runs = sh.filter((b) => !setup.includes(b));
  for (const b of setup) {
    const cmds = setupCommands(b, `${where} line ${b.line}`);
    build.cli ||= cmds.cli;
    for (const f of cmds.filters) build.filters.add(`${f.flag} ${f.name}`);
  }
  runnable.push({
    name: section.file.replace(/^packages\/(?:bridge-)?/, '').replace(/\/README\.md$/, ''),
    section,
    script: runs.map((b) => b.body).join('\n'),
  });
}

/** The kernel's range for port-0 binds (`ip_local_port_range`); Linux's default when unreadable. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low !== undefined && high !== undefined && low > 0 && high >= low) return [low, high];
  } catch {}
  return [32768, 60999];
}

/**
 * `count` distinct free loopback ports for the blocks' fixed-port settings, chosen **below** the
 * ephemeral range: a port found with `listen(0)` and released is the kind the kernel hands to the
 * next `listen(0)` of any other test on the machine (one took a block's model port under load:
 * EADDRINUSE). Each is checked free by binding it; all stay bound until all are found.
 */
async function freePorts(count: number): Promise<number[]> {
  const [ephemeralLow] = ephemeralRange();
  const high = Math.min(ephemeralLow, 65536) - 1;
  const low = Math.max(1024, high - 12_000);
  const servers: Server[] = [];
  try {
    for (let tries = 0; servers.length < count; tries++) {
      if (tries > 50 * count) throw new Error(`no ${count} free loopback ports in ${low}-${high}`);
      const port = low + Math.floor(Math.random() * (high - low + 1));
      if (servers.some((s) => (s.address() as AddressInfo).port === port)) continue;
      const server = await new Promise<Server | undefined>((done) => {
        const candidate = createServer();
        candidate.once('error', () => done(undefined));
        candidate.listen(port, '127.0.0.1', () => done(candidate));
      });
      if (server) servers.push(server);
    }
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  }
}

/** A copy of the working tree as a clone has it, its `node_modules` linked to the installed ones. */
async function freshCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentmail-docs-'));
  for (const file of workingTreeFiles()) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await cp(join(REPO, file), join(dir, file));
  }
  // The provisioned Node and pnpm (scripts/env.sh finds them there).
  await symlink(join(REPO, '.tools'), join(dir, '.tools'));
  // pnpm wants a real node_modules directory at the root (it keeps its run state there).
  await mkdir(join(dir, 'node_modules'));
  for (const entry of readdirSync(join(REPO, 'node_modules'))) {
    if (
      entry.startsWith('.pnpm-') ||
      entry === '.modules.yaml' ||
      entry.startsWith('.vite') ||
      entry === '.cache'
    )
      continue;
    await symlink(join(REPO, 'node_modules', entry), join(dir, 'node_modules', entry));
  }
  for (const pkg of readdirSync(join(REPO, 'packages'))) {
    const modules = join(REPO, 'packages', pkg, 'node_modules');
    if (!existsSync(modules)) continue;
    // The package's links as pnpm made them (relative), without the test build caches.
    await cp(modules, join(dir, 'packages', pkg, 'node_modules'), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !src.startsWith(join(modules, '.cache')),
    });
  }
  return dir;
}

/** Run `command` in the copy to completion; throws with its output when it fails. */
async function runInCopy(
  copy: string,
  env: NodeJS.ProcessEnv,
  command: string,
  args: string[],
): Promise<void> {
  const proc = ManagedProcess.spawn(command, command, args, { env, cwd: copy });
  const exit = await proc.exited;
  if (exit.code !== 0)
    throw new Error(`${command} ${args.join(' ')}: ${JSON.stringify(exit)}\n${proc.lines().join('\n')}`);
}

/** SIGTERM to a finished block's process group, SIGKILL to what is left after the grace. */
async function endGroup(pid: number): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pid, 'SIGTERM');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(-pid, 'SIGKILL');
}

/** The last lines of every log a block left (`$TRY/*.log`), for the failure message. */
function logTails(dir: string): string {
  if (!existsSync(dir)) return '';
  let out = '';
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && entry.name.endsWith('.log')) {
      const lines = readFileSync(join(entry.parentPath, entry.name), 'utf8').trimEnd().split('\n');
      out += `\n--- ${join(entry.parentPath, entry.name)} (last lines)\n${lines.slice(-15).join('\n')}`;
    }
  return out;
}

describe('every "Try it locally" section runs on a fresh copy', () => {
  let copy = '';
  let tmp = '';
  /** The text hello.json answers with: the reply the blocks must read back. */
  const answer = (
    JSON.parse(read('packages/testkit/examples/hello.json')) as {
      scenarios: Array<{ name: string; reply: { text: string } }>;
    }
  ).scenarios.find((s) => s.name === 'answer')?.reply.text;

  beforeAll(async () => {
    const started = Date.now();
    copy = await freshCopy();
    tmp = await mkdtemp(join(tmpdir(), 'agentmail-try-'));
    const env = cleanEnv({ PNPM_CONFIG_VERIFY_DEPS_BEFORE_RUN: 'false' });
    // All sections' builds at once: pnpm orders the packages and builds each one once.
    if (build.filters.size > 0)
      await runInCopy(copy, env, 'pnpm', [...[...build.filters].flatMap((f) => f.split(' ')), 'build']);
    if (build.cli) await runInCopy(copy, env, 'pnpm', ['build:cli']);
    console.info(`docs: fresh copy and the sections' builds in ${Date.now() - started} ms`);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const dir of [copy, tmp]) if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it("finds the five bridges' sections, each with its build and one block to run", () => {
    expect(runnable.map((r) => r.name).sort()).toEqual(['claude', 'dsh', 'opencode', 'pi', 'zcode']);
    // The block waits for the answer with the CLI (no polling loop of CLI calls: issue 19).
    for (const r of runnable) expect(r.script, r.section.file).toMatch(/agentmail send .* --wait\b/);
    expect(build.cli).toBe(true);
    expect(answer).toBeTypeOf('string');
  });

  it(
    "each block, all at once, ends with the scripted model's answer read from its own Gateway",
    async () => {
      const ports = await freePorts(3 * runnable.length);
      const results = await Promise.all(
        runnable.map(async (r, i) => {
          const home = join(tmp, r.name, 'home');
          await mkdir(home, { recursive: true });
          const file = join(tmp, r.name, 'block.sh');
          await writeFile(file, r.script);
          const [gateway, model, opencode] = ports.slice(3 * i, 3 * i + 3);
          const env = cleanEnv({
            HOME: home,
            XDG_CONFIG_HOME: join(home, '.config'),
            XDG_DATA_HOME: join(home, '.local/share'),
            XDG_STATE_HOME: join(home, '.local/state'),
            AGENTMAIL_TRY_DIR: join(tmp, r.name, 'try'),
            GATEWAY_PORT: String(gateway),
            MODEL_PORT: String(model),
            OPENCODE_PORT: String(opencode),
            PNPM_CONFIG_VERIFY_DEPS_BEFORE_RUN: 'false',
          });
          for (const k of Object.keys(env))
            if (/^(ANTHROPIC|CLAUDE|DEEPSEEK|OPENCODE)_/.test(k)) delete env[k];
          const started = Date.now();
          // As pasted into a shell: aliases expand (the blocks define `agentmail`).
          const proc = ManagedProcess.spawn(`try-${r.name}`, 'bash', ['-O', 'expand_aliases', file], {
            env,
            cwd: copy,
          });
          let timer: NodeJS.Timeout | undefined;
          const exit = await Promise.race([
            proc.exited,
            new Promise<undefined>((done) => {
              timer = setTimeout(() => done(undefined), BLOCK_TIMEOUT_MS);
            }),
          ]);
          clearTimeout(timer);
          const ms = Date.now() - started;
          await endGroup(proc.pid);
          return {
            name: r.name,
            exit,
            ms,
            output: `${proc.lines().join('\n')}${logTails(join(tmp, r.name, 'try'))}`,
          };
        }),
      );
      console.info(`docs: time to the first reply: ${results.map((r) => `${r.name} ${r.ms} ms`).join(', ')}`);
      for (const r of results) {
        expect(r.exit, `${r.name}: the block did not end in time\n${r.output}`).toEqual({
          code: 0,
          signal: null,
        });
        expect(r.output, r.name).toContain(answer);
      }
    },
    BLOCK_TIMEOUT_MS + 2 * STOP_GRACE_MS,
  );
});
