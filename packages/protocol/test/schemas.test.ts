import { describe, expect, it } from 'vitest';
import {
  AGENT_EVENT_SCHEMAS,
  ErrorBody,
  isTransientStatus,
  NewMailEvent,
  PermissionRequest,
  routePath,
  SendMailRequest,
  SendMailResponse,
} from '../src/index.js';

const newMail = {
  mail_id: 'm1',
  session_id: 's1',
  from_name: 'alice',
  from_human: true,
  to_workspace: '/home/me/project',
  subject: 'Fix import paths',
  in_reply_to: '',
  parent_from: '',
  permission_mode: 'workspace',
  permission_enforcement: 'native',
  session_alias: 'pi-fix-import-paths',
  reply_address: 'alice@.',
  self_address: 'pi@/home/me/project.pi-fix-import-paths',
  platform_session_id: '',
  kind: 'mail',
};

describe('events (G-20, G-21)', () => {
  it('new_mail carries every G-20 field', () => {
    expect(NewMailEvent.parse(newMail)).toEqual(newMail);
    const { self_address: _, ...missing } = newMail;
    expect(NewMailEvent.safeParse(missing).success).toBe(false);
  });

  it('answers and events tolerate newer fields (stripped), requests do not', () => {
    expect(NewMailEvent.parse({ ...newMail, from_newer_gateway: 1 })).toEqual(newMail);
    expect(SendMailRequest.safeParse({ to: 'a@.', subject: 's', body: 'b', extra: 1 }).success).toBe(false);
  });

  it('from_human is a boolean, never guessed (G-30)', () => {
    expect(NewMailEvent.safeParse({ ...newMail, from_human: 'yes' }).success).toBe(false);
  });

  it('every agent event type has a schema', () => {
    expect(Object.keys(AGENT_EVENT_SCHEMAS).sort()).toEqual(['new_mail', 'permission_decision']);
  });
});

describe('send and permission', () => {
  it('send answers are discriminated by status', () => {
    expect(SendMailResponse.parse({ status: 'duplicate_relay', mail_id: 'm1' }).status).toBe(
      'duplicate_relay',
    );
    expect(SendMailResponse.safeParse({ status: 'sent', mail_id: 'm1' }).success).toBe(false);
  });

  it('permission request kinds are approval and question only', () => {
    const base = { question: 'run ls?', options: ['approve'], session_id: 's', relay_key: 'k' };
    expect(PermissionRequest.safeParse({ ...base, kind: 'approval' }).success).toBe(true);
    expect(PermissionRequest.safeParse({ ...base, kind: 'other' }).success).toBe(false);
  });
});

describe('errors (G-13)', () => {
  it('error bodies keep extra fields', () => {
    const body = { error: 'no_person_reachable', detail: 'd', suggestion: 's', permission_mode: 'plan' };
    expect(ErrorBody.parse(body)).toEqual(body);
  });

  it('tells retry-later from never-succeeds by status alone', () => {
    for (const s of [500, 502, 503, 408, 429]) expect(isTransientStatus(s)).toBe(true);
    for (const s of [400, 401, 403, 404, 409, 413]) expect(isTransientStatus(s)).toBe(false);
  });
});

describe('routes (see endpoints.test.ts)', () => {
  it('fills and encodes parameters under /api/v1', () => {
    expect(routePath('thread', { id: 'a/b' })).toBe('/api/v1/agent/mail/a%2Fb/thread');
    expect(routePath('inbox')).toBe('/api/v1/mail/inbox');
    expect(() => routePath('mail')).toThrow(/missing parameter "id"/);
  });
});
