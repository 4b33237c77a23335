/**
 * What a mail subject may hold: no control characters.
 * A subject is one line of text people read in a list, a terminal, a notification: an ESC, BEL,
 * BS, CR or DEL in it could move a cursor, ring a bell or hide text wherever it is shown, and
 * comes back in every "Re:" of the thread. The Gateway normalises every subject it stores.
 */
import { DEFAULT_LOCALE, formatText, type Locale } from './texts/index.js';

/** Line breaks and tabs: folded into one space (a subject pasted from several lines stays readable). */
const FOLD = /[\t\n\v\f\r\u0085\u2028\u2029]+/gu;
/** Every other C0 control, DEL and the C1 controls: removed. */
const CONTROL = /\p{Cc}/gu;

/**
 * A subject without control characters: line breaks and tabs (CR, LF, TAB, VT, FF, NEL, U+2028,
 * U+2029) folded into one space, every other C0 control, DEL and C1 control removed, then trimmed.
 * Printable text, including every non-Latin script and emoji, is kept as it is. Idempotent.
 * @example normalizeSubject('Re: \u001b[31mred\u0007\r\nnext') // 'Re: [31mred next'
 */
export function normalizeSubject(subject: string): string {
  return subject.replace(FOLD, ' ').replace(CONTROL, '').trim();
}

/** Longest subject {@link subjectForSend} derives from a body, in characters (code points), the `…` included. @default 72 */
export const DERIVED_SUBJECT_MAX_CHARS = 72;

/** How far back from the cut a word boundary is looked for, in characters. */
const WORD_BREAK_WINDOW_CHARS = 20;

/**
 * The subject a mail is stored and shown with — one rule for every interface (CLI, web, agents'
 * mail tools), applied by the Gateway's send path so each shows the same:
 * - the subject given, normalised ({@link normalizeSubject}), when anything is left of it;
 * - else the body's first line that is not empty once normalised, cut to
 *   {@link DERIVED_SUBJECT_MAX_CHARS} characters with `…` (at a word boundary when one is near);
 * - else (the body is empty too) the catalogue's `subject.none`, `(no subject)`.
 * Never throws; idempotent for a subject it returned.
 * @example subjectForSend('  ', 'Fix the tests\nThey fail on CI') // 'Fix the tests'
 */
export function subjectForSend(subject: string, body: string, locale: Locale = DEFAULT_LOCALE): string {
  const given = normalizeSubject(subject);
  if (given !== '') return given;
  for (const line of body.split(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/u)) {
    const text = normalizeSubject(line);
    if (text !== '') return shorten(text, DERIVED_SUBJECT_MAX_CHARS);
  }
  return formatText('subject.none', {}, locale);
}

/** `text` cut to `max` code points with `…` (never splitting a surrogate pair), at a space near the cut when there is one. */
function shorten(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1);
  const space = head.lastIndexOf(' ');
  const cut = space > 0 && space >= head.length - WORD_BREAK_WINDOW_CHARS ? head.slice(0, space) : head;
  return `${cut.join('').trimEnd()}…`;
}
