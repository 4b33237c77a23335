import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { claudeAdapter, removeBundle } from '../harness/claude-adapter.js';

// The whole conformance suite against the real pinned `claude` binary (isolated HOME/TMPDIR,
// retries capped), the scripted model's Anthropic endpoint and a real Gateway.
afterAll(removeBundle);
conformanceSuite(claudeAdapter);
