import { describe, expect, it } from 'vitest';
import { parseApproval } from '../src/approval.js';

describe('parseApproval (P-4)', () => {
  it.each([
    'approve',
    'approved',
    'Approve',
    ' APPROVE ',
    'approve.',
    'Approve!',
    'approve once',
    'approve_once',
    'yes',
    'Yes!',
    'allow',
    'allow once',
    'once',
    '批准',
    '同意',
    '允许',
    '批准。',
    '同意！',
    '允许一次',
    '仅此一次',
  ])('%j approves once', (text) => {
    expect(parseApproval(text)).toBe('approve_once');
  });

  it.each([
    'always',
    'Always approve',
    'approve always',
    'approve_always',
    'always-allow',
    'allow always',
    '总是允许',
    '始终允许',
    '始终批准',
    '总是同意',
  ])('%j approves always', (text) => {
    expect(parseApproval(text)).toBe('approve_always');
  });

  it.each([
    '',
    '   ',
    'maybe',
    'approve?',
    'approve？',
    'yes?',
    '批准？',
    'no',
    'deny',
    'denied',
    'reject',
    '拒绝',
    '不',
    'not approve',
    "don't approve",
    'yes but not in prod',
    'approve it after lunch',
    'approved, but use staging',
    'answered',
    'approvee',
    'always never',
  ])('%j is a denial', (text) => {
    expect(parseApproval(text)).toBe('deny');
  });

  it('a non-string (from untyped JSON) is a denial', () => {
    expect(parseApproval(undefined as unknown as string)).toBe('deny');
    expect(parseApproval(1 as unknown as string)).toBe('deny');
  });
});
