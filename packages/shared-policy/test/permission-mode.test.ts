import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PERMISSION_MODE,
  decideToolCall,
  isGuardedTool,
  normalizePermissionMode,
} from '../src/permission-mode.js';

// A host's names as its descriptor gives them (each bridge's own test pins its real list).
const PI_LIKE = ['bash', 'write', 'edit'];
const CLAUDE_LIKE = ['Bash', 'Write', 'Edit'];
const HOSTS = [PI_LIKE, CLAUDE_LIKE];

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
  it('a tool is guarded when its host lists it', () => {
    for (const tool of PI_LIKE) expect(isGuardedTool(PI_LIKE, tool), tool).toBe(true);
    expect(isGuardedTool(['Bash', 'js'], 'js')).toBe(true);
  });

  it('read-only and mail tools are not guarded', () => {
    for (const names of HOSTS) {
      for (const tool of ['read', 'grep', 'glob', 'read_inbox', 'send_mail', 'Read']) {
        expect(isGuardedTool(names, tool), `${names.join(',')}:${tool}`).toBe(false);
      }
    }
  });

  it('no list, an empty list or one with a non-name guards every tool (a broken host.json fails closed)', () => {
    expect(isGuardedTool(undefined, 'read')).toBe(true);
    expect(isGuardedTool([], 'read')).toBe(true);
    expect(isGuardedTool([42, 'bash'] as unknown as string[], 'read')).toBe(true);
    expect(isGuardedTool(['', 'bash'], 'read')).toBe(true);
  });

  it('matching ignores case, so a differently cased shell is still guarded', () => {
    expect(isGuardedTool(PI_LIKE, 'Bash')).toBe(true);
    expect(isGuardedTool(CLAUDE_LIKE, 'bash')).toBe(true);
    expect(isGuardedTool(['apply_patch'], 'APPLY_PATCH')).toBe(true);
  });

  it('no list guards everything (fail closed)', () => {
    expect(isGuardedTool(undefined, 'read')).toBe(true);
    expect(isGuardedTool(undefined, '')).toBe(true);
  });
});

describe('decideToolCall (P-1)', () => {
  it('plan denies guarded tools and tells the model to put its plan in the reply', () => {
    for (const names of HOSTS) {
      for (const tool of names) {
        const d = decideToolCall({ mode: 'plan', guardedTools: names, toolName: tool });
        expect(d.decision).toBe('deny');
        expect(d.reason).toContain(tool);
        expect(d.reason).toMatch(/plan in your reply/);
      }
    }
  });

  it('plan reason is localised', () => {
    const d = decideToolCall({ mode: 'plan', guardedTools: PI_LIKE, toolName: 'bash', locale: 'zh-CN' });
    expect(d.reason).toMatch(/计划模式/);
  });

  it('workspace asks, unless a verified sandbox or an always grant exists', () => {
    expect(decideToolCall({ mode: 'workspace', guardedTools: PI_LIKE, toolName: 'bash' })).toEqual({
      decision: 'ask',
    });
    expect(
      decideToolCall({ mode: 'workspace', guardedTools: PI_LIKE, toolName: 'bash', sandboxVerified: true }),
    ).toEqual({
      decision: 'allow',
    });
    expect(
      decideToolCall({ mode: 'workspace', guardedTools: PI_LIKE, toolName: 'bash', alwaysGranted: true }),
    ).toEqual({
      decision: 'allow',
    });
    expect(
      decideToolCall({
        mode: 'workspace',
        guardedTools: PI_LIKE,
        toolName: 'bash',
        sandboxVerified: false,
        alwaysGranted: false,
      }),
    ).toEqual({ decision: 'ask' });
  });

  it('full allows guarded tools', () => {
    expect(decideToolCall({ mode: 'full', guardedTools: PI_LIKE, toolName: 'bash' })).toEqual({
      decision: 'allow',
    });
  });

  it('an unknown mode (FULL) behaves as workspace: ask, never allow (P-2)', () => {
    for (const mode of ['FULL', ' full', '', null, undefined]) {
      expect(decideToolCall({ mode, guardedTools: PI_LIKE, toolName: 'bash' }).decision).toBe('ask');
    }
  });

  it('unguarded tools are allowed in every mode, plan included', () => {
    for (const mode of ['plan', 'workspace', 'full', 'bogus']) {
      expect(decideToolCall({ mode, guardedTools: PI_LIKE, toolName: 'read' })).toEqual({
        decision: 'allow',
      });
    }
  });

  it('forceGuarded decides an unguarded name as guarded (the platform itself asked about it)', () => {
    const d = (mode: string) =>
      decideToolCall({ mode, guardedTools: PI_LIKE, toolName: 'webfetch', forceGuarded: true });
    expect(d('workspace').decision).toBe('ask');
    expect(d('plan').decision).toBe('deny');
    expect(d('full').decision).toBe('allow');
  });
});
