import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PERMISSION_MODE,
  decideToolCall,
  GUARDED_TOOLS,
  isGuardedTool,
  normalizePermissionMode,
  type Platform,
} from '../src/permission-mode.js';

const PLATFORMS = Object.keys(GUARDED_TOOLS) as Platform[];

describe('normalizePermissionMode (P-2)', () => {
  it('passes the three mode names through exactly', () => {
    expect(normalizePermissionMode('plan')).toBe('plan');
    expect(normalizePermissionMode('workspace')).toBe('workspace');
    expect(normalizePermissionMode('full')).toBe('full');
  });

  it.each(['FULL', 'Full', ' full', 'full ', 'PLAN', 'bypass', '', null, undefined, 1, true, {}, ['full']])(
    'falls back to workspace, never full, for %j',
    (value) => {
      expect(normalizePermissionMode(value)).toBe('workspace');
    },
  );

  it('the default is workspace', () => {
    expect(DEFAULT_PERMISSION_MODE).toBe('workspace');
  });
});

describe('guarded tools (P-3)', () => {
  it('every platform guards a shell and file writing/editing', () => {
    expect(GUARDED_TOOLS.pi).toEqual(expect.arrayContaining(['bash', 'write', 'edit']));
    expect(GUARDED_TOOLS.opencode).toEqual(
      expect.arrayContaining(['bash', 'write', 'edit', 'patch', 'apply_patch']),
    );
    expect(GUARDED_TOOLS.dsh).toEqual(
      expect.arrayContaining(['bash', 'pwsh', 'write', 'edit', 'str_replace_editor']),
    );
    expect(GUARDED_TOOLS.zcode).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit']));
  });

  it("ZCode's names are its v3.15.1 built-ins (no Claude-only MultiEdit/NotebookEdit), its REPL included", () => {
    expect([...GUARDED_TOOLS.zcode]).toEqual(['Bash', 'Write', 'Edit', 'ApplyPatch', 'js']);
    for (const readOnly of ['Read', 'Glob', 'Grep', 'WebFetch', 'TodoWrite', 'AskUserQuestion'])
      expect(isGuardedTool('zcode', readOnly), readOnly).toBe(false);
  });

  it('read-only and mail tools are not guarded', () => {
    for (const p of PLATFORMS) {
      for (const tool of ['read', 'grep', 'glob', 'read_inbox', 'send_mail', 'Read']) {
        expect(isGuardedTool(p, tool), `${p}:${tool}`).toBe(false);
      }
    }
  });

  it('matching ignores case, so a differently cased shell is still guarded', () => {
    expect(isGuardedTool('pi', 'Bash')).toBe(true);
    expect(isGuardedTool('zcode', 'bash')).toBe(true);
  });

  it('an unknown platform guards everything (fail closed)', () => {
    expect(isGuardedTool('nope' as Platform, 'read')).toBe(true);
  });

  it('the table cannot be changed at run time', () => {
    expect(() => (GUARDED_TOOLS.pi as string[]).push('x')).toThrow();
  });
});

describe('decideToolCall (P-1)', () => {
  it('plan denies guarded tools and tells the model to put its plan in the reply', () => {
    for (const p of PLATFORMS) {
      for (const tool of GUARDED_TOOLS[p]) {
        const d = decideToolCall({ mode: 'plan', platform: p, toolName: tool });
        expect(d.decision).toBe('deny');
        expect(d.reason).toContain(tool);
        expect(d.reason).toMatch(/plan in your reply/);
      }
    }
  });

  it('plan reason is localised', () => {
    const d = decideToolCall({ mode: 'plan', platform: 'pi', toolName: 'bash', locale: 'zh-CN' });
    expect(d.reason).toMatch(/计划模式/);
  });

  it('workspace asks, unless a verified sandbox or an always grant exists', () => {
    expect(decideToolCall({ mode: 'workspace', platform: 'pi', toolName: 'bash' })).toEqual({
      decision: 'ask',
    });
    expect(
      decideToolCall({ mode: 'workspace', platform: 'pi', toolName: 'bash', sandboxVerified: true }),
    ).toEqual({
      decision: 'allow',
    });
    expect(
      decideToolCall({ mode: 'workspace', platform: 'pi', toolName: 'bash', alwaysGranted: true }),
    ).toEqual({
      decision: 'allow',
    });
    expect(
      decideToolCall({
        mode: 'workspace',
        platform: 'pi',
        toolName: 'bash',
        sandboxVerified: false,
        alwaysGranted: false,
      }),
    ).toEqual({ decision: 'ask' });
  });

  it('full allows guarded tools', () => {
    expect(decideToolCall({ mode: 'full', platform: 'dsh', toolName: 'bash' })).toEqual({
      decision: 'allow',
    });
  });

  it('an unknown mode (FULL) behaves as workspace: ask, never allow (P-2)', () => {
    for (const mode of ['FULL', ' full', '', null, undefined]) {
      expect(decideToolCall({ mode, platform: 'opencode', toolName: 'bash' }).decision).toBe('ask');
    }
  });

  it('unguarded tools are allowed in every mode, plan included', () => {
    for (const mode of ['plan', 'workspace', 'full', 'bogus']) {
      expect(decideToolCall({ mode, platform: 'pi', toolName: 'read' })).toEqual({ decision: 'allow' });
    }
  });

  it('forceGuarded decides an unguarded name as guarded (the platform itself asked about it)', () => {
    const d = (mode: string) =>
      decideToolCall({ mode, platform: 'opencode', toolName: 'webfetch', forceGuarded: true });
    expect(d('workspace').decision).toBe('ask');
    expect(d('plan').decision).toBe('deny');
    expect(d('full').decision).toBe('allow');
  });
});
