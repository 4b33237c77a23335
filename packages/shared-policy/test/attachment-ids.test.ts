import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeAttachmentIds } from '../src/attachment-ids.js';

describe('normalizeAttachmentIds (SPEC B-16)', () => {
  it.each<[string, unknown, string[]]>([
    ['an array', ['att_1', 'att_2'], ['att_1', 'att_2']],
    ['a single id', 'att_1', ['att_1']],
    ['a single id with whitespace', '  att_1\n', ['att_1']],
    ['comma separated ids', 'att_1,att_2, att_3', ['att_1', 'att_2', 'att_3']],
    ['space separated ids', 'att_1 att_2\tatt_3', ['att_1', 'att_2', 'att_3']],
    ['full-width commas', 'att_1，att_2、att_3', ['att_1', 'att_2', 'att_3']],
    ['a JSON-array string', '["att_1","att_2"]', ['att_1', 'att_2']],
    ['a JSON-array string with spaces', ' [ "att_1" , "att_2" ] ', ['att_1', 'att_2']],
    ['a bracketed non-JSON list', "[att_1, 'att_2']", ['att_1', 'att_2']],
    ['an array element holding several ids', ['att_1, att_2', 'att_3'], ['att_1', 'att_2', 'att_3']],
  ])('accepts %s', (_label, input, expected) => {
    expect(normalizeAttachmentIds(input)).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { ids: ['att_1'] }],
    ['an empty string', ''],
    ['whitespace', '  \n '],
    ['an empty JSON array', '[]'],
    ['an empty array', []],
  ])('gives [] for %s', (_label, input) => {
    expect(normalizeAttachmentIds(input)).toEqual([]);
  });

  it('drops empty, null and non-string elements of an array', () => {
    expect(
      normalizeAttachmentIds(['att_1', '', null, undefined, 7, { id: 'x' }, ['att_9'], '  ', 'att_2']),
    ).toEqual(['att_1', 'att_2']);
  });

  it('trims and de-duplicates, keeping the first occurrence', () => {
    expect(normalizeAttachmentIds([' att_2 ', 'att_1', 'att_2', 'att_1 '])).toEqual(['att_2', 'att_1']);
    expect(normalizeAttachmentIds('b a b c a')).toEqual(['b', 'a', 'c']);
  });

  // Reverse check: these go red when the JSON-array branch is removed (the fallback splitter
  // would keep "null" and "42" as ids and could not decode JSON escapes).
  it('reads a JSON-array string as JSON: null and numbers dropped, escapes decoded', () => {
    expect(normalizeAttachmentIds('["att_1", null, 42, "", "att_2", "att_1"]')).toEqual(['att_1', 'att_2']);
    expect(normalizeAttachmentIds('["att\\u005f3"]')).toEqual(['att_3']);
  });

  it('output is always trimmed, non-empty, unique strings (property)', () => {
    const idArb = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
    const inputArb = fc.oneof(
      fc.array(fc.oneof(idArb, fc.constant(null), fc.constant(''), fc.integer())),
      fc.array(idArb).map((ids) => JSON.stringify(ids)),
      fc.array(idArb).map((ids) => ids.join(', ')),
      fc.anything(),
    );
    fc.assert(
      fc.property(inputArb, (input) => {
        const ids = normalizeAttachmentIds(input);
        expect(new Set(ids).size).toBe(ids.length);
        for (const id of ids) {
          expect(typeof id).toBe('string');
          expect(id).toBe(id.trim());
          expect(id).not.toBe('');
        }
      }),
    );
  });

  it('every form of the same ids gives the same list (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), { maxLength: 6 }), (ids) => {
        expect(normalizeAttachmentIds(ids)).toEqual(ids);
        expect(normalizeAttachmentIds(JSON.stringify(ids))).toEqual(ids);
        expect(normalizeAttachmentIds(ids.join(','))).toEqual(ids);
        expect(normalizeAttachmentIds(ids.join(' '))).toEqual(ids);
      }),
    );
  });
});
