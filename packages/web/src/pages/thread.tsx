/**
 * A thread: the mails of the session oldest first, opened at the mail the person clicked — that
 * mail is scrolled to and highlighted, the mails before it are folded to one line each (the
 * nearest few shown, the rest behind "show older"), and a long body shows its first lines with a
 * "show all". So a thread of a thousand mails and a megabyte body opens at the clicked mail in a
 * page of bounded height. Each mail shows who wrote to whom (agent or person, their addresses),
 * the body as sanitized Markdown (or plain text), attachments, a failure mail marked as one, the
 * request a question mail carries (or how it was decided) — with reply and forward. New mails of
 * the session appear live.
 */
import type { Mail, ThreadResponse } from '@agentmail/protocol';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, attachmentHref } from '../api.js';
import { useLiveTick } from '../bus.js';
import { MailBadges } from '../components/mail-badges.js';
import { RequestList } from '../components/request-list.js';
import { explain, isSignedOut } from '../errors.js';
import { useLoad } from '../load.js';
import { renderMarkdown } from '../markdown.js';
import { href } from '../route.js';
import { bytes, t, when } from '../texts.js';

/** Mails loaded per page of a thread (the API's largest page). */
export const THREAD_PAGE = 100;
/** Folded mails before the clicked one that show without "show older". @default 3 */
export const OLDER_SHOWN = 3;
/** A body with more lines than this is folded to its first {@link BODY_PREVIEW_LINES}. @default 24 */
export const BODY_FOLD_LINES = 24;
/** A body longer than this, in characters, is folded too. @default 3_000 */
export const BODY_FOLD_CHARS = 3_000;
/** Lines a folded body shows. @default 12 */
export const BODY_PREVIEW_LINES = 12;
/** Characters a folded body shows at most (a body of one enormous line). @default 1_500 */
export const BODY_PREVIEW_CHARS = 1_500;

/** The first lines of a long body, or undefined when the body is short enough to show whole. */
export function bodyPreview(body: string): string | undefined {
  let lines = 0;
  let cut = -1;
  for (let i = body.indexOf('\n'); i >= 0; i = body.indexOf('\n', i + 1)) {
    lines++;
    if (lines === BODY_PREVIEW_LINES) cut = i;
    if (lines > BODY_FOLD_LINES) break;
  }
  if (lines <= BODY_FOLD_LINES && body.length <= BODY_FOLD_CHARS) return undefined;
  const head = cut >= 0 ? body.slice(0, cut) : body;
  return head.length > BODY_PREVIEW_CHARS ? `${head.slice(0, BODY_PREVIEW_CHARS)}…` : head;
}

function Body(props: { body: string }) {
  const [plain, setPlain] = useState(false);
  const preview = useMemo(() => bodyPreview(props.body), [props.body]);
  const [whole, setWhole] = useState(false);
  const shown = whole || preview === undefined ? props.body : preview;
  // Rendering a megabyte as Markdown takes a while: only what is shown is rendered.
  const html = useMemo(() => (plain ? '' : renderMarkdown(shown)), [plain, shown]);
  return (
    <div class="body-wrap">
      {plain ? (
        <pre class="body plain">{shown}</pre>
      ) : (
        // renderMarkdown sanitizes (markdown.ts): raw HTML is shown as text, links are checked.
        <div class="body markdown" dangerouslySetInnerHTML={{ __html: html }} />
      )}
      <div class="body-actions">
        {preview !== undefined && !whole ? (
          <button type="button" class="small show-all" onClick={() => setWhole(true)}>
            {t('web.mail.show_all', { size: bytes(new TextEncoder().encode(props.body).length) })}
          </button>
        ) : null}
        <button type="button" class="link small" onClick={() => setPlain((p) => !p)}>
          {t(plain ? 'web.mail.show_formatted' : 'web.mail.show_plain')}
        </button>
      </div>
    </div>
  );
}

