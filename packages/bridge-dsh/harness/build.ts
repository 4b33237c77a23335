/**
 * Builds the plugin for the tests as DSH users install it: a **bundle package** directory (the
 * tsup bundle `plugin.js`, a `package.json` named `@agentmail/bridge-dsh` with `"dsh": {"bundle":
 * {"patch": …}}` and this package's `cordis.patch.yml`), under node_modules/.cache so the bundle's
 * imports (`pino`, `@deepseek-ai/*`) resolve from this package's node_modules — as they do for the
 * published `dist/` — and one copy of each DSH package is shared with the dsh under test.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cachedBuild } from '@agentmail/testkit';
import { DSH_BRIDGE_ROOT, dshPluginBuild } from '../tsup.config.js';

/** A built bundle package. */
export interface BuiltBundle {
  /** The bundle package directory (for `dsh plugin add <dir>`). */
  dir: string;
  /** Absolute path of `plugin.js` (for a `--patch` row `name`). */
  pluginJs: string;
  remove(): Promise<void>;
}

/**
 * Bundles src/index.ts into a bundle package directory, once per source version (testkit's
 * `cachedBuild`: shared by every test file); `remove()` leaves it in place.
 */
export async function buildBundle(): Promise<BuiltBundle> {
  const dir = await cachedBuild({
    packageRoot: DSH_BRIDGE_ROOT,
    name: 'bridge-dsh-bundle',
    build: makeBundle,
  });
  return { dir, pluginJs: join(dir, 'plugin.js'), remove: async () => {} };
}

/** Makes the bundle package in `dir`. */
async function makeBundle(dir: string): Promise<void> {
  const { build } = await import('tsup');
  await build({ ...dshPluginBuild(dir), config: false });
  const manifest = {
    name: '@agentmail/bridge-dsh',
    version: '0.0.0-test',
    type: 'module',
    exports: {
      '.': './plugin.js',
      './cordis.patch.yml': './cordis.patch.yml',
      './package.json': './package.json',
    },
    dsh: { bundle: { patch: './cordis.patch.yml' } },
  };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await copyFile(join(DSH_BRIDGE_ROOT, 'cordis.patch.yml'), join(dir, 'cordis.patch.yml'));
}

let shared: Promise<BuiltBundle> | undefined;

/** One bundle per test process, built on first use; {@link removeSharedBundle} in `afterAll`. */
export function sharedBundle(): Promise<BuiltBundle> {
  shared ??= buildBundle();
  return shared;
}

/** Removes the shared bundle (call in `afterAll`). */
export async function removeSharedBundle(): Promise<void> {
  const built = shared;
  shared = undefined;
  if (built) await (await built).remove();
}
