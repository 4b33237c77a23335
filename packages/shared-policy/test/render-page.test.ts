import type { Mail } from '@agentmail/protocol';
import { describe, expect, it } from 'vitest';
import { MAIL_PAGE_CHARS, renderMail, renderThread, THREAD_BODY_CHARS } from '../src/index.js';
import { fullMail } from './support/fake-gateway.js';

function mail(body: string): Mail {
  return fullMail('m_1', { body, participants: [] });
}

describe('read_mail pages a long body (SPEC B-17)', () => {
  const body = `BEGIN${'x'.repeat(1_000_000)}END`;
  const m = mail(body);

  it('a first page holds at most the limit, says where it lies, the total and the offset to read on', () => {
    const text = renderMail(m, 'en', { limit: MAIL_PAGE_CHARS });
    expect(text.length).toBeLessThan(MAIL_PAGE_CHARS + 1_000);
    expect(text).toContain('BEGIN');
    expect(text).not.toContain('END');
    const note = `[Body characters 0-${MAIL_PAGE_CHARS} of ${body.length}. Read on: call read_mail with mail_id m_1 and offset ${MAIL_PAGE_CHARS}.]`;
    expect(text.split('\n').filter((l) => l === note)).toHaveLength(2); // above and below the page
  });

  it('the offsets walk the whole body without a gap or an overlap; the last page says it is the end', () => {
    let offset = 0;
    let read = '';
    for (let pages = 0; pages < 20; pages++) {
      const text = renderMail(m, 'en', { offset, limit: 100_000 });
      const next = /and offset (\d+)\.\]$/m.exec(text);
      const lines = text.split('\n');
      read += lines[lines.length - 2];
      if (!next) {
        expect(text).toContain(`of ${body.length}: the end of the body.]`);
        break;
      }
      offset = Number(next[1]);
    }
    expect(read).toBe(body);
  });

  it('a short body is shown whole with no page line; an offset past the end says so', () => {
    expect(renderMail(mail('short'), 'en', { limit: MAIL_PAGE_CHARS })).toBe(renderMail(mail('short'), 'en'));
    expect(renderMail(m, 'en', { offset: 2_000_000, limit: 10 })).toContain(
      `[offset 2000000 is past the end of the body (${body.length} characters): call read_mail with a smaller offset.]`,
    );
    expect(renderMail(m, 'zh-CN', { limit: 10 })).toContain('继续阅读');
  });

  it('a page never splits a character made of two UTF-16 units', () => {
    const emoji = mail('a🚀b');
    const first = renderMail(emoji, 'en', { limit: 2 });
    expect(first).toContain('\na\n');
    expect(first).toContain('offset 1.]');
  });

  it('read_thread shows each body up to THREAD_BODY_CHARS, with the read_mail offset for the rest', () => {
    const text = renderThread(
      { session_id: 's_1', session_alias: 'pi-task', offset: 0, total: 1, mails: [m], next_offset: null },
      'en',
    );
    expect(text.length).toBeLessThan(THREAD_BODY_CHARS + 2_000);
    expect(text).toContain(`and offset ${THREAD_BODY_CHARS}.]`);
  });
});
