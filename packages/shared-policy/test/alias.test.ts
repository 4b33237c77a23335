import { isValidAlias } from '@agentmail/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALIAS_BASE_MAX_LENGTH,
  ALIAS_MAX_SUFFIX,
  aliasBase,
  aliasCandidates,
  aliasFromSubject,
  pickFreeAlias,
} from '../src/alias.js';
import { hasErrorCode } from '../src/errors.js';

function errorOf(fn: () => unknown): { code: unknown; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: unknown; message: string };
  }
  throw new Error('expected a throw');
}

describe('aliases from subjects (SPEC G-5)', () => {
  const SID = '0B7C52E1-9f00-4c1e-8d6a-5b1f2e3d4c5b';

  it('folds agent name and subject', () => {
    expect(aliasBase('pi', 'Fix import paths!')).toBe('pi-fix-import-paths');
    expect(aliasBase('pi', '  --Fix   import__paths!!  ')).toBe('pi-fix-import-paths');
    expect(aliasBase('pi', '')).toBe('pi');
    expect(aliasBase('', '!!!')).toBe('');
  });

  it('keeps letters and digits of any script', () => {
    expect(aliasBase('pi', '修复 导入路径 v2')).toBe('pi-修复-导入路径-v2');
    expect(aliasBase('pi', 'Ошибка #42')).toBe('pi-ошибка-42');
    expect(aliasBase('pi', 'हिन्दी')).toBe('pi-हिन्दी'); // combining marks kept
    expect(aliasBase('pi', 'Ｆｉｘ ①')).toBe('pi-fix-1'); // NFKC
    expect(aliasBase('pi', 'fix 🐛 bug')).toBe('pi-fix-bug');
  });

  it(`bounds the base to ${ALIAS_BASE_MAX_LENGTH} code points without a trailing "-"`, () => {
    // 'pi-' + 44 × 'a' = 47 code points, then '-bbbb': the cut at 48 leaves a '-' that is trimmed
    const base = aliasBase('pi', `${'a'.repeat(ALIAS_BASE_MAX_LENGTH - 4)} bbbb`);
    expect(base).toBe(`pi-${'a'.repeat(ALIAS_BASE_MAX_LENGTH - 4)}`);
    expect(base.endsWith('-')).toBe(false);
    expect(Array.from(aliasBase('pi', '长'.repeat(200)))).toHaveLength(ALIAS_BASE_MAX_LENGTH);
  });

  it('every folded base is a valid alias (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (name, subject) => {
        const base = aliasBase(name, subject);
        expect(base === '' || /^[\p{L}\p{M}\p{N}]+(-[\p{L}\p{M}\p{N}]+)*$/u.test(base)).toBe(true);
        for (const alias of aliasCandidates(name, subject, SID)) expect(isValidAlias(alias)).toBe(true);
      }),
    );
  });

  it('lists base, -2 … -99, then session-<first 8 of id>', () => {
    const list = aliasCandidates('pi', 'Fix import paths!', SID);
    expect(list[0]).toBe('pi-fix-import-paths');
    expect(list[1]).toBe('pi-fix-import-paths-2');
    expect(list[2]).toBe('pi-fix-import-paths-3');
    expect(list.at(-2)).toBe(`pi-fix-import-paths-${ALIAS_MAX_SUFFIX}`);
    expect(list.at(-1)).toBe('session-0b7c52e1');
    expect(list).toHaveLength(ALIAS_MAX_SUFFIX + 1);
  });

  it('falls back to session-<id> at once when nothing usable is left of name and subject', () => {
    expect(aliasCandidates('', '???', SID)).toEqual(['session-0b7c52e1']);
    // the word "new" is not an alias; its suffixed forms are
    expect(aliasCandidates('new', '', SID).slice(0, 2)).toEqual(['new-2', 'new-3']);
  });

  it('refuses a session id with no letter or digit', () => {
    const err = errorOf(() => aliasCandidates('pi', 'x', '--'));
    expect(err.code).toBe('AM_ALIAS_SESSION_ID_MISSING');
    expect(err.message).toContain('sessionId');
  });

  it('picks the first free candidate, from a Set or a predicate', () => {
    expect(aliasFromSubject('pi', 'Fix import paths!', SID, new Set())).toBe('pi-fix-import-paths');
    expect(aliasFromSubject('pi', 'Fix import paths!', SID, new Set(['pi-fix-import-paths']))).toBe(
      'pi-fix-import-paths-2',
    );
    expect(
      aliasFromSubject(
        'pi',
        'Fix import paths!',
        SID,
        (a) => a === 'pi-fix-import-paths' || a.endsWith('-2'),
      ),
    ).toBe('pi-fix-import-paths-3');
    expect(aliasFromSubject('pi', 'Fix import paths!', SID, (a) => a.startsWith('pi-'))).toBe(
      'session-0b7c52e1',
    );
  });

  it('throws AM_ALIAS_EXHAUSTED when every candidate is taken', () => {
    const err = errorOf(() => pickFreeAlias(['a', 'b'], () => true));
    expect(hasErrorCode(err, 'AM_ALIAS_EXHAUSTED')).toBe(true);
    expect(err.message).toContain('"b"');
  });
});
