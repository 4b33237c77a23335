/**
 * The checks every bridge runs on its own host descriptor (`host.json`, docs/BRIDGE-CONTRACT.md
 * "Adding a host"): it passes the schema the Gateway CLI discovers it with, the bridge's code reads
 * the same names, and its guarded tools (SPEC P-3) are exactly the ones the bridge pins.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseHostDescriptor } from '@agentmail/protocol';
import { isGuardedTool } from '@agentmail/shared-policy';
import { describe, expect, it } from 'vitest';

/** Options of {@link hostDescriptorSuite}. */
export interface HostDescriptorSuiteOptions {
  /** The bridge's `host.json`. */
  file: URL;
  /** What the bridge's code read from it (`src/host.ts`). */
  code: { platform: string; guardedTools: readonly string[] };
  /** The guarded tools the host has, in the descriptor's order (the test's own copy: P-3 by name). */
  guarded: readonly string[];
  /** Why these names (the test's title). */
  why: string;
  /** The host's read-only tools besides the common ones (`read`, `grep`, the mail tools, …). @default none */
  readOnly?: readonly string[];
}

/** A `describe` block with the descriptor's checks; call it at a test file's top level. */
export function hostDescriptorSuite(options: HostDescriptorSuiteOptions): void {
  const { code } = options;
  describe('host descriptor', () => {
    it('passes the schema the Gateway CLI discovers it with, and the code reads the same', () => {
      const host = parseHostDescriptor(readFileSync(options.file, 'utf8'), fileURLToPath(options.file));
      expect(host.platform).toBe(code.platform);
      expect(host.guardedTools).toEqual([...code.guardedTools]);
    });

    it(options.why, () => {
      expect([...code.guardedTools]).toEqual(options.guarded);
      for (const tool of code.guardedTools) expect(isGuardedTool(code.guardedTools, tool), tool).toBe(true);
    });

    it('read-only and mail tools are not guarded', () => {
      for (const tool of [
        'read',
        'grep',
        'glob',
        'read_inbox',
        'send_mail',
        'Read',
        ...(options.readOnly ?? []),
      ])
        expect(isGuardedTool(code.guardedTools, tool), tool).toBe(false);
    });
  });
}
