/**
 * Where the pinned Claude Code of this checkout is: the `@anthropic-ai/claude-code` dev dependency
 * `pnpm install` put next to this package. Its `bin/claude.exe` is a stub that only prints "Run the
 * postinstall manually" until the package's postinstall has hard-linked the platform binary over
 * it (pnpm runs it: `allowBuilds` in pnpm-workspace.yaml). An install made while the script was
 * not allowed still has the platform package Claude Code lists as an optional dependency
 * (`@anthropic-ai/claude-code-linux-x64`, `-musl`, …): it is used directly then. The driver's
 * default, the test harness and (through the checkout path `node_modules/.bin/claude`) `agentmail
 * service install claude` all end at this one binary.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The stub Claude Code ships as `bin/claude.exe` is a 500-byte shell script; the binary is ~370 MB. */
const STUB_MAX_BYTES = 4096;

/**
 * Absolute path of the pinned `claude` executable for this machine, or undefined when this
 * package's Claude Code dev dependency is not installed (a copy of the built package outside the
 * checkout, or `pnpm install --prod`). Never throws.
 * @param from a file or directory inside this package, whose `node_modules` are searched.
 * @default from this module's own location (the sources, or `dist/` once bundled)
 */
export function pinnedClaudeBinary(from: string = import.meta.url): string | undefined {
  let packageDir: string;
  try {
    packageDir = dirname(createRequire(from).resolve('@anthropic-ai/claude-code/package.json'));
  } catch {
    return undefined;
  }
  // `bin/claude.exe` on every platform: the package's `bin` field points there.
  const placed = join(packageDir, 'bin', 'claude.exe');
  if (isBinary(placed)) return placed;
  // The postinstall did not run: the platform package, resolved from Claude Code's own directory.
  const fromPackage = createRequire(join(packageDir, 'package.json'));
  const base = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  const exe = process.platform === 'win32' ? 'claude.exe' : 'claude';
  for (const name of [base, `${base}-musl`]) {
    try {
      const bin = join(dirname(fromPackage.resolve(`${name}/package.json`)), exe);
      if (isBinary(bin)) return bin;
    } catch {
      // not installed for this platform: try the next
    }
  }
  return undefined;
}

function isBinary(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).size > STUB_MAX_BYTES;
  } catch {
    return false;
  }
}
