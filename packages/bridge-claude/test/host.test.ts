import { hostDescriptorSuite } from '@agentmail/testkit/conformance';
import { GUARDED_TOOLS, PLATFORM } from '../src/host.js';

// This bridge's host.json: valid for the Gateway CLI, and the one place of its guarded tools (P-3).
hostDescriptorSuite({
  file: new URL('../host.json', import.meta.url),
  code: { platform: PLATFORM, guardedTools: GUARDED_TOOLS },
  guarded: ['Bash', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit'],
  why: "Claude Code's Bash, Write, Edit, NotebookEdit (and the older MultiEdit) are guarded (P-3)",
});
