import { describe, expect, it } from 'vitest';
import { buildFailureMail, hasErrorCode } from '../src/index.js';

const mail = { mail_id: 'm_42', subject: 'Fix\nthe build', from_name: 'alice', reply_address: 'alice@.' };

describe('buildFailureMail (SPEC B-9)', () => {
  it('answers the failed mail as a relay with the stable key model-failure:<mail_id>', () => {
    const m = buildFailureMail({
      kind: 'all_models_failed',
      mail,
      cause: '500: upstream exploded',
      agentName: 'pi',
    });
    expect(m).toMatchObject({
      to: 'alice@.',
      reply_to: 'm_42',
      relay: 'summary',
      relay_key: 'model-failure:m_42',
    });
    expect(m.subject).toBe('Could not process: Fix the build');
    expect(m.body).toContain('500: upstream exploded');
    expect(m.body).toContain('m_42');
  });

  it('gives the resume failure a different remedy than the all-models failure', () => {
    const all = buildFailureMail({ kind: 'all_models_failed', mail, cause: 'x', agentName: 'pi' });
    const resume = buildFailureMail({ kind: 'resume_failed', mail, cause: 'x', agentName: 'pi' });
    expect(all.body).toContain('Every model');
    expect(resume.body).toContain('could not continue the existing session');
    expect(resume.body).not.toBe(all.body);
  });

  it('falls back to the sender name, fills the timeout and attempts, and clamps a huge cause', () => {
    const noReply = { ...mail, reply_address: '' };
    const t = buildFailureMail({
      kind: 'timeout',
      mail: noReply,
      cause: 'y'.repeat(5000),
      agentName: 'pi',
      timeoutMs: 90_000,
    });
    expect(t.to).toBe('alice');
    expect(t.body).toContain('90 seconds');
    expect(t.body.length).toBeLessThan(3000);
    const w = buildFailureMail({
      kind: 'worker_lost',
      mail,
      cause: 'exit 1',
      agentName: 'pi',
      attempts: 3,
      locale: 'zh-CN',
    });
    expect(w.body).toContain('3 次');
  });

  it('throws AM_RELAY_KEY_INVALID without a mail id', () => {
    let caught: unknown;
    try {
      buildFailureMail({ kind: 'timeout', mail: { ...mail, mail_id: '' }, cause: '', agentName: 'pi' });
    } catch (err) {
      caught = err;
    }
    expect(hasErrorCode(caught, 'AM_RELAY_KEY_INVALID')).toBe(true);
  });
});
