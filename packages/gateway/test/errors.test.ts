import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_ERRORS, GATEWAY_ERRORS } from '../src/index.js';

describe('gateway error registry', () => {
  it('codes are unique and each is documented in docs/errors.md', () => {
    const codes = Object.values(GATEWAY_ERRORS).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8');
    const section = doc.split('## @agentmail/gateway')[1] ?? '';
    for (const code of codes) expect(section, code).toContain(`\`${code}\``);
  });

  it('the startup codes of the data directory are documented too', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8');
    const section = (doc.split('## @agentmail/gateway')[1] ?? '').split('\n## ')[0] ?? '';
    for (const code of Object.values(DATA_DIR_ERRORS)) expect(section, code).toContain(`\`${code}\``);
  });

  it('statuses keep the G-13 retry meaning: only 429/5xx are transient', () => {
    for (const e of Object.values(GATEWAY_ERRORS)) {
      const status: number = e.status;
      const transient = status >= 500 || status === 429 || status === 408;
      expect(transient, e.code).toBe(['rate_limited', 'internal', 'unavailable'].includes(e.error));
    }
  });
});
