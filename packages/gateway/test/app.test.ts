import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/index.js';

describe('buildApp', () => {
  it('emits no deprecation warning (FSTDEP023: request logging is set through a LogController)', async () => {
    const warnings: Error[] = [];
    const collect = (w: Error) => {
      warnings.push(w);
    };
    process.on('warning', collect);
    const dataDir = mkdtempSync(join(tmpdir(), 'agentmail-app-'));
    try {
      for (const logLevel of ['silent', 'info'] as const) {
        const app = await buildApp({ dataDir, logLevel, sweepTimer: false });
        await app.ready();
        // Node emits a warning on the next tick; closing the app takes several.
        await app.close();
      }
    } finally {
      process.off('warning', collect);
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(warnings.map((w) => `${(w as { code?: string }).code ?? w.name}: ${w.message}`)).toEqual([]);
  });
});
