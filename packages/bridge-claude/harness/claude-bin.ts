/**
 * The real `claude` binary of the pinned `@anthropic-ai/claude-code` dev dependency. Its own
 * `bin/claude.exe` is a stub until its postinstall links the platform binary over it; the script
 * is not run (pnpm-workspace.yaml `allowBuilds`), so the platform package Claude Code lists as an
 * optional dependency (`@anthropic-ai/claude-code-linux-x64`, `-musl`, …) is resolved from its
 * own directory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The pinned Claude Code version. */
export function claudeVersion(): string {
  return (
    JSON.parse(readFileSync(require.resolve('@anthropic-ai/claude-code/package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
}

/**
 * Absolute path of the `claude` executable for this machine.
 * @throws Error when no platform package is installed (run `pnpm install`).
 */
export function claudeBinary(): string {
  const fromPackage = createRequire(require.resolve('@anthropic-ai/claude-code/package.json'));
  const os = process.platform === 'win32' ? 'win32' : process.platform;
  const base = `@anthropic-ai/claude-code-${os}-${process.arch}`;
  const exe = process.platform === 'win32' ? 'claude.exe' : 'claude';
  const tried: string[] = [];
  for (const name of [base, `${base}-musl`]) {
    try {
      const bin = join(dirname(fromPackage.resolve(`${name}/package.json`)), exe);
      if (existsSync(bin)) return bin;
      tried.push(bin);
    } catch {
      tried.push(`${name} (not installed)`);
    }
  }
  throw new Error(`no Claude Code platform binary; tried ${tried.join(', ')}. Run pnpm install.`);
}
