/**
 * Path of the real opencode binary installed by the `opencode-ai` dev dependency.
 *
 * `opencode-ai`'s own `bin/opencode.exe` is a placeholder that its postinstall script replaces by
 * hard-linking the platform binary. That script is not run (pnpm-workspace.yaml `allowBuilds:
 * opencode-ai: false`): it can fall back to `npm install` from the network, and skipped scripts
 * (`--ignore-scripts`, a CI cache) would leave the placeholder. Instead the platform package that
 * `opencode-ai` lists as an optional dependency (`opencode-linux-x64`, …) is resolved from
 * `opencode-ai`'s own directory, choosing the variant the same way the postinstall does (x64
 * without AVX2 → `-baseline`; musl → `-musl`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

function hasAvx2(): boolean {
  try {
    return /(^|\s)avx2(\s|$)/i.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}

function isMusl(): boolean {
  if (existsSync('/etc/alpine-release')) return true;
  try {
    return execFileSync('ldd', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .toLowerCase()
      .includes('musl');
  } catch (error) {
    // musl's ldd prints its banner on stderr and exits 1.
    const stderr = (error as { stderr?: unknown }).stderr;
    return typeof stderr === 'string' && stderr.toLowerCase().includes('musl');
  }
}

/** Platform package names to try, best first. */
function candidates(): string[] {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const base = `opencode-${platform}-${process.arch}`;
  if (process.arch !== 'x64') return platform === 'linux' ? [base, `${base}-musl`] : [base];
  const plain = hasAvx2() ? [base, `${base}-baseline`] : [`${base}-baseline`, base];
  if (platform !== 'linux') return plain;
  const musl = plain.map((name) => `${name}-musl`);
  return isMusl() ? [...musl, ...plain] : [...plain, ...musl];
}

let cached: string | undefined;

/**
 * Absolute path of the opencode executable for this machine.
 * @throws Error when no platform package of `opencode-ai` is installed (run `pnpm install`).
 */
export function opencodeBinary(): string {
  if (cached !== undefined) return cached;
  const require = createRequire(import.meta.url);
  const opencodeAi = require.resolve('opencode-ai/package.json');
  const fromOpencodeAi = createRequire(opencodeAi);
  const exe = process.platform === 'win32' ? 'opencode.exe' : 'opencode';
  const tried: string[] = [];
  for (const name of candidates()) {
    try {
      const bin = join(dirname(fromOpencodeAi.resolve(`${name}/package.json`)), 'bin', exe);
      if (existsSync(bin)) {
        cached = bin;
        return bin;
      }
      tried.push(bin);
    } catch {
      tried.push(`${name} (not installed)`);
    }
  }
  throw new Error(
    `no opencode platform binary next to ${opencodeAi}; tried: ${tried.join(', ')}. Run pnpm install.`,
  );
}

/** The pinned opencode version (`opencode-ai`'s package.json). */
export function opencodeVersion(): string {
  const require = createRequire(import.meta.url);
  return (
    JSON.parse(readFileSync(require.resolve('opencode-ai/package.json'), 'utf8')) as { version: string }
  ).version;
}
