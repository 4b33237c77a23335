import { readFileSync, writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderEndpointReference } from '../src/index.js';

// docs/PROTOCOL.md's endpoint reference is generated from the schemas; this test fails when it
// is stale. Regenerate with `pnpm --filter @agentmail/protocol run docs`.
const FILE = new URL('../../../docs/PROTOCOL.md', import.meta.url);
const START = '<!-- generated:endpoints -->';
const END = '<!-- /generated:endpoints -->';

it('docs/PROTOCOL.md endpoint reference matches the schemas', () => {
  const text = readFileSync(FILE, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  expect(a, 'start marker').toBeGreaterThan(-1);
  expect(b, 'end marker').toBeGreaterThan(a);
  const fresh = `${text.slice(0, a + START.length)}\n${renderEndpointReference()}\n${text.slice(b)}`;
  if (process.env.AGENTMAIL_WRITE_DOCS === '1') writeFileSync(FILE, fresh);
  else expect(text).toBe(fresh);
});
