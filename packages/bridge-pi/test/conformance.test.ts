/**
 * The testkit conformance scenarios for bridge-pi, on the real pi SDK in real worker processes.
 */
import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

afterAll(removeBundle);

conformanceSuite(piAdapter);
