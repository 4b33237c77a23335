/**
 * What a mail subject may hold: no control characters.
 * A subject is one line of text people read in a list, a terminal, a notification: an ESC, BEL,
 * BS, CR or DEL in it could move a cursor, ring a bell or hide text wherever it is shown, and
 * comes back in every "Re:" of the thread. The Gateway normalises every subject it stores.
 */

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
