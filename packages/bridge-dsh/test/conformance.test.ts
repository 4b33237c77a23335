/**
 * The testkit conformance scenarios for bridge-dsh: the plugin bundled and loaded by the real dsh
 * (base profile: dsh-base alone), the real Gateway, the scripted model.
 */
import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { removeSharedBundle } from '../harness/build.js';
import { dshAdapter } from '../harness/dsh-adapter.js';

afterAll(removeSharedBundle);

conformanceSuite(dshAdapter);
