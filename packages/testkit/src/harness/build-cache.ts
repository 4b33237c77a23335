/**
 * Builds made once per source version and shared by every test file (and every later run): each
 * lives under its package's `node_modules/.cache/<name>-<hash>` (so the imports left in a bundle
 * resolve from that package's node_modules), where the hash covers every source of the workspace
 * (each package's files outside `node_modules`, `dist` and `test`) and the build's own key. A build
 * is made beside its final place and renamed into it, so a concurrent test process sees either no
 * build or a whole one; its last file lists every file and its size, and a build whose files no
 * longer match (emptied, cut, removed) is made anew; nothing is removed at the end of a file (vitest ends its workers with
 * SIGTERM, which skips exit hooks), old versions are pruned after a day.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Cached builds older than this, other than the current one, are removed on a new build, in ms. @default 1 day */
export const BUILD_CACHE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** Directory names never hashed (outputs, installs, tests). */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'test', 'coverage', '.cache', '.turbo']);

/** The workspace root: the nearest directory above this file with a `pnpm-workspace.yaml`. */
function workspaceRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the workspace root (pnpm-workspace.yaml)');
    dir = parent;
  }
}

function listFiles(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) listFiles(join(dir, entry.name), out);
    } else if (entry.isFile()) out.push(join(dir, entry.name));
  }
}

let sourcesHash: string | undefined;

/**
 * Hash of every source file of the workspace's packages (path and bytes), computed once per
 * process: a test run does not change its sources.
 */
export function workspaceSourceHash(): string {
  if (sourcesHash !== undefined) return sourcesHash;
  const root = workspaceRoot();
  const files: string[] = [];
  for (const name of ['package.json', 'pnpm-lock.yaml', 'tsconfig.base.json'])
    if (existsSync(join(root, name))) files.push(join(root, name));
  listFiles(join(root, 'packages'), files);
  // The build recipe every bundle uses (tooling/node-bundle.ts).
  listFiles(join(root, 'tooling'), files);
  const hash = createHash('sha256');
  for (const file of files.sort()) {
    hash.update(relative(root, file));
    hash.update('\0');
    hash.update(readFileSync(file));
  }
  sourcesHash = hash.digest('hex');
  return sourcesHash;
}

/** Options of {@link cachedBuild}. */
export interface CachedBuildOptions {
  /** The package whose `node_modules/.cache` holds the build. */
  packageRoot: string;
  /** Name of the build (the directory's prefix), e.g. `bridge-pi-daemon`. */
  name: string;
  /** What else makes this build differ (e.g. an entry path); part of the hash. @default '' */
  key?: string;
  /** Makes the build into `dir` (an existing empty directory). */
  build(dir: string): Promise<void>;
}

const inFlight = new Map<string, Promise<string>>();

/**
 * The directory of the build for the current sources: made by `options.build` when no process
 * made it yet, else the one already there. Concurrent calls in one process share one build.
 * @throws whatever `options.build` throws (its half-made directory is removed).
 */
export function cachedBuild(options: CachedBuildOptions): Promise<string> {
  const hash = createHash('sha256')
    .update(workspaceSourceHash())
    .update('\0')
    .update(options.name)
    .update('\0')
    .update(options.key ?? '')
    .digest('hex')
    .slice(0, 16);
  const cacheDir = join(options.packageRoot, 'node_modules', '.cache');
  const finalDir = join(cacheDir, `${options.name}-${hash}`);
  const running = inFlight.get(finalDir);
  if (running !== undefined) return running;
  const made = (async () => {
    if (existsSync(finalDir)) {
      if (isWhole(finalDir)) return finalDir;
      // Damaged (a file emptied, cut or removed after the build): set it aside and build anew.
      const aside = `${finalDir}.damaged-${process.pid}-${Date.now()}`;
      await rename(finalDir, aside).catch(() => {});
      await rm(aside, { recursive: true, force: true });
    }
    const tmpDir = `${finalDir}.tmp-${process.pid}-${Date.now()}`;
    await mkdir(tmpDir, { recursive: true });
    try {
      await options.build(tmpDir);
      writeManifest(tmpDir);
    } catch (error) {
      await rm(tmpDir, { recursive: true, force: true });
      throw error;
    }
    try {
      await rename(tmpDir, finalDir);
    } catch {
      // Another process put the same build in place first: use theirs.
      await rm(tmpDir, { recursive: true, force: true });
    }
    await pruneOld(cacheDir, options.name, finalDir);
    return finalDir;
  })();
  inFlight.set(finalDir, made);
  // Only while it runs: a later call checks the build again (a few stats).
  const done = (): void => void inFlight.delete(finalDir);
  made.then(done, done);
  return made;
}

/** The file in a build that lists its files and their sizes (written last, checked on use). */
export const BUILD_MANIFEST = '.build-manifest.json';

function filesOf(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesOf(path, base));
    else if (entry.name !== BUILD_MANIFEST) out.push(relative(base, path));
  }
  return out;
}

function writeManifest(dir: string): void {
  const sizes = Object.fromEntries(filesOf(dir).map((file) => [file, statSync(join(dir, file)).size]));
  writeFileSync(join(dir, BUILD_MANIFEST), JSON.stringify(sizes));
}

/** Every file the manifest lists is there with its size (a build without a manifest is not whole). */
function isWhole(dir: string): boolean {
  try {
    const sizes = JSON.parse(readFileSync(join(dir, BUILD_MANIFEST), 'utf8')) as Record<string, number>;
    const files = Object.entries(sizes);
    return files.length > 0 && files.every(([file, size]) => statSync(join(dir, file)).size === size);
  } catch {
    return false;
  }
}

/** Removes builds named `<name>-…` other than `keep` that are older than {@link BUILD_CACHE_MAX_AGE_MS}. */
async function pruneOld(cacheDir: string, name: string, keep: string): Promise<void> {
  const prefix = `${name}-`;
  for (const entry of readdirSync(cacheDir)) {
    const path = join(cacheDir, entry);
    if (!entry.startsWith(prefix) || path === keep) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > BUILD_CACHE_MAX_AGE_MS)
        await rm(path, { recursive: true, force: true });
    } catch {
      // another process removed it
    }
  }
}
