import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { claudeAdapter, removeBundle } from '../harness/claude-adapter.js';

// The whole conformance suite against the real pinned `claude` binary (isolated HOME/TMPDIR,
// retries capped), the scripted model's Anthropic endpoint and a real Gateway. Questions go
// through the kit's ask_person mail tool (SPEC P-10): Claude Code 2.1.328 disables its own
// AskUserQuestion in -p.
afterAll(removeBundle);
conformanceSuite(claudeAdapter);
