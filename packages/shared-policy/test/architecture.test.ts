import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// docs/ARCHITECTURE.md: bridges → shared-policy → protocol; gateway → shared-policy → protocol;
// nothing depends on the gateway but the testkit; protocol depends on nothing of ours.
const PACKAGES = new URL('../../', import.meta.url);

function internalDeps(dir: string): { name: string; deps: string[]; devDeps: string[] } {
  const pkg = JSON.parse(readFileSync(new URL(`${dir}/package.json`, PACKAGES), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const ours = (m: Record<string, string> = {}) => Object.keys(m).filter((n) => n.startsWith('@agentmail/'));
  return { name: pkg.name, deps: ours(pkg.dependencies), devDeps: ours(pkg.devDependencies) };
}

const ALLOWED: Record<string, (dep: string, dev: boolean) => boolean> = {
  '@agentmail/protocol': () => false,
  '@agentmail/shared-policy': (d) => d === '@agentmail/protocol',
  '@agentmail/gateway': (d) => d === '@agentmail/protocol' || d === '@agentmail/shared-policy',
  '@agentmail/testkit': (d) => !d.startsWith('@agentmail/bridge-'),
};
// Bridge tests start a real Gateway in-process (buildApp), so a bridge may dev-depend on it.
const bridgeRule = (d: string, dev: boolean) =>
  d === '@agentmail/protocol' ||
  d === '@agentmail/shared-policy' ||
  (dev && (d === '@agentmail/testkit' || d === '@agentmail/gateway'));

it('internal dependencies point one way', () => {
  const dirs = readdirSync(PACKAGES, { withFileTypes: true }).filter((d) => d.isDirectory());
  const bad: string[] = [];
  for (const d of dirs) {
    const { name, deps, devDeps } = internalDeps(d.name);
    const rule = ALLOWED[name] ?? (name.startsWith('@agentmail/bridge-') ? bridgeRule : undefined);
    expect(rule, `no dependency rule for ${name}`).toBeDefined();
    for (const dep of deps) if (!rule?.(dep, false)) bad.push(`${name} → ${dep}`);
    for (const dep of devDeps) if (!rule?.(dep, true)) bad.push(`${name} → ${dep} (dev)`);
  }
  expect(bad).toEqual([]);
});
