import type {
  AttachmentInfo,
  ContactsResponse,
  Mail,
  MailSummary,
  ParticipantsResponse,
  SuggestResponse,
  ThreadResponse,
} from '@agentmail/protocol';
import { DEFAULT_LOCALE, formatText, type Locale } from './texts/index.js';

/**
 * Plain-text renderers of mail tool results (see SPEC B-17): the same text on every platform.
 * Every mail shows its id, the sender's and the reader's own addresses, cc, attachment ids, and
 * marks each party as "(person)" or "(agent)" from the explicit booleans (G-30). Labels come from
 * the text catalogue, so a locale changes words, never structure.
 */

/** `name (person) <address>`: one party, kind from the explicit `human` flag (G-30). */
export function renderParty(
  name: string,
  address: string,
  human: boolean,
  locale: Locale = DEFAULT_LOCALE,
): string {
  const kind = formatText(human ? 'tools.label.person' : 'tools.label.agent', {}, locale);
  return address ? `${name} ${kind} <${address}>` : `${name} ${kind}`;
}

/**
 * A session in a tool's answer: `session <alias>`, or `the default session` for a session without
 * an alias (a default session has none, SPEC G-3), never an empty name.
 * @example sessionWords('') // 'the default session'
 */
export function sessionWords(alias: string, locale: Locale = DEFAULT_LOCALE): string {
  return alias === ''
    ? formatText('tools.session.default', {}, locale)
    : formatText('tools.session.named', { session_alias: alias }, locale);
}

/** `id (filename, N bytes)` for each attachment, `; `-separated, or the "none" label. */
export function renderAttachments(
  attachments: readonly AttachmentInfo[],
  locale: Locale = DEFAULT_LOCALE,
): string {
  if (attachments.length === 0) return formatText('tools.label.none', {}, locale);
  return attachments
    .map((a) => `${a.id} (${a.filename}, ${formatText('tools.label.bytes', { size: a.size_bytes }, locale)})`)
    .join('; ');
}

function label(key: Parameters<typeof formatText>[0], locale: Locale): string {
  return formatText(key, {}, locale);
}

/** Status word plus flags: `unread`, `read · relay`, `unread · permission request`. */
function tags(m: MailSummary, locale: Locale): string {
  const out = [label(m.status === 'unread' ? 'tools.label.unread' : 'tools.label.read', locale)];
  if (m.kind === 'calendar') out.push(label('tools.label.calendar', locale));
  if (m.is_permission) out.push(label('tools.label.permission', locale));
  if (m.relay) out.push(label('tools.label.relay', locale));
  return out.join(' · ');
}

/** The header lines every rendering of a mail shares, without indentation. */
function headerLines(m: MailSummary, locale: Locale): string[] {
  const parties = (list: MailSummary['to']) =>
    list.length
      ? list.map((p) => renderParty(p.name, p.address, p.human, locale)).join(', ')
      : label('tools.label.none', locale);
  const lines = [
    `[${m.id}] ${tags(m, locale)} · ${label('tools.label.subject', locale)}: ${m.subject}`,
    `${label('tools.label.from', locale)}: ${renderParty(m.from_name, m.from_address, m.from_human, locale)}`,
    `${label('tools.label.to', locale)}: ${parties(m.to)}`,
    `${label('tools.label.cc', locale)}: ${parties(m.cc)}`,
    `${label('tools.label.date', locale)}: ${m.created_at}`,
    `${label('tools.label.session', locale)}: ${m.session_alias === '' ? label('tools.session.default', locale) : m.session_alias} (${m.session_id}) · ${label('tools.label.mode', locale)}: ${m.permission_mode}`,
    `${label('tools.label.reply_address', locale)}: ${m.reply_address}`,
    `${label('tools.label.self_address', locale)}: ${m.self_address}`,
  ];
  if (m.in_reply_to) lines.push(`${label('tools.label.in_reply_to', locale)}: ${m.in_reply_to}`);
  lines.push(`${label('tools.label.attachments', locale)}: ${renderAttachments(m.attachments, locale)}`);
  return lines;
}

