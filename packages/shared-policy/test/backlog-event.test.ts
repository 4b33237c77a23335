import type { MailSummary } from '@agentmail/protocol';
import { describe, expect, it } from 'vitest';
import { backlogEvent, planTurn } from '../src/index.js';

const summary: MailSummary = {
  id: 'm1',
  session_id: 's1',
  session_alias: 'pi-fix',
  from_name: 'alice',
  from_human: true,
  from_address: 'alice@.',
  to: [],
  cc: [],
  to_human: false,
  subject: 'Fix it',
  snippet: '',
  created_at: '2026-01-01T00:00:00.000Z',
  status: 'unread',
  attachments: [],
  in_reply_to: 'm0',
  kind: 'mail',
  is_permission: false,
  relay: false,
  permission_mode: 'plan',
  reply_address: 'alice@.',
  self_address: 'pi@/srv/app.pi-fix',
  platform_session_id: '',
};

describe('backlogEvent (SPEC B-20, G-20)', () => {
  it('carries the adopted platform session of the inbox item, so the backlog turn resumes it (B-4)', () => {
    expect(backlogEvent({ ...summary, platform_session_id: 'ses_1' }).platform_session_id).toBe('ses_1');
    expect(backlogEvent(summary).platform_session_id).toBe('');
  });

  it('maps an inbox item onto the new_mail event a turn reads', () => {
    const e = backlogEvent(summary, { mail: { parent_from: 'pi' } });
    expect(e).toMatchObject({
      mail_id: 'm1',
      session_id: 's1',
      to_workspace: '/srv/app',
      permission_mode: 'plan',
      parent_from: 'pi',
      reply_address: 'alice@.',
      from_human: true,
      platform_session_id: '',
    });
    expect(planTurn({ mail: e, selfName: 'pi', backlog: true }).headlineKind).toBe('reply_to_own');
  });

  it('leaves the workspace empty for an address without a path, and keeps a known platform id', () => {
    const e = backlogEvent({ ...summary, self_address: 'pi@.' }, { platformSessionId: 'p-1' });
    expect(e.to_workspace).toBe('');
    expect(e.parent_from).toBe('');
    expect(e.platform_session_id).toBe('p-1');
  });
});
