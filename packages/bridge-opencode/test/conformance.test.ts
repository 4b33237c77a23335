/**
 * The testkit conformance scenarios for bridge-opencode: the plugin bundled and loaded by the real
 * opencode binary (`opencode serve` in a sandbox), the real Gateway, the scripted model.
 */
import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { opencodeAdapter, removePluginBundle } from '../harness/opencode-adapter.js';

afterAll(removePluginBundle);

conformanceSuite(opencodeAdapter);
