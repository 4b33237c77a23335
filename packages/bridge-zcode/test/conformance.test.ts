import { conformanceSuite } from '@agentmail/testkit/conformance';
import { afterAll } from 'vitest';
import { removeBundle, zcodeAdapter } from '../harness/zcode-adapter.js';

// The whole conformance suite through the testkit's ZCode stand-in (a real MCP client to the
// plugin's server, the plugin's hooks as real processes, ZCode's headless permission behaviour),
// the scripted model's Anthropic endpoint and a real Gateway. `workspace` runs as `build` with the
// plugin's PreToolUse gate; questions go through the kit's ask_person mail tool (SPEC P-10).
afterAll(removeBundle);
conformanceSuite(zcodeAdapter);
