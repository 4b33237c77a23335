/**
 * Self-contained builds for Node.js. Above all the tool and hook processes for a host's plugin directory:
 * `mcp.js` (src/mcp-main.ts), `hook.js` (the bridge's own `src/hook-main.ts`, calling
 * `runHookMain` with its host's profile) and `hook-interactive.js` (loaded by the hook only in a
 * person's own session), each one ESM file with every dependency inlined (the AgentMail packages
 * from their sources, the MCP SDK, zod), so a plugin directory needs nothing but Node.js >= 22.19.
 * Used by the bridges' builds (Claude Code, ZCode) and their test harnesses.
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';
import { nodeBundle } from '../../../tooling/node-bundle.js';

/** Root directory of the host-tools package. */
// One level below the package root both as src/bundle.ts and as dist/bundle.js.
export const HOST_TOOLS_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The host-neutral entry files, by output name; a bridge adds its own `hook` entry. */
export const HOST_TOOL_ENTRIES: Readonly<Record<'mcp' | 'hook-interactive', string>> = {
  mcp: join(HOST_TOOLS_ROOT, 'src', 'mcp-main.ts'),
  'hook-interactive': join(HOST_TOOLS_ROOT, 'src', 'hook-interactive.ts'),
};

/** The plugin scripts of a host: {@link HOST_TOOL_ENTRIES} plus its own `hook` entry (its `src/hook-main.ts`). */
export function pluginEntries(hookEntry: string): Readonly<Record<string, string>> {
  return { ...HOST_TOOL_ENTRIES, hook: hookEntry };
}

/**
 * tsup options that bundle `entries` (output name → source file) into self-contained ESM files in
 * `outDir` (the workspace's one recipe, tooling/node-bundle.ts): every dependency inlined, the
 * AgentMail packages from their sources, except the packages named in `external` (native modules
 * such as `better-sqlite3`, resolved from node_modules at run time), one file per entry (the hook
 * must not load the MCP SDK or zod). `dts` adds declaration files (a package build). Used for the
 * plugin scripts and for a bridge's daemon.
 */
export function nodeBundleOptions(
  entries: Readonly<Record<string, string>>,
  outDir: string,
  { dts = false, external = [] }: { dts?: boolean; external?: readonly string[] } = {},
): Options {
  return nodeBundle({
    entries,
    outDir,
    tsconfig: join(HOST_TOOLS_ROOT, 'tsconfig.build.json'),
    dts,
    keep: external,
  });
}

/** Bundle the tool files and the host's hook (`hookEntry`, its hook main) into `outDir` (created). */
export async function buildHostTools(
  outDir: string,
  hookEntry: string,
): Promise<{ mcpJs: string; hookJs: string }> {
  const { build } = await import('tsup');
  await build({ ...nodeBundleOptions(pluginEntries(hookEntry), outDir), config: false });
  return { mcpJs: join(outDir, 'mcp.js'), hookJs: join(outDir, 'hook.js') };
}

/** What {@link buildDriver} built. */
export interface BuiltDriver {
  /** The daemon entry (`node <daemonJs>`). */
  daemonJs: string;
  /** The plugin directory copy with `dist/mcp.js`, `dist/hook.js`, `dist/hook-interactive.js`. */
  pluginDir: string;
  /** The build's root directory. */
  root: string;
  remove(): Promise<void>;
}

/** Options of {@link buildDriver}. */
export interface BuildDriverOptions {
  /** The bridge package's root: its `plugin/` is copied, the build goes to `node_modules/.cache`. */
  packageRoot: string;
  /** Directory name prefix of the build, e.g. `bridge-zcode`. */
  name: string;
  /** The daemon's entry files (output name → source; one named `daemon-main`). */
  daemonEntries: Readonly<Record<string, string>>;
  /** The host's hook main (`src/hook-main.ts`, calling `runHookMain` with its profile). */
  hookEntry: string;
  /** Packages the daemon loads from node_modules instead of inlining them. */
  external?: readonly string[];
  /**
   * Build into this existing directory (inside the package's `node_modules/.cache`, e.g. a
   * content-keyed test build) instead of a fresh one. @default `node_modules/.cache/<name>-<pid>-<time>`
   */
  root?: string;
}

/**
 * A bridge as its tests run it: the plugin directory copied into a fresh directory under the
 * package's `node_modules/.cache` (so node_modules resolution still finds the externals), its
 * scripts bundled into it, and the daemon bundled next to it. Build it once per test file.
 */
export async function buildDriver(options: BuildDriverOptions): Promise<BuiltDriver> {
  const { build } = await import('tsup');
  const root =
    options.root ??
    join(options.packageRoot, 'node_modules', '.cache', `${options.name}-${process.pid}-${Date.now()}`);
  const pluginDir = join(root, 'plugin');
  await mkdir(root, { recursive: true });
  await cp(join(options.packageRoot, 'plugin'), pluginDir, {
    recursive: true,
    filter: (src) => !src.endsWith('/dist'),
  });
  const external = options.external ?? [];
  await Promise.all([
    build({ ...nodeBundleOptions(options.daemonEntries, join(root, 'daemon'), { external }), config: false }),
    build({ ...nodeBundleOptions(pluginEntries(options.hookEntry), join(pluginDir, 'dist')), config: false }),
  ]);
  return builtDriverAt(root);
}

/** The paths of a driver {@link buildDriver} built into `root`; `remove()` deletes `root`. */
export function builtDriverAt(root: string): BuiltDriver {
  return {
    daemonJs: join(root, 'daemon', 'daemon-main.js'),
    pluginDir: join(root, 'plugin'),
    root,
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
