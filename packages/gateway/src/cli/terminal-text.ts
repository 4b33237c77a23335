/**
 * What the CLI may print on a terminal (SPEC H-1). Everything it prints for a person passes
 * through {@link terminalSafe} on its way out (see `terminalIo` in output.ts), so text from a mail,
 * a tool call or another server — a subject, a body, a question, an error detail — can never start
 * an escape sequence, move the cursor, rewrite a line or reorder what the person reads. Machine
 * output (`--json`) is made safe the JSON way instead ({@link jsonForTerminal}): the same value,
 * exactly, with the dangerous characters written as `\u` escapes inside its strings.
 */

/**
 * Characters a terminal may act on instead of showing: every C0 control (NUL..US: ESC starts the
 * escape sequences, CR rewrites the line, BS erases), DEL, every C1 control (U+0080..U+009F: CSI,
 * OSC, DCS … in their one-character form), the line and paragraph separators (U+2028, U+2029),
 * the bidirectional embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069: they
 * reorder what is shown, "Trojan Source"), and lone surrogates (not text at all). `\n` and `\t`
 * are in the set too; {@link terminalSafe} keeps them where a block of text allows them.
 */
const UNSAFE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Cs}/gu;

/** The characters of {@link UNSAFE} that JSON.stringify leaves as they are (it escapes C0 and lone surrogates itself). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `\x1b`, `\u202e`: a visible, inert spelling of one unsafe character. */
function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (char === '\n') return '\\n';
  if (char === '\t') return '\\t';
  if (char === '\r') return '\\r';
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** How {@link terminalSafe} treats line structure. */
export interface TerminalSafeOptions {
  /**
   * `true`: a block of text (a mail body, a question, a whole printed report) keeps its line
   * breaks and tabs (`\r\n` counts as one break; a lone `\r` is shown as `\r`). `false`: one line
   * (a subject, a name, an address in a header or a table cell): every break is shown as `\n`.
   * @default false
   */
  multiline?: boolean;
}

/**
 * `text` made inert for a terminal: each character of the unsafe set (C0 and C1 controls, DEL,
 * line/paragraph separators, bidirectional overrides and isolates, lone surrogates) is replaced by
 * a visible escape (`\x1b`, `\x9b`, `\u202e`); everything else — letters of any script, emoji,
 * punctuation — is kept. The result never contains a character of the set (but `\n`/`\t` with
 * `multiline`), so it cannot start an escape sequence (SPEC H-1).
 *
 * @example terminalSafe('\x1b[2Jgotcha') // '\\x1b[2Jgotcha'
 * @example terminalSafe('line 1\r\nline 2', { multiline: true }) // 'line 1\nline 2'
 */
export function terminalSafe(text: string, options: TerminalSafeOptions = {}): string {
  const source = options.multiline ? text.replace(/\r\n/g, '\n') : text;
  return source.replace(UNSAFE, (char) =>
    options.multiline && (char === '\n' || char === '\t') ? char : visible(char),
  );
}

/**
 * `value` as JSON (indented by `indent` spaces) that is safe on a terminal and parses back to
 * exactly `value`: JSON.stringify already escapes C0 controls and lone surrogates; DEL, C1
 * controls, U+2028/U+2029 and the bidirectional controls are escaped as `\uXXXX` too (they occur
 * only inside strings, where the escape means the same character).
 *
 * @example jsonForTerminal({ subject: '\u009b31m' }) // '{"subject":"\\u009b31m"}'
 */
export function jsonForTerminal(value: unknown, indent = 0): string {
  const text = JSON.stringify(value, null, indent) ?? 'null';
  return text.replace(UNSAFE_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** True when `text` holds a character {@link terminalSafe} would replace (line breaks and tabs allowed when `multiline`). */
export function hasUnsafeText(text: string, options: TerminalSafeOptions = {}): boolean {
  return terminalSafe(text, options) !== (options.multiline ? text.replace(/\r\n/g, '\n') : text);
}
