/**
 * The testkit conformance scenarios for bridge-dsh in DSH's shipped `web` profile: the web host
 * owns the approval answerer (greedy: it claims any pending ask and waits for a browser) and the
 * question provider, and model-facing tools live in agent presets — mail sessions mount the
 * roster's default preset, their seams answer first.
 */
import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { removeSharedBundle } from '../harness/build.js';
import { createDshAdapter } from '../harness/dsh-adapter.js';

afterAll(removeSharedBundle);

conformanceSuite(createDshAdapter({ profile: 'web' }), { label: 'dsh (web profile)' });
