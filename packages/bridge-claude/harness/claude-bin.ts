/**
 * The real `claude` binary of the pinned `@anthropic-ai/claude-code` dev dependency, found as the
 * driver finds it (src/claude-bin.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pinnedClaudeBinary } from '../src/claude-bin.js';

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
 * Absolute path of the pinned `claude` executable for this machine: the driver's own default
 * ({@link pinnedClaudeBinary}), so the tests run the binary a person gets after `pnpm install`.
 * @throws Error when no Claude Code binary is installed (run `pnpm install`).
 */
export function claudeBinary(): string {
  const bin = pinnedClaudeBinary();
  if (bin === undefined)
    throw new Error('no Claude Code binary in packages/bridge-claude/node_modules: run pnpm install.');
  return bin;
}
