import { describe, expect, it } from 'vitest';
import { importPiSdk, PI_PACKAGE, piBundleUrl } from '../src/pi-sdk.js';

describe("pi's SDK as a worker loads it", () => {
  it('is the bundle pi ships, with every export of the main entry', async () => {
    expect(piBundleUrl()?.pathname).toMatch(/\/pi-coding-agent\/dist\/bundle\/index\.js$/);
    const { sdk, source } = await importPiSdk();
    expect(source).toBe('bundle');
    const main = (await import(PI_PACKAGE)) as Record<string, unknown>;
    expect(Object.keys(sdk).sort()).toEqual(Object.keys(main).sort());
    // Really the bundle, not the main entry under another name.
    expect(sdk.createAgentSession).not.toBe(main.createAgentSession);
  });
});
