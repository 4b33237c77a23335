import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Address,
  ALIAS_BASE_MAX_LENGTH,
  ALIAS_MAX_LENGTH,
  ALIAS_MAX_SUFFIX,
  aliasBase,
  aliasCandidates,
  aliasFromSubject,
  formatAddress,
  isNormalizedPath,
  isValidAlias,
  normalizeAbsolutePath,
  parseAddress,
  pickFreeAlias,
  replyAddress,
  selfAddress,
} from '../src/addressing.js';
import { hasErrorCode } from '../src/errors.js';

function errorOf(fn: () => unknown): { code: unknown; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: unknown; message: string };
  }
  throw new Error('expected a throw');
}

describe('parseAddress (SPEC G-1..G-3)', () => {
  it.each<[string, Address]>([
    ['pi@/home/me/project.new', { name: 'pi', path: '/home/me/project', session: 'new' }],
    ['pi@/home/me/project', { name: 'pi', path: '/home/me/project', session: '' }],
    ['pi@/home/me/project.', { name: 'pi', path: '/home/me/project', session: '' }],
    ['pi@/srv/app.v2.fix-x', { name: 'pi', path: '/srv/app.v2', session: 'fix-x' }],
    ['pi@/srv/app.v2.', { name: 'pi', path: '/srv/app.v2', session: '' }],
    ['pi@/', { name: 'pi', path: '/', session: '' }],
    ['pi@/.', { name: 'pi', path: '/', session: '' }],
    ['pi', { name: 'pi', path: '', session: '' }],
    ['pi@', { name: 'pi', path: '', session: '' }],
    ['pi@.', { name: 'pi', path: '', session: '' }],
    ['pi@.new', { name: 'pi', path: '', session: 'new' }],
    ['alice@.my-alias', { name: 'alice', path: '', session: 'my-alias' }],
    // the dot of a directory before the last '/' is part of the path
    ['pi@/srv/app.v2/src', { name: 'pi', path: '/srv/app.v2/src', session: '' }],
    ['pi@/srv/app.v2/src.fix', { name: 'pi', path: '/srv/app.v2/src', session: 'fix' }],
    // name ends at the FIRST '@': a later '@' belongs to the path
    ['pi@/srv/a@b.', { name: 'pi', path: '/srv/a@b', session: '' }],
    ['  pi@/srv/app.fix  ', { name: 'pi', path: '/srv/app', session: 'fix' }],
    ['j.smith@.', { name: 'j.smith', path: '', session: '' }],
    ['pi@/home/我的/项目.修复-导入', { name: 'pi', path: '/home/我的/项目', session: '修复-导入' }],
  ])('%s', (input, expected) => {
    expect(parseAddress(input)).toEqual(expected);
  });

  it('reads a dotted last segment without trailing "." as path + alias (the G-3 trade-off)', () => {
    expect(parseAddress('pi@/srv/app.v2')).toEqual({ name: 'pi', path: '/srv/app', session: 'v2' });
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['@/srv/app.', /name is missing/],
    ['@', /name is missing/],
    ['p i@/srv.', /name contains whitespace/],
    ['pi@srv/app.', /"srv\/app" is relative.*absolute path starting with "\/"/],
    ['pi@new', /"new" is relative.*name@\.session/],
    ['pi@./x', /"\.\/x" is relative/],
    ['pi@/srv/app.my alias', /alias "my alias" is not valid/],
    ['pi@/srv/app.NEW', /write "new" in lower case/],
    ['pi@/srv/a\u0000b.', /control character/],
    [`pi@/srv.${'a'.repeat(ALIAS_MAX_LENGTH + 1)}`, /is not valid/],
  ])('rejects %j with AM_ADDRESS_INVALID and a fix', (input, message) => {
    const err = errorOf(() => parseAddress(input));
    expect(err.code).toBe('AM_ADDRESS_INVALID');
    expect(err.message).toMatch(message);
    expect(err.message).toContain(JSON.stringify(input));
  });
});

describe('formatAddress (SPEC G-4)', () => {
  it.each<[Address, string]>([
    [{ name: 'pi', path: '', session: '' }, 'pi@.'],
    [{ name: 'pi', path: '/srv/app.v2', session: '' }, 'pi@/srv/app.v2.'],
    [{ name: 'pi', path: '/srv/app', session: 'new' }, 'pi@/srv/app.new'],
    [{ name: 'alice', path: '', session: 'my-alias' }, 'alice@.my-alias'],
    [{ name: 'pi', path: '/', session: '' }, 'pi@/.'],
  ])('%j → %s', (address, text) => {
    expect(formatAddress(address)).toBe(text);
  });

  it.each<[Address, RegExp]>([
    [{ name: '', path: '', session: '' }, /name is missing/],
    [{ name: 'a@b', path: '', session: '' }, /name contains "@"/],
    [{ name: 'pi', path: 'srv/app', session: '' }, /relative/],
    [{ name: 'pi', path: '/srv', session: 'a.b' }, /alias "a\.b" is not valid/],
    [{ name: 'pi', path: '/srv', session: 'a/b' }, /alias "a\/b" is not valid/],
  ])('refuses %j (it would not parse back)', (address, message) => {
    const err = errorOf(() => formatAddress(address));
    expect(err.code).toBe('AM_ADDRESS_INVALID');
    expect(err.message).toMatch(message);
  });

  const nameArb = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
    .filter((s) => !/[@\s\p{Cc}]/u.test(s));
  const segmentArb = fc.string({ unit: 'grapheme', maxLength: 8 }).filter((s) => !/[/\p{Cc}]/u.test(s));
  const dottedSegmentArb = fc.tuple(segmentArb, segmentArb).map(([a, b]) => `${a}.${b}`);
  const pathArb = fc.oneof(
    fc.constant(''),
    fc.array(fc.oneof(segmentArb, dottedSegmentArb), { maxLength: 5 }).map((segs) => `/${segs.join('/')}`),
  );
  const aliasArb = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter(isValidAlias);
  const sessionArb = fc.oneof(fc.constant(''), fc.constant('new'), aliasArb);
  const addressArb = fc.record({ name: nameArb, path: pathArb, session: sessionArb });

  it('parse(format(a)) deep-equals a for every valid address (property)', () => {
    fc.assert(
      fc.property(addressArb, (address) => {
        expect(parseAddress(formatAddress(address))).toEqual(address);
      }),
      { numRuns: 2000 },
    );
  });

  it('generates the hard cases the property is about', () => {
    // guard against a generator that never produces dotted segments or unicode
    const samples = fc.sample(addressArb, { numRuns: 2000, seed: 1 });
    expect(samples.some((a) => /\.[^/]*$/.test(a.path) && a.session === '')).toBe(true);
    expect(samples.some((a) => /[^ -~]/.test(a.path + a.session + a.name))).toBe(true);
  });

  it('format(parse(s)) is a fixed point for canonical strings (property)', () => {
    fc.assert(
      fc.property(addressArb, (address) => {
        const text = formatAddress(address);
        expect(formatAddress(parseAddress(text))).toBe(text);
      }),
    );
  });
});

