import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Address,
  ALIAS_MAX_LENGTH,
  formatAddress,
  isNormalizedPath,
  isValidAlias,
  normalizeAbsolutePath,
  parseAddress,
  replyAddress,
  selfAddress,
} from '../src/address.js';

const hasErrorCode = (err: unknown, code: string): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;

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

describe('address error codes', () => {
  it('are documented in docs/errors.md', async () => {
    const { readFileSync } = await import('node:fs');
    const { ADDRESS_ERROR_CODES } = await import('../src/address.js');
    const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
    expect(Object.values(ADDRESS_ERROR_CODES).filter((c) => !doc.includes(`\`${c}\``))).toEqual([]);
  });
});

describe('address fields of requests are checked by the grammar (G-3, G-10)', () => {
  it('a relative path in "to" is a decode error naming the field and the fix', async () => {
    const { decode } = await import('../src/decode.js');
    const { SendMailRequest } = await import('../src/mail.js');
    const r = decode(SendMailRequest, { to: 'pi@relative/dir', subject: 's', body: 'b' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.detail).toMatch(
      /^field "to": address "pi@relative\/dir": the path "relative\/dir" is relative/,
    );
    const cc = decode(SendMailRequest, { to: 'pi', subject: 's', body: 'b', cc: ['ok', 'bad@@x'] });
    expect(cc.ok).toBe(false);
    if (!cc.ok) expect(cc.error.detail).toMatch(/^field "cc\[1\]": address "bad@@x"/);
    expect(decode(SendMailRequest, { to: 'pi@/srv/app.v2.', subject: 's', body: 'b' }).ok).toBe(true);
  });
});
