import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/ARCHITECTURE.md: the layers and which way dependencies point, checked from the package
// manifests AND from the import specifiers of every source file (a manifest alone does not stop
// the Gateway from importing the bridge kit through a dependency of a dependency).
const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function internalDeps(dir: string): { name: string; deps: string[]; devDeps: string[] } {
  const pkg = JSON.parse(readFileSync(join(PACKAGES, dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const ours = (m: Record<string, string> = {}) => Object.keys(m).filter((n) => n.startsWith('@agentmail/'));
  return { name: pkg.name, deps: ours(pkg.dependencies), devDeps: ours(pkg.devDependencies) };
}

const ALLOWED: Record<string, (dep: string, dev: boolean) => boolean> = {
  '@agentmail/protocol': () => false,
  '@agentmail/shared-policy': (d) => d === '@agentmail/protocol',
  // The bridge kit: on the rules and the clients; its tests use fakes, no Gateway.
  '@agentmail/bridge-kit': (d) => d === '@agentmail/protocol' || d === '@agentmail/shared-policy',
  // host-tools for the CLI's `agentmail mcp` only (the mail-tool server of every MCP host, not copied).
  // The kit for tests only (the tool names and relay subject they check against).
  '@agentmail/gateway': (d, dev) =>
    d === '@agentmail/protocol' ||
    d === '@agentmail/shared-policy' ||
    d === '@agentmail/host-tools' ||
    (dev && d === '@agentmail/bridge-kit'),
  // The testkit starts the Gateway from its sources, found beside it (no dependency: see the cycle test).
  '@agentmail/testkit': (d) =>
    d === '@agentmail/protocol' || d === '@agentmail/shared-policy' || d === '@agentmail/bridge-kit',
  // The tool and hook processes of MCP hosts, shared by bridges (Claude Code, ZCode): kit, rules and
  // protocol only; its tests start a real Gateway through the testkit.
  '@agentmail/host-tools': (d, dev) =>
    d === '@agentmail/protocol' ||
    d === '@agentmail/shared-policy' ||
    d === '@agentmail/bridge-kit' ||
    (dev && d === '@agentmail/testkit'),
  // The web mailbox runs in a browser; its tests start a Gateway, a pi bridge and a kit bridge (dev only).
  '@agentmail/web': (d, dev) =>
    d === '@agentmail/protocol' ||
    d === '@agentmail/shared-policy' ||
    (dev && (d === '@agentmail/testkit' || d === '@agentmail/bridge-pi' || d === '@agentmail/bridge-kit')),
};
// Bridge tests start a real Gateway in-process (buildApp), so a bridge may dev-depend on it.
const bridgeRule = (d: string, dev: boolean) =>
  d === '@agentmail/protocol' ||
  d === '@agentmail/shared-policy' ||
  d === '@agentmail/bridge-kit' ||
  d === '@agentmail/host-tools' ||
  (dev && (d === '@agentmail/testkit' || d === '@agentmail/gateway'));

const packageDirs = (): string[] =>
  readdirSync(PACKAGES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

/** Every `.ts`/`.tsx` file under `dir` (no node_modules, no dist). */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** The module specifiers a file imports or re-exports (static, dynamic, type-only included). */
export function importSpecifiers(text: string): string[] {
  const specs: string[] = [];
  const patterns = [
    /\bimport\s+(?:type\s+)?[\w*{}\s,]+?\s+from\s+['"]([^'"]+)['"]/g,
    /\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})\s*(?:as\s+\w+\s+)?from\s+['"]([^'"]+)['"]/g,
    /\bimport\s+['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const p of patterns) for (const m of text.matchAll(p)) if (m[1]) specs.push(m[1]);
  return specs;
}

interface Edge {
  file: string;
  spec: string;
}

function edgesOf(dir: string): Edge[] {
  return sourceFiles(dir).flatMap((file) =>
    importSpecifiers(readFileSync(file, 'utf8')).map((spec) => ({ file: relative(PACKAGES, file), spec })),
  );
}

const show = (e: Edge): string => `${e.file} → ${e.spec}`;

describe('layers (docs/ARCHITECTURE.md)', () => {
  it('internal package dependencies point one way (manifests)', () => {
    const bad: string[] = [];
    for (const dir of packageDirs()) {
      const { name, deps, devDeps } = internalDeps(dir);
      const rule = ALLOWED[name] ?? (name.startsWith('@agentmail/bridge-') ? bridgeRule : undefined);
      expect(rule, `no dependency rule for ${name}`).toBeDefined();
      for (const dep of deps) if (!rule?.(dep, false)) bad.push(`${name} → ${dep}`);
      for (const dep of devDeps) if (!rule?.(dep, true)) bad.push(`${name} → ${dep} (dev)`);
    }
    expect(bad).toEqual([]);
  });

  it("every package with a tsconfig.json is in the root tsconfig's references (else `tsc -b` skips it)", () => {
    const root = JSON.parse(readFileSync(join(PACKAGES, '..', 'tsconfig.json'), 'utf8')) as {
      references: Array<{ path: string }>;
    };
    const listed = new Set(root.references.map((r) => r.path.replace(/\/$/, '')));
    const missing = packageDirs().filter(
      (dir) => existsSync(join(PACKAGES, dir, 'tsconfig.json')) && !listed.has(`packages/${dir}`),
    );
    expect(missing, 'add { "path": "packages/<dir>" } to the references of the root tsconfig.json').toEqual(
      [],
    );
  });

  it('the workspace packages, dev dependencies included, form no cycle (pnpm orders builds by it)', () => {
    // `pnpm --filter "<pkg>..." build` and `pnpm -r build` refuse a cycle (ERR_PNPM_TASK_CYCLE).
    const graph = new Map(
      packageDirs().map((dir) => {
        const { name, deps, devDeps } = internalDeps(dir);
        return [name, [...deps, ...devDeps]] as const;
      }),
    );
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (name: string, path: string[]): void => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'open') {
        cycles.push([...path.slice(path.indexOf(name)), name].join(' → '));
        return;
      }
      state.set(name, 'open');
      for (const dep of graph.get(name) ?? []) visit(dep, [...path, name]);
      state.set(name, 'done');
    };
    for (const name of graph.keys()) visit(name, []);
    expect(cycles).toEqual([]);
  });

  it('protocol imports nothing of ours', () => {
    const bad = edgesOf(join(PACKAGES, 'protocol/src')).filter((e) => e.spec.startsWith('@agentmail/'));
    expect(bad.map(show)).toEqual([]);
  });

  it('the shared-policy root is pure: no Node built-in, no I/O library, no /client module', () => {
    const rootDir = join(PACKAGES, 'shared-policy/src');
    const io = new Set(['undici', 'proper-lockfile', 'eventsource-parser']);
    const edges = edgesOf(rootDir);
    expect(edges.length, 'the shared-policy sources were read').toBeGreaterThan(20);
    const bad = edges.filter((e) => {
      if (e.file.startsWith('shared-policy/src/client/')) return false;
      return (
        BUILTINS.has(e.spec) ||
        e.spec.startsWith('node:') ||
        io.has(e.spec) ||
        /(^|\/)client\//.test(e.spec) ||
        (e.spec.startsWith('@agentmail/') && e.spec !== '@agentmail/protocol')
      );
    });
    expect(bad.map(show)).toEqual([]);
  });

  it('shared-policy (root and /client) never imports the bridge kit, and holds no kit module', () => {
    const edges = edgesOf(join(PACKAGES, 'shared-policy/src'));
    const bad = edges.filter(
      (e) => e.spec.startsWith('@agentmail/bridge-kit') || /(^|\/)bridge\//.test(e.spec),
    );
    expect(bad.map(show)).toEqual([]);
    expect(
      existsSync(join(PACKAGES, 'shared-policy/src/bridge')),
      'the kit lives in packages/bridge-kit',
    ).toBe(false);
  });

  it('the bridge kit is never imported by the Gateway or the web page, nor a run-time dependency of theirs', () => {
    const bad = ['gateway/src', 'web/src'].flatMap((dir) =>
      edgesOf(join(PACKAGES, dir)).filter((e) => e.spec.startsWith('@agentmail/bridge-kit')),
    );
    expect(bad.map(show)).toEqual([]);
    for (const dir of ['gateway', 'web'])
      expect(internalDeps(dir).deps, `${dir}'s dependencies`).not.toContain('@agentmail/bridge-kit');
  });

  it('the kit imports shared-policy only through its entries (root, /client), never its test support', () => {
    const edges = edgesOf(join(PACKAGES, 'bridge-kit/src'));
    expect(edges.length, 'the kit sources were read').toBeGreaterThan(20);
    const bad = edges.filter(
      (e) =>
        e.spec.startsWith('@agentmail/') &&
        !['@agentmail/protocol', '@agentmail/shared-policy', '@agentmail/shared-policy/client'].includes(
          e.spec,
        ),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it('the Gateway server imports only the shared-policy root; its CLI at most /client, and host-tools/mcp in `agentmail mcp`', () => {
    const bad = edgesOf(join(PACKAGES, 'gateway/src')).filter((e) => {
      const cli = e.file.startsWith('gateway/src/cli/');
      if (e.spec.startsWith('@agentmail/host-tools'))
        return !(e.file === 'gateway/src/cli/mcp.ts' && e.spec === '@agentmail/host-tools/mcp');
      if (e.spec.startsWith('@agentmail/bridge-kit')) return true;
      if (!e.spec.startsWith('@agentmail/shared-policy/')) return false;
      return !(cli && e.spec === '@agentmail/shared-policy/client');
    });
    expect(bad.map(show)).toEqual([]);
  });

  it('the web mailbox imports only browser-safe entries: protocol, the shared-policy root and /client/browser, its UI libraries', () => {
    const allowed = new Set([
      '@agentmail/protocol',
      '@agentmail/shared-policy',
      '@agentmail/shared-policy/client/browser',
      'preact',
      'preact/hooks',
      'marked',
      'dompurify',
    ]);
    const edges = edgesOf(join(PACKAGES, 'web/src'));
    expect(edges.length, 'the web sources were read').toBeGreaterThan(10);
    const bad = edges.filter((e) => !e.spec.startsWith('.') && !allowed.has(e.spec));
    expect(bad.map(show)).toEqual([]);
  });

  it('no source file reaches into another package by a relative path (the build recipe in tooling/ aside)', () => {
    // tooling/node-bundle.ts is no package: the one build recipe, read by path so a build needs no build.
    const tooling = join(PACKAGES, '..', 'tooling', 'node-bundle.js');
    const bad = packageDirs().flatMap((dir) =>
      edgesOf(join(PACKAGES, dir, 'src')).filter((e) => {
        if (!e.spec.startsWith('.')) return false;
        const target = resolve(dirname(join(PACKAGES, e.file)), e.spec);
        return !target.startsWith(join(PACKAGES, dir)) && target !== tooling;
      }),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it("no package's sources import shared-policy's test support (`/testing`, tests only)", () => {
    const bad = packageDirs().flatMap((dir) =>
      edgesOf(join(PACKAGES, dir, 'src')).filter((e) => e.spec === '@agentmail/shared-policy/testing'),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it('bridges and host-tools never import the Gateway or the testkit from their sources', () => {
    const bad = packageDirs()
      .filter((d) => d.startsWith('bridge-') || d === 'host-tools')
      .flatMap((dir) =>
        edgesOf(join(PACKAGES, dir, 'src')).filter(
          (e) => e.spec.startsWith('@agentmail/gateway') || e.spec.startsWith('@agentmail/testkit'),
        ),
      );
    expect(bad.map(show)).toEqual([]);
  });

  it("host-tools' hook process imports only the light RPC client (its start is on every tool call's path)", () => {
    const hookFiles = ['host-tools/src/hook-runner.ts', 'host-tools/src/hook-profile.ts'];
    const bad = edgesOf(join(PACKAGES, 'host-tools/src')).filter(
      (e) =>
        hookFiles.includes(e.file) &&
        e.spec.startsWith('@agentmail/') &&
        !(e.spec === '@agentmail/bridge-kit/rpc-client' || /^@agentmail\/shared-policy$/.test(e.spec)),
    );
    // The root of shared-policy is allowed for types only (import type): checked by the bundle size test.
    expect(bad.map(show)).toEqual([]);
  });

  it.each(['shared-policy', 'bridge-kit'])('%s has no import cycles between its modules', (pkg) => {
    const src = join(PACKAGES, pkg, 'src');
    const graph = new Map<string, string[]>();
    for (const file of sourceFiles(src)) {
      const targets = importSpecifiers(readFileSync(file, 'utf8'))
        .filter((s) => s.startsWith('.'))
        .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
      graph.set(file, targets);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push(
          stack
            .slice(stack.indexOf(f))
            .concat(f)
            .map((x) => relative(src, x))
            .join(' → '),
        );
        return;
      }
      state.set(f, 'open');
      stack.push(f);
      for (const t of graph.get(f) ?? []) visit(t);
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of graph.keys()) visit(f);
    expect(cycles).toEqual([]);
  });

  it('the specifier reader sees every import form (so the checks above can fail)', () => {
    const specs = importSpecifiers(
      [
        "import { a } from 'x1';",
        "import type { B } from 'x2';",
        "import * as c from 'x3';",
        "export { d } from 'x4';",
        "export * from 'x5';",
        "import 'x6';",
        "const m = await import('x7');",
        'import {\n  e,\n  type F,\n} from "x8";',
      ].join('\n'),
    );
    expect(specs.sort()).toEqual(['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8']);
  });
});
