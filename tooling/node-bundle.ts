/**
 * The one recipe for a self-contained Node.js build of ours, used by every package's
 * `tsup.config.ts` and by the test harnesses that bundle a program for a child process.
 *
 * What every such build shares: ESM for Node 22; the `@agentmail/*` packages inlined from their
 * TypeScript sources (the `@agentmail/source` condition), so a fresh clone builds any package
 * without building its siblings first; a package's ESM build preferred (a UMD `main`, as
 * jsonc-parser's, hides its requires from esbuild); a `require` for the CommonJS packages a bundle
 * inlines; no tsup config file. What differs is stated by the caller: which packages stay imports
 * ({@link NodeBundleSpec.keep}), and chunks, source maps, cleaning, declarations.
 *
 * Lives outside the packages and is imported by relative path: a build must work before anything
 * is built.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Options } from 'tsup';

/** What one self-contained build makes. */
export interface NodeBundleSpec {
  /** Output name → absolute source path. */
  entries: Readonly<Record<string, string>>;
  /** Absolute output directory. */
  outDir: string;
  /** Absolute path of the tsconfig esbuild reads (paths, JSX, decorators). */
  tsconfig: string;
  /**
   * Packages that stay imports, resolved from node_modules at run time (subpaths included): a
   * package name, or a scope ending in `/` (`@deepseek-ai/`). Everything else is inlined. Keep a
   * native module (better-sqlite3), a package that reads its own files (pi), or the host's own
   * packages a plugin shares with it. @default [] (everything inlined)
   */
  keep?: readonly string[];
  /** Shared chunks (keeps a lazy `import()` lazy). @default false (one file per entry) */
  splitting?: boolean;
  /** @default false */
  sourcemap?: boolean;
  /** Empty `outDir` first; globs as tsup takes them. @default false */
  clean?: boolean | string[];
  /** Declaration files too. @default false */
  dts?: boolean;
  /** Give the ESM bundle a `require` for inlined CommonJS code. @default true */
  requireShim?: boolean;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The pattern a {@link NodeBundleSpec.keep} entry stands for. */
function keptPattern(name: string): string {
  return name.endsWith('/') ? escapeRegExp(name) : `${escapeRegExp(name)}(?:/|$)`;
}

/** tsup options for {@link NodeBundleSpec} (spread into `defineConfig` or `build`). */
export function nodeBundle(spec: NodeBundleSpec): Options {
  const keep = spec.keep ?? [];
  const kept = keep.map(keptPattern);
  return {
    entry: { ...spec.entries },
    outDir: spec.outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node22',
    tsconfig: spec.tsconfig,
    dts: spec.dts ?? false,
    sourcemap: spec.sourcemap ?? false,
    splitting: spec.splitting ?? false,
    clean: spec.clean ?? false,
    silent: true,
    config: false,
    noExternal: [kept.length === 0 ? /./ : new RegExp(`^(?!(?:${kept.join('|')}))`)],
    ...(kept.length === 0 ? {} : { external: kept.map((p) => new RegExp(`^${p}`)) }),
    ...((spec.requireShim ?? true)
      ? {
          banner: {
            js: "import { createRequire as __amCreateRequire } from 'node:module'; const require = __amCreateRequire(import.meta.url);",
          },
        }
      : {}),
    esbuildOptions(options) {
      options.conditions = ['@agentmail/source'];
      options.mainFields = ['module', 'main'];
    },
  };
}

/**
 * The registry packages `packageRoot/package.json` declares (`dependencies`, and with `dev` also
 * `devDependencies`), without the workspace's own `@agentmail/*`: what a package build keeps as
 * imports, resolved from that package's node_modules.
 */
export function ownDependencies(packageRoot: string, { dev = false }: { dev?: boolean } = {}): string[] {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const names = Object.keys({ ...pkg.dependencies, ...(dev ? pkg.devDependencies : {}) });
  return names.filter((name) => !name.startsWith('@agentmail/'));
}
