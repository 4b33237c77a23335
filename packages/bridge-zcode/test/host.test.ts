import { readFileSync } from 'node:fs';
import { parseHostDescriptor } from '@agentmail/protocol';
import { isGuardedTool } from '@agentmail/shared-policy';
import { describe, expect, it } from 'vitest';
import { GUARDED_TOOLS, PLATFORM } from '../src/host.js';

// The bridge's host descriptor (host.json): valid for the Gateway CLI, and the one place of its
// guarded tool names (SPEC P-3).
const file = new URL('../host.json', import.meta.url);

describe('host descriptor', () => {
  it('passes the schema the Gateway CLI discovers it with', () => {
    const host = parseHostDescriptor(readFileSync(file, 'utf8'), 'host.json');
    expect(host.platform).toBe(PLATFORM);
    expect(host.guardedTools).toEqual([...GUARDED_TOOLS]);
  });

  it("ZCode's names are its v3.15.1 built-ins (no Claude-only MultiEdit/NotebookEdit), its REPL included (P-3)", () => {
    expect([...GUARDED_TOOLS]).toEqual(['Bash', 'Write', 'Edit', 'ApplyPatch', 'js']);
    for (const tool of GUARDED_TOOLS) expect(isGuardedTool(GUARDED_TOOLS, tool), tool).toBe(true);
  });

  it('read-only and mail tools are not guarded', () => {
    for (const tool of [
      'read',
      'grep',
      'glob',
      'read_inbox',
      'send_mail',
      'Read',
      ...['Read', 'Glob', 'Grep', 'WebFetch', 'TodoWrite', 'AskUserQuestion'],
    ])
      expect(isGuardedTool(GUARDED_TOOLS, tool), tool).toBe(false);
  });
});