describe('isValidAlias', () => {
  it.each([
    ['pi-fix-import-paths', true],
    ['修复', true],
    ['session-0b7c52e1', true],
    ['', false],
    ['new', false],
    ['New', false],
    ['a.b', false],
    ['a/b', false],
    ['a b', false],
    ['a\tb', false],
    ['a'.repeat(ALIAS_MAX_LENGTH), true],
    ['a'.repeat(ALIAS_MAX_LENGTH + 1), false],
  ])('%j → %s', (alias, valid) => {
    expect(isValidAlias(alias)).toBe(valid);
  });
});

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

describe('reply and self addresses (SPEC G-6)', () => {
  it('builds session addresses from name, path and alias', () => {
    expect(replyAddress({ name: 'alice', path: '', alias: 'pi-fix' })).toBe('alice@.pi-fix');
    expect(selfAddress({ name: 'pi', path: '/srv/app.v2', alias: 'pi-fix' })).toBe('pi@/srv/app.v2.pi-fix');
    expect(selfAddress({ name: 'pi', path: '/srv/app.v2', alias: '' })).toBe('pi@/srv/app.v2.');
  });

  it.each(['new', 'NEW'])('never produces the session %j', (alias) => {
    for (const build of [replyAddress, selfAddress]) {
      const err = errorOf(() => build({ name: 'pi', path: '/srv', alias }));
      expect(err.code).toBe('AM_ADDRESS_NEW_SESSION_FORBIDDEN');
      expect(err.message).toMatch(/existing session/);
    }
  });

  it('rejects malformed parts', () => {
    expect(errorOf(() => replyAddress({ name: 'pi', path: 'rel', alias: 'x' })).code).toBe(
      'AM_ADDRESS_INVALID',
    );
  });
});

describe('normalised paths (SPEC G-3: the Gateway refuses non-normalised paths)', () => {
  it.each<[string, string]>([
    ['/x/../../etc', '/etc'],
    ['//x//y', '/x/y'],
    ['/srv/app/', '/srv/app'],
    ['/srv/./app', '/srv/app'],
    ['/srv/app/.', '/srv/app'],
    ['/..', '/'],
    ['/', '/'],
    ['/srv/app.v2', '/srv/app.v2'],
    ['/srv/.../x', '/srv/.../x'],
    ['/srv/..x/y', '/srv/..x/y'],
    ['', ''],
  ])('normalizeAbsolutePath(%j) is %j', (path, normal) => {
    expect(normalizeAbsolutePath(path)).toBe(normal);
    expect(isNormalizedPath(path)).toBe(path === normal);
  });

  it('a relative path is not normalised and normalising it throws AM_ADDRESS_INVALID', () => {
    expect(isNormalizedPath('srv/app')).toBe(false);
    const err = errorOf(() => normalizeAbsolutePath('srv/app'));
    expect(hasErrorCode(err, 'AM_ADDRESS_INVALID')).toBe(true);
    expect(err.message).toContain('"srv/app"');
  });

  it('agrees with POSIX normalisation (minus the trailing slash) and is idempotent', () => {
    const segment = fc.constantFrom('', '.', '..', 'a', 'b.c', '...', 'ü');
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), fc.boolean(), (segments, trailing) => {
        const path = `/${segments.join('/')}${trailing ? '/' : ''}`;
        const normal = normalizeAbsolutePath(path);
        const viaPosix = posix.normalize(path);
        expect(normal).toBe(viaPosix.length > 1 ? viaPosix.replace(/\/+$/, '') : '/');
        expect(normalizeAbsolutePath(normal)).toBe(normal);
        expect(isNormalizedPath(normal)).toBe(true);
        expect(isNormalizedPath(path)).toBe(path === normal);
      }),
    );
  });

  it('a parsed address keeps its path verbatim, so the caller can check it', () => {
    const a = parseAddress('pi@/x/../../etc.new');
    expect(a.path).toBe('/x/../../etc');
    expect(isNormalizedPath(a.path)).toBe(false);
    expect(formatAddress({ ...a, path: normalizeAbsolutePath(a.path) })).toBe('pi@/etc.new');
  });
});
