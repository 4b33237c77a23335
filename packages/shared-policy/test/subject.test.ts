import { describe, expect, it } from 'vitest';
import { DERIVED_SUBJECT_MAX_CHARS, normalizeSubject, subjectForSend } from '../src/index.js';

describe('normalizeSubject', () => {
  it('folds line breaks and tabs into one space, removes every other control, trims', () => {
    expect(normalizeSubject('a\r\n\tb')).toBe('a b');
    expect(normalizeSubject('\u001b[2Jclear\u0007 bell\b\u007f')).toBe('[2Jclear bell');
    expect(normalizeSubject('c1\u0085next\u009b31m')).toBe('c1 next31m');
    expect(normalizeSubject('\u0000\u0001\u001f')).toBe('');
    expect(normalizeSubject('  line\u2028two  ')).toBe('line two');
  });

  it('keeps printable text of every script as it is, and is idempotent', () => {
    for (const s of ['修复 import 路径', 'Ünïcödé — “quotes” 🚀', 'Re: Fwd: a/b#c']) {
      expect(normalizeSubject(s)).toBe(s);
      expect(normalizeSubject(normalizeSubject(`\u001b${s}\r\n`))).toBe(normalizeSubject(`\u001b${s}\r\n`));
    }
  });
});

describe('subjectForSend (issue 20: one rule for a send without a subject)', () => {
  it('keeps a given subject, normalised', () => {
    expect(subjectForSend(' fix\tit ', 'body')).toBe('fix it');
  });

  it('an empty or blank subject: the first non-empty line of the body, trimmed', () => {
    expect(subjectForSend('', 'Fix the tests\nThey fail on CI')).toBe('Fix the tests');
    expect(subjectForSend(' \t ', '\n\n   \r\n  second line first \u001b\nthird')).toBe('second line first');
  });

  it('a long first line is cut to DERIVED_SUBJECT_MAX_CHARS with an ellipsis, at a word when near, never inside a surrogate pair', () => {
    const words = subjectForSend('', `${'word '.repeat(40)}end`);
    expect(Array.from(words).length).toBeLessThanOrEqual(DERIVED_SUBJECT_MAX_CHARS);
    expect(words).toMatch(/^word( word)*…$/);
    const solid = subjectForSend('', 'x'.repeat(500));
    expect(solid).toBe(`${'x'.repeat(DERIVED_SUBJECT_MAX_CHARS - 1)}…`);
    const emoji = subjectForSend('', '🚀'.repeat(100));
    expect(emoji).toBe(`${'🚀'.repeat(DERIVED_SUBJECT_MAX_CHARS - 1)}…`);
    expect(subjectForSend(emoji, 'other')).toBe(emoji);
  });

  it('no subject and no body: the catalogue text, per locale', () => {
    expect(subjectForSend('', '')).toBe('(no subject)');
    expect(subjectForSend('', ' \n\t', 'zh-CN')).toBe('（无主题）');
  });
});
