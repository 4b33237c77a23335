/**
 * The pinned real `dsh` of this package's dev dependencies (`@deepseek-ai/dsh`, exact version),
 * run with the Node.js that runs the tests (>= 22.19: DSH needs Node 22, research dsh.md §1).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DSH_BRIDGE_ROOT } from '../tsup.config.js';

const require = createRequire(join(DSH_BRIDGE_ROOT, 'package.json'));

/** Absolute path of dsh's CLI entry (`lib/bin.js` of `@deepseek-ai/dsh`). */
export function dshBin(): string {
  return join(dirname(require.resolve('@deepseek-ai/dsh/package.json')), 'lib', 'bin.js');
}

/** The installed dsh version (from its package.json). */
export function dshVersion(): string {
  return (require('@deepseek-ai/dsh/package.json') as { version: string }).version;
}
