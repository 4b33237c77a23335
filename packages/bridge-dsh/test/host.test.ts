import { hostDescriptorSuite } from '@agentmail/testkit/conformance';
import { GUARDED_TOOLS, PLATFORM } from '../src/host.js';

// This bridge's host.json: valid for the Gateway CLI, and the one place of its guarded tools (P-3).
hostDescriptorSuite({
  file: new URL('../host.json', import.meta.url),
  code: { platform: PLATFORM, guardedTools: GUARDED_TOOLS },
  guarded: ['bash', 'pwsh', 'write', 'edit', 'str_replace_editor'],
  why: "DSH's shells, file writing/editing and str_replace_editor are guarded (P-3)",
});
