import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZCODE_STANDIN_ENTRY } from '../src/zcode/index.js';
import buildConfig from '../tsup.config.js';

// Every export and bin of the package must be a file `pnpm --filter @agentmail/testkit build`
// writes: an export whose entry the build script leaves out resolves to nothing once built
// (the `./zcode` export did). Read from package.json, so a new export without its entry turns red.

const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, { '@agentmail/source': string; types?: string; default: string }>;
  bin: Record<string, string>;
};

/** `dist/…` files the build's tsup entries produce (entry name `a/b` → `dist/a/b.js`). */
function builtFiles(): Set<string> {
  const config = Array.isArray(buildConfig) ? buildConfig : [buildConfig];
  const names = config.flatMap((c) => Object.keys((c as { entry: Record<string, string> }).entry));
  return new Set(names.map((name) => `./dist/${name}.js`));
}

describe('the testkit package build', () => {
  it('builds every export and every bin', () => {
    const built = builtFiles();
    for (const [name, target] of Object.entries(pkg.exports)) {
      expect(built, `export ${name}`).toContain(target.default);
      // No declarations are built (a private kit; its users read the sources): no `types` to miss.
      expect(target.types, `export ${name}`).toBeUndefined();
      expect(existsSync(join(root, target['@agentmail/source'])), `export ${name} source`).toBe(true);
    }
    for (const [name, file] of Object.entries(pkg.bin)) expect(built, `bin ${name}`).toContain(file);
  });

  it('has the ZCode stand-in as the bin agentmail-zcode-standin, built from its entry', () => {
    expect(pkg.bin['agentmail-zcode-standin']).toBe('./dist/zcode/main.js');
    expect(ZCODE_STANDIN_ENTRY).toBe(join(root, 'src', 'zcode', 'main.ts'));
    expect(readFileSync(ZCODE_STANDIN_ENTRY, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});
