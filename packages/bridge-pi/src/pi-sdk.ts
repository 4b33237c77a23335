/**
 * pi's SDK as a worker loads it. pi ships its SDK twice: as separate modules (`dist/index.js`, the
 * package's main entry) and as one bundle with its dependencies inlined (`dist/bundle/index.js`,
 * what pi's own CLI runs), same exports. Loading the bundle takes about a quarter of the time
 * (2-core machine, compile cache warm: 0.3 s and 95 MB RSS instead of 1.1–1.2 s and 135 MB; most
 * of the difference is Node's module loader resolving and linking several hundred files), and
 * that load is most of a worker's time from spawn to its first model request (SPEC B-12: one
 * worker per turn).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as PiSdk from '@earendil-works/pi-coding-agent';

/** The module shape of `@earendil-works/pi-coding-agent`. */
export type PiSdkModule = typeof PiSdk;

/** The package whose SDK the worker runs. */
export const PI_PACKAGE = '@earendil-works/pi-coding-agent';

/** The exports a worker and the probe use; a bundle without them is not used. */
const USED: readonly (keyof PiSdkModule)[] = [
  'createAgentSession',
  'DefaultResourceLoader',
  'ModelRuntime',
  'SessionManager',
  'SettingsManager',
];

/**
 * `file:` URL of the bundle pi ships beside its main entry, or `undefined` when this pi version
 * has none (resolved from this module, so from the bridge's own dependency).
 */
export function piBundleUrl(): URL | undefined {
  const bundle = new URL('./bundle/index.js', import.meta.resolve(PI_PACKAGE));
  return existsSync(fileURLToPath(bundle)) ? bundle : undefined;
}

/** Which form {@link importPiSdk} loaded. */
export type PiSdkSource = 'bundle' | 'modules';

/**
 * Imports pi's SDK: the bundle when pi ships one that has every export the bridge uses, otherwise
 * the package's main entry. Throws what the import throws (pi missing or broken).
 */
export async function importPiSdk(): Promise<{ sdk: PiSdkModule; source: PiSdkSource }> {
  const bundle = piBundleUrl();
  if (bundle !== undefined) {
    const sdk = (await import(bundle.href)) as PiSdkModule;
    if (USED.every((name) => typeof sdk[name] === 'function')) return { sdk, source: 'bundle' };
  }
  return { sdk: (await import(PI_PACKAGE)) as PiSdkModule, source: 'modules' };
}
