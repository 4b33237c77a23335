import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { autoRelayKey, clampRelayKey, failureRelayKey, RELAY_KEY_MAX_BYTES } from '../src/relay-key.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('clampRelayKey (SPEC G-32)', () => {
  it('is 160 bytes', () => {
    expect(RELAY_KEY_MAX_BYTES).toBe(160);
  });

  it('returns keys of at most 160 bytes unchanged', () => {
    const exact = 'k'.repeat(RELAY_KEY_MAX_BYTES);
    expect(clampRelayKey(exact)).toBe(exact);
    const multiByte = '键'.repeat(53); // 159 bytes
    expect(clampRelayKey(multiByte)).toBe(multiByte);
  });

  it('clamps a longer key to prefix + "~" + sha256 hex, within 160 bytes', () => {
    const key = `model-failure:${'x'.repeat(200)}`;
    const clamped = clampRelayKey(key);
    expect(bytes(clamped)).toBeLessThanOrEqual(RELAY_KEY_MAX_BYTES);
    expect(clamped).toBe(`${key.slice(0, 95)}~${sha256(key)}`);
    const justOver = 'k'.repeat(RELAY_KEY_MAX_BYTES + 1);
    expect(clampRelayKey(justOver)).toBe(`${'k'.repeat(95)}~${sha256(justOver)}`);
  });

  it('is deterministic and separates long keys that share the prefix', () => {
    const a = `${'p'.repeat(300)}a`;
    const b = `${'p'.repeat(300)}b`;
    expect(clampRelayKey(a)).toBe(clampRelayKey(a));
    expect(clampRelayKey(a)).not.toBe(clampRelayKey(b));
    expect(clampRelayKey(a).split('~')[0]).toBe(clampRelayKey(b).split('~')[0]);
  });

  it('never splits a multi-byte character', () => {
    // 3-byte and 4-byte characters straddling the 95-byte prefix budget
    for (const char of ['键', '😀', 'é']) {
      for (let lead = 0; lead < 4; lead++) {
        const key = 'a'.repeat(lead) + char.repeat(100);
        const clamped = clampRelayKey(key);
        const prefix = clamped.slice(0, clamped.lastIndexOf('~'));
        expect(key.startsWith(prefix)).toBe(true);
        expect(Buffer.from(prefix, 'utf8').toString('utf8')).toBe(prefix); // no U+FFFD from a cut
        expect(prefix).not.toMatch(/[\uD800-\uDBFF]$/); // no lone high surrogate
        expect(bytes(clamped)).toBeLessThanOrEqual(RELAY_KEY_MAX_BYTES);
        expect(bytes(clamped)).toBeGreaterThan(RELAY_KEY_MAX_BYTES - 4); // prefix uses the budget
      }
    }
  });

  it('fits, is stable and keeps short keys for any string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 400 }), (key) => {
        fc.pre(key.trim() !== '');
        const clamped = clampRelayKey(key);
        expect(bytes(clamped)).toBeLessThanOrEqual(RELAY_KEY_MAX_BYTES);
        expect(clampRelayKey(key)).toBe(clamped);
        if (bytes(key) <= RELAY_KEY_MAX_BYTES) expect(clamped).toBe(key);
        else expect(clamped.endsWith(`~${sha256(key)}`)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses an empty key', () => {
    expect(() => clampRelayKey('')).toThrow(expect.objectContaining({ code: 'AM_RELAY_KEY_INVALID' }));
    expect(() => clampRelayKey('  ')).toThrow(/relay key is empty/);
  });
});

describe('failureRelayKey (SPEC B-9)', () => {
  it('is model-failure:<mail_id>', () => {
    expect(failureRelayKey('m_42')).toBe('model-failure:m_42');
  });
  it('is clamped', () => {
    const key = failureRelayKey('m'.repeat(500));
    expect(bytes(key)).toBeLessThanOrEqual(RELAY_KEY_MAX_BYTES);
    expect(key.startsWith('model-failure:mmm')).toBe(true);
    expect(failureRelayKey('m'.repeat(500))).toBe(key);
  });
  it('refuses an empty mail id', () => {
    expect(() => failureRelayKey('')).toThrow(expect.objectContaining({ code: 'AM_RELAY_KEY_INVALID' }));
  });
});

describe('autoRelayKey (SPEC B-10)', () => {
  it('is stable and built from both ids', () => {
    expect(autoRelayKey('ses_1', 'entry_9')).toBe('auto-relay:ses_1:entry_9');
    expect(autoRelayKey('ses_1', 'entry_9')).toBe(autoRelayKey('ses_1', 'entry_9'));
    expect(autoRelayKey('ses_1', 'entry_9')).not.toBe(autoRelayKey('ses_1', 'entry_10'));
    expect(autoRelayKey('ses_1', 'entry_9')).not.toBe(autoRelayKey('ses_2', 'entry_9'));
  });

  it('never gives two id pairs the same key, even with ":" and "%" inside (property)', () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 })),
        fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 })),
        ([s1, e1], [s2, e2]) => {
          fc.pre(s1.trim() !== '' && e1.trim() !== '' && s2.trim() !== '' && e2.trim() !== '');
          fc.pre(s1 !== s2 || e1 !== e2);
          expect(autoRelayKey(s1, e1)).not.toBe(autoRelayKey(s2, e2));
        },
      ),
    );
    expect(autoRelayKey('a:b', 'c')).not.toBe(autoRelayKey('a', 'b:c'));
    expect(autoRelayKey('a%3Ab', 'c')).not.toBe(autoRelayKey('a:b', 'c'));
  });

  it('is clamped', () => {
    expect(bytes(autoRelayKey('s'.repeat(200), 'e'.repeat(200)))).toBeLessThanOrEqual(RELAY_KEY_MAX_BYTES);
  });

  it.each([
    ['', 'e1', /platformSessionId is empty/],
    ['s1', ' ', /lastEntryId is empty/],
  ])('refuses empty ids (%j, %j)', (sid, eid, message) => {
    expect(() => autoRelayKey(sid, eid)).toThrow(message);
  });
});