function MailView(props: { mail: Mail; focused: boolean; onSignedOut: () => void }) {
  const m = props.mail;
  const names = (list: Mail['to']) => list.map((p) => p.address).join(', ');
  return (
    <article
      class={`card mail${props.focused ? ' focused' : ''}${m.failure ? ' failure' : ''}`}
      id={`mail-${m.id}`}
      data-mail-id={m.id}
      aria-current={props.focused ? 'true' : undefined}
    >
      <header>
        <strong class="from">{m.from_name}</strong>
        <MailBadges mail={m} />
        {m.relay && !m.failure ? <span class="pill">{t('web.mail.relay')}</span> : null}
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
      {m.failure ? (
        <p class="failure-note" role="note">
          {t('web.mail.failure_note')}
        </p>
      ) : null}
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

/** A mail folded to one line (sender, time, subject and the start of the body); a tap opens it. */
function FoldedMail(props: { mail: Mail; onOpen: () => void }) {
  const m = props.mail;
  return (
    <article class="card mail folded" id={`mail-${m.id}`} data-mail-id={m.id}>
      <button
        type="button"
        class="unfold"
        onClick={props.onOpen}
        aria-label={t('web.thread.open_mail', { from: m.from_name, when: when(m.created_at) })}
      >
        <span class="from">
          <strong>{m.from_name}</strong>
          <MailBadges mail={m} />
        </span>
        <span class="muted small">{when(m.created_at)}</span>
        <span class="snippet">{m.snippet || m.subject || t('web.mail.no_subject')}</span>
      </button>
    </article>
  );
}

/** Mails loaded beyond the first window (older or newer pages the person asked for). */
interface Extra {
  before: Mail[];
  after: Mail[];
  /** Offset of the first loaded mail, when older pages were loaded. */
  start?: number;
}

export function ThreadPage(props: { id: string; onSignedOut: () => void }) {
  const [sessionId, setSessionId] = useState<string | undefined>();
  const tick = useLiveTick(
    (s) => s.type === 'new_mail' && (sessionId === undefined || s.data.session_id === sessionId),
  );
  // The page that holds the clicked mail, not the thread's first page (a long thread's clicked
  // mail is usually near its end).
  const loaded = useLoad(
    () => api.thread(props.id, { limit: THREAD_PAGE, around: props.id }),
    [props.id, tick],
    props.onSignedOut,
  );
  const thread = loaded.data;
  const [extra, setExtra] = useState<Extra>({ before: [], after: [] });
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [showOlder, setShowOlder] = useState(false);
  const [moreError, setMoreError] = useState<string | undefined>();
  const scrolledTo = useRef<string | undefined>(undefined);

  useEffect(() => {
    setExtra({ before: [], after: [] });
    setOpen(new Set());
    setShowOlder(false);
  }, [props.id]);

  useEffect(() => {
    if (thread === undefined) return;
    setSessionId(thread.session_id);
    const unread = thread.mails.filter((m) => m.status === 'unread').map((m) => m.id);
    if (unread.length > 0) void api.markRead(unread).catch(() => undefined);
  }, [thread]);

  useEffect(() => {
    if (thread === undefined || scrolledTo.current === props.id) return;
    const el = document.getElementById(`mail-${props.id}`);
    if (el === null) return;
    scrolledTo.current = props.id;
    el.scrollIntoView({ block: 'start' });
  }, [thread, props.id]);

  const more = async (which: 'before' | 'after', page: () => Promise<ThreadResponse>) => {
    setMoreError(undefined);
    try {
      const r = await page();
      setExtra((x) =>
        which === 'before'
          ? { ...x, before: [...r.mails, ...x.before], start: r.offset }
          : { ...x, after: [...x.after, ...r.mails] },
      );
    } catch (err) {
      if (isSignedOut(err)) props.onSignedOut();
      setMoreError(explain(err));
    }
  };

  if (loaded.error && thread === undefined)
    return (
      <>
        <p class="error">{loaded.error}</p>
        <a href={href('inbox')}>{t('web.mail.back')}</a>
      </>
    );
  if (thread === undefined) return <p class="muted">{t('web.loading')}</p>;

  // Loaded mails in thread order: older pages, the window, newer pages (without repeats: a live
  // reload may move the window over a page loaded before).
  const byId = new Map<string, Mail>();
  for (const m of [...extra.before, ...thread.mails, ...extra.after]) if (!byId.has(m.id)) byId.set(m.id, m);
  const mails = [...byId.values()];
  const start = Math.min(extra.start ?? thread.offset, thread.offset);
  const end = start + mails.length;
  const at = mails.findIndex((m) => m.id === props.id);
  const older = at > 0 ? mails.slice(0, at) : [];
  const rest = at >= 0 ? mails.slice(at) : mails;
  const hiddenOlder = showOlder ? 0 : Math.max(0, older.length - OLDER_SHOWN);
  const last = mails.at(-1);
  const full = (m: Mail) => (
    <MailView key={m.id} mail={m} focused={m.id === props.id} onSignedOut={props.onSignedOut} />
  );
  // Older mails fold to a line each until opened; the clicked one and everything after are whole.
  const folded = (m: Mail) =>
    open.has(m.id) ? (
      full(m)
    ) : (
      <FoldedMail key={m.id} mail={m} onOpen={() => setOpen((s) => new Set([...s, m.id]))} />
    );
  return (
    <>
      <div class="page-head">
        <h1>{((at >= 0 ? mails[at] : mails[0])?.subject ?? '') || t('web.mail.no_subject')}</h1>
        <span class="muted">
          {thread.session_alias
            ? t('web.thread.session', { alias: thread.session_alias })
            : t('web.thread.default_session')}
          {last ? ` · ${t('web.thread.continue_at', { address: last.reply_address })}` : ''}
        </span>
      </div>
      {!showOlder && start + hiddenOlder > 0 ? (
        <button type="button" class="more older" onClick={() => setShowOlder(true)}>
          {t('web.thread.show_older', { count: start + hiddenOlder })}
        </button>
      ) : null}
      {showOlder && start > 0 ? (
        <button
          type="button"
          class="more older"
          onClick={() =>
            void more('before', () =>
              api.thread(props.id, {
                offset: Math.max(0, start - THREAD_PAGE),
                limit: Math.min(THREAD_PAGE, start),
              }),
            )
          }
        >
          {t('web.thread.load_earlier', { count: start })}
        </button>
      ) : null}
      {older.slice(hiddenOlder).map(folded)}
      {rest.map(full)}
      {end < thread.total ? (
        <button
          type="button"
          class="more newer"
          onClick={() => void more('after', () => api.thread(props.id, { offset: end, limit: THREAD_PAGE }))}
        >
          {t('web.thread.load_newer', { count: thread.total - end })}
        </button>
      ) : null}
      {moreError ? <p class="error">{moreError}</p> : null}
    </>
  );
}
