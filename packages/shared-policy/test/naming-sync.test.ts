import { isValidAlias } from '@agentmail/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideNamingSync,
  NAMING_SYNC_TITLE_MAX_LENGTH,
  namingFingerprint,
  namingStateAfterSync,
} from '../src/naming-sync.js';

const base = { adopted: false, agentName: 'pi', state: undefined } as const;

describe('decideNamingSync (SPEC B-11)', () => {
  it('syncs a new platform name as title and a folded alias', () => {
    expect(decideNamingSync({ ...base, platformName: 'Fix import paths!' })).toEqual({
      sync: true,
      fingerprint: 'Fix import paths!',
      request: { title: 'Fix import paths!', alias: 'pi-fix-import-paths' },
    });
  });

  it('never syncs an adopted session', () => {
    expect(decideNamingSync({ ...base, adopted: true, platformName: 'Renamed' })).toEqual({
      sync: false,
      reason: 'adopted',
    });
  });

  it('does not sync a session without a name', () => {
    expect(decideNamingSync({ ...base, platformName: undefined })).toEqual({
      sync: false,
      reason: 'unnamed',
    });
    expect(decideNamingSync({ ...base, platformName: '  \n ' })).toEqual({ sync: false, reason: 'unnamed' });
  });

  it('does not sync again when the stored fingerprint matches (the echo of our own rename)', () => {
    const first = decideNamingSync({ ...base, platformName: 'Fix  imports' });
    if (!first.sync) throw new Error('expected a sync');
    const state = namingStateAfterSync(first.fingerprint, {
      session_id: 's1',
      alias: 'pi-fix-imports-2',
      title: 'Fix imports',
    });
    expect(state).toEqual({ fingerprint: 'Fix imports', alias: 'pi-fix-imports-2' });
    expect(decideNamingSync({ ...base, state, platformName: ' Fix imports ' })).toEqual({
      sync: false,
      reason: 'unchanged',
    });
    expect(decideNamingSync({ ...base, state, platformName: 'Other name' })).toMatchObject({ sync: true });
  });

  it('sends only a title when folding leaves no alias', () => {
    expect(decideNamingSync({ ...base, agentName: '', platformName: '!!!' })).toEqual({
      sync: true,
      fingerprint: '!!!',
      request: { title: '!!!' },
    });
  });

  it('always sends a valid alias and a title within the wire limit', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 700 }), (name) => {
        const d = decideNamingSync({ ...base, platformName: name });
        if (!d.sync) return namingFingerprint(name) === '';
        if (d.request.alias !== undefined) expect(isValidAlias(d.request.alias)).toBe(true);
        expect(Array.from(d.request.title ?? '').length).toBeLessThanOrEqual(NAMING_SYNC_TITLE_MAX_LENGTH);
        return true;
      }),
    );
  });
});