function indent(lines: readonly string[], prefix: string): string {
  return lines.map((l, i) => (i === 0 ? l : `${prefix}${l}`)).join('\n');
}

/** Options of {@link renderInbox}. */
export interface RenderInboxOptions {
  /** The status asked for: `unread` or `all`. */
  status: 'unread' | 'all';
  /** Ids marked read after listing (see SPEC B-17). */
  marked?: readonly string[];
  /** Why marking failed, when it did. */
  markError?: string;
  /** @default 'en' */
  locale?: Locale;
}

/**
 * Render an inbox page (see SPEC B-17): header with counts, then per mail its id, status,
 * subject, sender (with address and person/agent), to, cc, date, session, reply and own
 * addresses, attachment ids and the snippet; then what was marked read.
 */
export function renderInbox(
  res: { mails: readonly MailSummary[]; unread_count: number; has_more: boolean },
  options: RenderInboxOptions,
): string {
  const locale = options.locale ?? DEFAULT_LOCALE;
  const status = label(options.status === 'all' ? 'tools.label.all' : 'tools.label.unread', locale);
  if (res.mails.length === 0) return formatText('tools.inbox.empty', { status }, locale);
  const out = [
    formatText('tools.inbox.header', { status, shown: res.mails.length, unread: res.unread_count }, locale),
    '',
  ];
  res.mails.forEach((m, i) => {
    const prefix = `${i + 1}. `;
    const pad = ' '.repeat(prefix.length);
    const lines = headerLines(m, locale);
    if (m.snippet) lines.push(`> ${m.snippet}`);
    out.push(prefix + indent(lines, pad), '');
  });
  if (res.has_more) out.push(formatText('tools.inbox.more', {}, locale));
  if (options.marked?.length)
    out.push(formatText('tools.inbox.marked', { ids: options.marked.join(', ') }, locale));
  if (options.markError)
    out.push(formatText('tools.inbox.mark_failed', { message: options.markError }, locale));
  return out.join('\n').trimEnd();
}

/** Characters of a body one `read_mail` page shows by default (a model's tool result stays small). @default 20_000 */
export const MAIL_PAGE_CHARS = 20_000;
/** Most characters of a body one `read_mail` page may show. @default 100_000 */
export const MAIL_PAGE_MAX_CHARS = 100_000;
/** Characters of each mail's body a `read_thread` page shows; the rest is read with `read_mail`. @default 4_000 */
export const THREAD_BODY_CHARS = 4_000;

/** Which characters of a body to show: from `offset` (default 0), at most `limit`. */
export interface BodyPage {
  offset?: number;
  limit: number;
}

