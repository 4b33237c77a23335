/**
 * Self-contained builds for Node.js. Above all the tool and hook processes for a host's plugin directory:
 * `mcp.js` (src/mcp-main.ts) and `hook.js` (src/hook-main.ts), each one ESM file with every
 * dependency inlined (the AgentMail packages from their sources, the MCP SDK, zod), so a plugin
 * directory needs nothing but Node.js >= 22.19. Used by the bridges' builds (Claude Code now,
 * ZCode next) and their test harnesses.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

/** Root directory of the host-tools package. */
// One level below the package root both as src/bundle.ts and as dist/bundle.js.
export const HOST_TOOLS_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The entry files, by output name. */
export const HOST_TOOL_ENTRIES: Readonly<Record<'mcp' | 'hook', string>> = {
  mcp: join(HOST_TOOLS_ROOT, 'src', 'mcp-main.ts'),
  hook: join(HOST_TOOLS_ROOT, 'src', 'hook-main.ts'),
};

/**
 * tsup options that bundle `entries` (output name → source file) into self-contained ESM files in
 * `outDir`: every dependency inlined, the AgentMail packages from their sources. `dts` adds
 * declaration files (a package build). Used for the plugin scripts and for a bridge's daemon.
 */
export function nodeBundleOptions(
  entries: Readonly<Record<string, string>>,
  outDir: string,
  { dts = false }: { dts?: boolean } = {},
): Options {
  return {
    entry: { ...entries },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node22',
    tsconfig: join(HOST_TOOLS_ROOT, 'tsconfig.build.json'),
    dts,
    sourcemap: false,
    // Separate files: the hook must not load the MCP SDK or zod.
    splitting: false,
    clean: false,
    silent: true,
    noExternal: [/./],
    // Inlined CommonJS packages (undici, ajv) require node builtins: give the ESM bundle a require.
    banner: {
      js: "import { createRequire as __amCreateRequire } from 'node:module'; const require = __amCreateRequire(import.meta.url);",
    },
    esbuildOptions(options) {
      options.conditions = ['@agentmail/source'];
      options.mainFields = ['module', 'main'];
    },
  };
}

/** Bundle both files into `outDir` (created). */
export async function buildHostTools(outDir: string): Promise<{ mcpJs: string; hookJs: string }> {
  const { build } = await import('tsup');
  await build({ ...nodeBundleOptions(HOST_TOOL_ENTRIES, outDir), config: false });
  return { mcpJs: join(outDir, 'mcp.js'), hookJs: join(outDir, 'hook.js') };
}
