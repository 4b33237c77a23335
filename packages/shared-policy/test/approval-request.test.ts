import { describe, expect, it } from 'vitest';
import { APPROVAL_OPTIONS, buildApprovalRequest, hasErrorCode, parseApproval } from '../src/index.js';

const base = {
  agentName: 'pi',
  toolName: 'bash',
  input: { command: 'ls -la' },
  sessionId: 's_1',
  platformSessionId: 'ps-1',
  toolCallId: 'call_7',
  cwd: '/srv/app',
};

describe('buildApprovalRequest (SPEC P-1, P-4, G-32)', () => {
  it('asks a person with the tool, its input and the working directory', () => {
    const r = buildApprovalRequest(base);
    expect(r).toMatchObject({ kind: 'approval', session_id: 's_1', relay_key: 'permission:ps-1:call_7' });
    expect(r.question).toContain('bash');
    expect(r.context).toContain('ls -la');
    expect(r.context).toContain('/srv/app');
  });

  it('offers options that parse back as once / always / deny', () => {
    expect(APPROVAL_OPTIONS.map((o) => parseApproval(o))).toEqual(['approve_once', 'approve_always', 'deny']);
  });

  it('keeps the relay key stable per call and within 160 bytes', () => {
    expect(buildApprovalRequest(base).relay_key).toBe(buildApprovalRequest(base).relay_key);
    const long = buildApprovalRequest({ ...base, toolCallId: 'c'.repeat(400) });
    expect(Buffer.byteLength(long.relay_key)).toBeLessThanOrEqual(160);
    expect(long.relay_key).not.toBe(buildApprovalRequest({ ...base, toolCallId: 'd'.repeat(400) }).relay_key);
  });

  it('refuses an empty tool call id (no stable key)', () => {
    let caught: unknown;
    try {
      buildApprovalRequest({ ...base, toolCallId: ' ' });
    } catch (err) {
      caught = err;
    }
    expect(hasErrorCode(caught, 'AM_RELAY_KEY_INVALID')).toBe(true);
  });
});