/** `end` moved back off the middle of a surrogate pair, so a page never splits a character. */
function cutAt(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return Math.max(0, Math.min(end, text.length));
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * The shown part of a body and the line that says where it lies; the whole body and no line
 * when it fits (offset 0 and at most `limit` characters). Offsets count UTF-16 code units
 * (JavaScript string indices), never splitting a surrogate pair.
 */
function pageOfBody(mail: Mail, page: BodyPage, locale: Locale): { text: string; note?: string } {
  const total = mail.body.length;
  const from = cutAt(mail.body, Math.max(0, page.offset ?? 0));
  if (from === 0 && total <= page.limit) return { text: mail.body };
  if ((page.offset ?? 0) >= total && total > 0)
    return {
      text: '',
      note: formatText('tools.mail.page_past', { offset: page.offset ?? 0, total }, locale),
    };
  const to = Math.max(cutAt(mail.body, from + page.limit), Math.min(total, from + 1));
  const key = to >= total ? 'tools.mail.page_last' : 'tools.mail.page';
  return {
    text: mail.body.slice(from, to),
    note: formatText(key, { from, to, total, mail_id: mail.id }, locale),
  };
}

/**
 * Render one mail: header, everyone in the thread, then the body — whole, or with `page` the
 * characters `page.offset` … `page.offset + page.limit` of it between two lines that say where
 * they lie in the body and how to read on (SPEC B-17: a model reads a long body page by page).
 */
export function renderMail(mail: Mail, locale: Locale = DEFAULT_LOCALE, page?: BodyPage): string {
  const participants = mail.participants.length
    ? mail.participants.map((p) => renderParty(p.name, p.address, p.human, locale)).join(', ')
    : label('tools.label.none', locale);
  const body = page === undefined ? { text: mail.body } : pageOfBody(mail, page, locale);
  return [
    ...headerLines(mail, locale),
    `${label('tools.label.participants', locale)}: ${participants}`,
    '',
    ...(body.note === undefined ? [body.text] : [body.note, body.text, body.note]),
  ].join('\n');
}

/** Render a thread page, oldest first, each mail in full, with the next offset when more follow. */
export function renderThread(thread: ThreadResponse, locale: Locale = DEFAULT_LOCALE): string {
  const first = thread.mails.length ? thread.offset + 1 : thread.offset;
  const out = [
    formatText(
      'tools.thread.header',
      {
        session: sessionWords(thread.session_alias, locale),
        session_id: thread.session_id,
        first,
        last: thread.offset + thread.mails.length,
        total: thread.total,
      },
      locale,
    ),
  ];
  for (const m of thread.mails) out.push('', '---', renderMail(m, locale, { limit: THREAD_BODY_CHARS }));
  if (thread.next_offset !== null)
    out.push('', formatText('tools.thread.more', { next_offset: thread.next_offset }, locale));
  return out.join('\n');
}

/** Render the participants of a session: each party, and who has not spoken yet. */
export function renderParticipants(res: ParticipantsResponse, locale: Locale = DEFAULT_LOCALE): string {
  const out = [
    formatText(
      'tools.participants.header',
      { session: sessionWords(res.session_alias, locale), session_id: res.session_id },
      locale,
    ),
  ];
  for (const p of res.participants) {
    const silent = p.has_spoken ? '' : ` · ${label('tools.label.silent', locale)}`;
    const last = p.last_mail_at ? ` · ${p.last_mail_at}` : '';
    out.push(`- ${renderParty(p.name, p.address, p.human, locale)}${silent}${last}`);
  }
  if (res.participants.length === 0) out.push(label('tools.label.none', locale));
  return out.join('\n');
}

/** Render the contact list: name, person/agent, default address, platform, online, workspaces. */
export function renderContacts(res: ContactsResponse, locale: Locale = DEFAULT_LOCALE): string {
  if (res.contacts.length === 0) return formatText('tools.contacts.empty', {}, locale);
  const out = [formatText('tools.contacts.header', { count: res.contacts.length }, locale)];
  for (const c of res.contacts) {
    // Presence (online, last seen) is an agent's heartbeat (SPEC G-25): a person has none, so a
    // person's line shows none, not "offline, last seen: never" (issue 20).
    if (c.kind === 'person') {
      out.push(`- ${renderParty(c.name, c.address, true, locale)}`);
      continue;
    }
    const online = c.online
      ? label('tools.label.online', locale)
      : `${label('tools.label.offline', locale)}, ${label('tools.label.last_seen', locale)}: ${c.last_seen ?? label('tools.label.never', locale)}`;
    const platform = c.platform ? ` · ${label('tools.label.platform', locale)}: ${c.platform}` : '';
    const ws = c.workspaces.length
      ? ` · ${label('tools.label.workspaces', locale)}: ${c.workspaces.join(', ')}`
      : '';
    out.push(`- ${renderParty(c.name, c.address, false, locale)} · ${online}${platform}${ws}`);
  }
  return out.join('\n');
}

/** Render address suggestions: address, why, and the name/path/session they stand for. */
export function renderSuggestions(res: SuggestResponse, locale: Locale = DEFAULT_LOCALE): string {
  if (res.suggestions.length === 0) return formatText('tools.suggest.empty', {}, locale);
  return [
    formatText('tools.suggest.header', {}, locale),
    ...res.suggestions.map((s) => `- ${s.address} — ${s.reason}`),
  ].join('\n');
}
