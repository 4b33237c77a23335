import { hostDescriptorSuite } from '@agentmail/testkit/conformance';
import { GUARDED_TOOLS, PLATFORM } from '../src/host.js';

// This bridge's host.json: valid for the Gateway CLI, and the one place of its guarded tools (P-3).
hostDescriptorSuite({
  file: new URL('../host.json', import.meta.url),
  code: { platform: PLATFORM, guardedTools: GUARDED_TOOLS },
  guarded: ['Bash', 'Write', 'Edit', 'ApplyPatch', 'js'],
  why: "ZCode's names are its v3.15.1 built-ins (no Claude-only MultiEdit/NotebookEdit), its REPL included (P-3)",
  readOnly: ['Read', 'Glob', 'Grep', 'WebFetch', 'TodoWrite', 'AskUserQuestion'],
});
