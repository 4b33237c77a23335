import { CONFORMANCE_SCENARIOS, conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { claudeAdapter, removeBundle } from '../harness/claude-adapter.js';

// The whole conformance suite against the real pinned `claude` binary (isolated HOME/TMPDIR,
// retries capped), the scripted model's Anthropic endpoint and a real Gateway.
afterAll(removeBundle);

// SPEC P-9: a question scenario opts out, whatever its id (README "Questions").
const NO_QUESTION_SEAM =
  'Claude Code 2.1.328 disables AskUserQuestion in -p (not in its tool list, "No such tool available"): no question seam to bridge';
conformanceSuite(claudeAdapter, {
  skip: Object.fromEntries(
    CONFORMANCE_SCENARIOS.filter((s) => s.rules.includes('P-9')).map((s) => [s.id, NO_QUESTION_SEAM]),
  ),
});
