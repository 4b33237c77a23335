import { expect, test } from 'vitest';
import { PROTOCOL_VERSION } from '../src/index.js';

test('resolves protocol from source', () => {
  expect(PROTOCOL_VERSION).toBe(1);
});
