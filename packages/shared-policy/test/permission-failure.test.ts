import { describe, expect, it } from 'vitest';
import { classifyPermissionFailure, isDuplicateRelay } from '../src/permission-failure.js';

const noUi = { hasLocalUi: false };
const ui = { hasLocalUi: true };

function httpError(status: number, body?: unknown): Error & { status: number; body?: unknown } {
  return Object.assign(new Error(`HTTP ${status}`), { status, body });
}

describe('classifyPermissionFailure (P-5)', () => {
  it('409 denies with the server words', () => {
    const err = httpError(409, {
      error: 'no_person_reachable',
      detail: 'session s1 has no owner and no person in its thread',
      suggestion: 'add a person to the thread.',
      permission_mode: 'workspace',
    });
    for (const opts of [noUi, ui]) {
      const d = classifyPermissionFailure(err, opts);
      expect(d.decision).toBe('deny');
      expect(d.reason).toContain('no_person_reachable');
      expect(d.reason).toContain('session s1 has no owner and no person in its thread');
      expect(d.reason).toContain('add a person to the thread');
    }
  });

  it('409 whose body says the mode is full allows (that mode never asks)', () => {
    const d = classifyPermissionFailure(
      httpError(409, { error: 'no_person_reachable', permission_mode: 'full' }),
      noUi,
    );
    expect(d.decision).toBe('allow');
  });

  it('409 with a mode that is only almost full still denies (P-2 exact match)', () => {
    for (const mode of ['FULL', ' full', 'plan', undefined]) {
      const d = classifyPermissionFailure(httpError(409, { error: 'x', permission_mode: mode }), noUi);
      expect(d.decision).toBe('deny');
    }
  });

  it('409 without a body still denies with a readable reason', () => {
    const d = classifyPermissionFailure(httpError(409), noUi);
    expect(d.decision).toBe('deny');
    expect(d.reason).toMatch(/no details given/);
  });

  it.each([400, 401, 403, 404, 413, 422])('%i denies: refused and will not succeed on retry', (status) => {
    for (const opts of [noUi, ui]) {
      const d = classifyPermissionFailure(
        httpError(status, { error: 'forbidden', detail: 'key bound to pi' }),
        opts,
      );
      expect(d.decision).toBe('deny');
      expect(d.reason).toContain(`HTTP ${status}`);
      expect(d.reason).toMatch(/Retrying will not succeed/);
      expect(d.reason).toContain('key bound to pi');
    }
  });

  it.each([500, 502, 503, 408, 429])('%i yields to a local UI only if one exists, else denies', (status) => {
    expect(classifyPermissionFailure(httpError(status), ui).decision).toBe('yield');
    const d = classifyPermissionFailure(httpError(status), noUi);
    expect(d.decision).toBe('deny');
    expect(d.reason).toMatch(/no local prompt/);
  });

  it('a network error (no status) yields only with a local UI', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(classifyPermissionFailure(err, ui).decision).toBe('yield');
    const d = classifyPermissionFailure(err, noUi);
    expect(d.decision).toBe('deny');
    expect(d.reason).toContain('ECONNREFUSED');
    expect(classifyPermissionFailure('boom', noUi).decision).toBe('deny');
    expect(classifyPermissionFailure(undefined, ui).decision).toBe('yield');
  });

  it('duplicate_relay denies explaining the question was already asked', () => {
    for (const value of [
      { status: 'duplicate_relay', request_id: 'r1' },
      Object.assign(new Error('dup'), { body: { status: 'duplicate_relay', request_id: 'r1' } }),
    ]) {
      for (const opts of [noUi, ui]) {
        const d = classifyPermissionFailure(value, opts);
        expect(d.decision).toBe('deny');
        expect(d.reason).toMatch(/already asked/);
      }
    }
    expect(isDuplicateRelay({ status: 'pending', request_id: 'r' })).toBe(false);
    expect(isDuplicateRelay(null)).toBe(false);
  });

  it('an odd status (3xx) fails closed', () => {
    expect(classifyPermissionFailure(httpError(302), ui).decision).toBe('deny');
  });

  it('texts come from the catalogue in the given locale', () => {
    const d = classifyPermissionFailure(httpError(404, { error: 'not_found' }), {
      hasLocalUi: false,
      locale: 'zh-CN',
    });
    expect(d.reason).toMatch(/网关拒绝了审批请求/);
  });
});
