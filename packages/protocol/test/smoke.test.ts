import { expect, test } from 'vitest';
import { PROTOCOL_VERSION } from '../src/index.js';

test('protocol version', () => {
  expect(PROTOCOL_VERSION).toBe(1);
});
