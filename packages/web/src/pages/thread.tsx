/**
 * A thread: every mail of the session oldest first — who wrote to whom (agent or person, their
 * addresses), the session alias, the body as sanitized Markdown (or plain text), attachments to
 * download, the request a question mail carries — with reply and forward. New mails of the
 * session appear live.
 */
import type { Mail } from '@agentmail/protocol';
import { useEffect, useState } from 'preact/hooks';
import { api, attachmentHref } from '../api.js';
import { useLiveTick } from '../bus.js';
import { RequestList } from '../components/request-list.js';
import { useLoad } from '../load.js';
import { renderMarkdown } from '../markdown.js';
import { href } from '../route.js';
import { bytes, t, when } from '../texts.js';

/** Mails loaded per page of a thread (the API's largest page). */
const THREAD_PAGE = 100;

function Body(props: { body: string }) {
  const [plain, setPlain] = useState(false);
  return (
    <div class="body-wrap">
      {plain ? (
        <pre class="body plain">{props.body}</pre>
      ) : (
        // renderMarkdown sanitizes (markdown.ts): raw HTML is shown as text, links are checked.
        <div class="body markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(props.body) }} />
      )}
      <button type="button" class="link small" onClick={() => setPlain((p) => !p)}>
        {t(plain ? 'web.mail.show_formatted' : 'web.mail.show_plain')}
      </button>
    </div>
  );
}

function MailView(props: { mail: Mail; onSignedOut: () => void }) {
  const m = props.mail;
  const names = (list: Mail['to']) => list.map((p) => p.address).join(', ');
  return (
    <article class="card mail" id={`mail-${m.id}`} data-mail-id={m.id}>
      <header>
        <strong class="from">{m.from_name}</strong>
        <span class={`pill ${m.from_human ? 'pill-person' : 'pill-agent'}`}>
          {t(m.from_human ? 'web.who.person' : 'web.who.agent')}
        </span>
        {m.relay ? <span class="pill">{t('web.mail.relay')}</span> : null}
        <span class="muted right">{when(m.created_at)}</span>
      </header>
      <dl class="addresses">
        <dt>{t('web.mail.from')}</dt>
        <dd>{m.from_address}</dd>
        <dt>{t('web.mail.to')}</dt>
        <dd>{names(m.to)}</dd>
        {m.cc.length > 0 ? (
          <>
            <dt>{t('web.mail.cc')}</dt>
            <dd>{names(m.cc)}</dd>
          </>
        ) : null}
      </dl>
      <h2 class="subject">{m.subject || t('web.mail.no_subject')}</h2>
      <Body body={m.body} />
      {m.is_permission ? <RequestList mailId={m.id} onSignedOut={props.onSignedOut} /> : null}
      {m.attachments.length > 0 ? (
        <ul class="attachments" aria-label={t('web.mail.attachments')}>
          {m.attachments.map((a) => (
            <li key={a.id}>
              <a href={attachmentHref(a.id)} download={a.filename} data-attachment-id={a.id}>
                📎 {a.filename}
              </a>{' '}
              <span class="muted small">
                {bytes(a.size_bytes)} · {a.content_type}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      <div class="actions">
        <a class="button" href={href('compose', { reply: m.id })}>
          {t('web.mail.reply')}
        </a>
        <a class="button" href={href('compose', { forward: m.id })}>
          {t('web.mail.forward')}
        </a>
      </div>
    </article>
  );
}

export function ThreadPage(props: { id: string; onSignedOut: () => void }) {
  const [sessionId, setSessionId] = useState<string | undefined>();
  const tick = useLiveTick(
    (s) => s.type === 'new_mail' && (sessionId === undefined || s.data.session_id === sessionId),
  );
  const loaded = useLoad(
    () => api.thread(props.id, { limit: THREAD_PAGE }),
    [props.id, tick],
    props.onSignedOut,
  );
  const thread = loaded.data;

  useEffect(() => {
    if (thread === undefined) return;
    setSessionId(thread.session_id);
    const unread = thread.mails.filter((m) => m.status === 'unread').map((m) => m.id);
    if (unread.length > 0) void api.markRead(unread).catch(() => undefined);
  }, [thread]);

  if (loaded.error && thread === undefined)
    return (
      <>
        <p class="error">{loaded.error}</p>
        <a href={href('inbox')}>{t('web.mail.back')}</a>
      </>
    );
  if (thread === undefined) return <p class="muted">{t('web.loading')}</p>;
  const last = thread.mails.at(-1);
  return (
    <>
      <div class="page-head">
        <h1>{thread.mails[0]?.subject || t('web.mail.no_subject')}</h1>
        <span class="muted">
          {thread.session_alias
            ? t('web.thread.session', { alias: thread.session_alias })
            : t('web.thread.default_session')}
          {last ? ` · ${t('web.thread.continue_at', { address: last.reply_address })}` : ''}
        </span>
      </div>
      {thread.mails.map((m) => (
        <MailView key={m.id} mail={m} onSignedOut={props.onSignedOut} />
      ))}
      {thread.next_offset !== null ? (
        <p class="muted">{t('web.thread.more', { count: thread.total - thread.mails.length })}</p>
      ) : null}
    </>
  );
}
