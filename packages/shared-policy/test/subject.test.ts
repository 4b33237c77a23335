import { describe, expect, it } from 'vitest';
import { normalizeSubject } from '../src/index.js';

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
