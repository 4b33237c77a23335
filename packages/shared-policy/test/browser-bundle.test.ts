import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { expect, it } from 'vitest';

// The root entry is the browser-safe layer (docs/ARCHITECTURE.md): the web mailbox imports it.
// Bundled for the browser, it must resolve without a single Node built-in.
const ROOT_ENTRY = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** Records every Node built-in the bundle reaches (and marks it external so the build goes on). */
function builtinTrap(found: Set<string>): Plugin {
  return {
    name: 'builtin-trap',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.path.startsWith('node:') || BUILTINS.has(args.path)) {
          found.add(`${args.path} (imported by ${args.importer})`);
          return { path: args.path, external: true };
        }
        return undefined;
      });
    },
  };
}

it('the root entry bundles for the browser without any Node built-in', async () => {
  const found = new Set<string>();
  const result = await build({
    entryPoints: [ROOT_ENTRY],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    conditions: ['@agentmail/source', 'browser', 'import'],
    plugins: [builtinTrap(found)],
  });
  expect(result.errors).toEqual([]);
  expect([...found]).toEqual([]);
  const text = result.outputFiles[0]?.text ?? '';
  // Sanity: the bundle really holds the rules (not an empty module).
  expect(text).toContain('model-failure:');
  expect(text.length).toBeGreaterThan(10_000);
});

it('the trap catches a Node built-in (the check above can fail)', async () => {
  const found = new Set<string>();
  await build({
    stdin: {
      contents: "import { createHash } from 'node:crypto'; export const h = createHash;",
      loader: 'ts',
    },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    plugins: [builtinTrap(found)],
  });
  expect([...found]).toHaveLength(1);
});
