/**
 * The inbox: waiting requests first (approve or deny in one tap), then the mails — unread or all,
 * with the unread count, more on demand, live as mail arrives.
 */
import type { MailSummary } from '@agentmail/protocol';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { useLiveTick } from '../bus.js';
import { MailBadges } from '../components/mail-badges.js';
import { RequestList } from '../components/request-list.js';
import { useLoad } from '../load.js';
import { href } from '../route.js';
import { t, when } from '../texts.js';

/** Mails per page, and how many more "show more" adds (the API gives at most 100). */
export const INBOX_PAGE = 25;
const INBOX_MAX = 100;

function Row(props: { mail: MailSummary }) {
  const m = props.mail;
  return (
    <li class={`mail-row ${m.status}${m.failure ? ' failure' : ''}`}>
      <a href={href('mail', m.id)} data-mail-id={m.id}>
        <span class="from">
          {m.from_name}
          <MailBadges mail={m} />
        </span>
        <span class="subject">{m.subject || t('web.mail.no_subject')}</span>
        <span class="snippet">{m.snippet}</span>
        <span class="session" data-session-id={m.session_id}>
          {m.session_alias
            ? t('web.thread.session', { alias: m.session_alias })
            : t('web.thread.default_session')}
        </span>
        <span class="meta">
          {m.attachments.length > 0 ? (
            <span title={t('web.mail.attachments')}>📎 {m.attachments.length} · </span>
          ) : null}
          {when(m.created_at)}
        </span>
      </a>
    </li>
  );
}

export function InboxPage(props: { all: boolean; onSignedOut: () => void }) {
  const [limit, setLimit] = useState(INBOX_PAGE);
  const tick = useLiveTick(
    (s) => s.type === 'new_mail' || s.type === 'permission_decision' || s.type === 'permission_withdrawn',
  );
  const status = props.all ? 'all' : 'unread';
  const loaded = useLoad(() => api.inbox({ status, limit }), [status, limit, tick], props.onSignedOut);
  const mails = [...(loaded.data?.mails ?? [])];
  // Unread comes oldest first (a work queue); the page shows newest first either way.
  if (!props.all) mails.reverse();
  return (
    <>
      <RequestList compact onSignedOut={props.onSignedOut} />
      <div class="page-head">
        <h1>{t('web.inbox.title')}</h1>
        <div class="segmented">
          <a
            href={href('inbox')}
            class={props.all ? '' : 'active'}
            aria-current={props.all ? undefined : 'page'}
          >
            {t('web.inbox.unread', { count: loaded.data?.unread_count ?? 0 })}
          </a>
          <a
            href={href('inbox', { view: 'all' })}
            class={props.all ? 'active' : ''}
            aria-current={props.all ? 'page' : undefined}
          >
            {t('web.inbox.all')}
          </a>
        </div>
      </div>
      {loaded.error ? <p class="error">{loaded.error}</p> : null}
      {loaded.data && mails.length === 0 ? (
        <p class="muted empty">{t(props.all ? 'web.inbox.empty_all' : 'web.inbox.empty_unread')}</p>
      ) : null}
      <ul class="mail-list">
        {mails.map((m) => (
          <Row key={m.id} mail={m} />
        ))}
      </ul>
      {loaded.data?.has_more && limit < INBOX_MAX ? (
        <button
          type="button"
          class="more"
          onClick={() => setLimit((l) => Math.min(INBOX_MAX, l + INBOX_PAGE))}
        >
          {t('web.inbox.more')}
        </button>
      ) : null}
    </>
  );
}
