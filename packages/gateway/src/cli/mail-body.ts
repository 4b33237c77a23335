/**
 * The body of `agentmail send`: the one limit of a mail body (`MAIL_BODY_MAX_CHARS` of
 * @agentmail/protocol, the Gateway's own), checked before anything is sent and enforced while
 * stdin is read — reading stops at the limit, so `--body - < 100MB.log` costs no more memory than
 * a body may have — and text that is not UTF-8 is refused instead of silently turned into U+FFFD.
 */
import { MAIL_BODY_MAX_CHARS } from '@agentmail/protocol';
import { CliError } from './errors.js';

/** The limit in the words of `--help` and of the error. */
export const BODY_LIMIT_WORDS = `${MAIL_BODY_MAX_CHARS.toLocaleString('en')} characters`;

function tooLarge(what: string): CliError {
  return new CliError('BODY_TOO_LARGE', `${what} is longer than a mail body may be (${BODY_LIMIT_WORDS})`, {
    suggestion: 'send less: split it over several mails, or attach it as a file with --attach <file>',
  });
}

/**
 * Read a body from `chunks` (stdin), decoding UTF-8 strictly and stopping as soon as the text is
 * over `maxChars` (UTF-16 code units, as the Gateway counts).
 * @throws CliError `AM_CLI_BODY_TOO_LARGE` over the limit (nothing is sent);
 *   `AM_CLI_NOT_UTF8` naming the byte offset of the first byte that is not UTF-8.
 */
export async function readBodyStream(
  chunks: AsyncIterable<Uint8Array>,
  maxChars: number = MAIL_BODY_MAX_CHARS,
): Promise<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  let length = 0;
  let offset = 0;
  const decode = (bytes: Uint8Array | undefined): void => {
    let text: string;
    try {
      text = bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true });
    } catch (err) {
      throw new CliError('NOT_UTF8', `the body read from stdin is not UTF-8 text (near byte ${offset})`, {
        suggestion:
          'convert it first (iconv -f <its encoding> -t UTF-8), or attach the file as it is with --attach',
        cause: err,
      });
    }
    length += text.length;
    if (length > maxChars) throw tooLarge('the body read from stdin');
    parts.push(text);
  };
  for await (const chunk of chunks) {
    decode(chunk);
    offset += chunk.length;
  }
  decode(undefined);
  return parts.join('');
}

/** `--body <text>` as given on the command line, checked against the limit. @throws CliError `AM_CLI_BODY_TOO_LARGE` */
export function checkBodyText(text: string, maxChars: number = MAIL_BODY_MAX_CHARS): string {
  if (text.length > maxChars) throw tooLarge('--body');
  return text;
}

/**
 * Node decodes command-line arguments as UTF-8 and turns a byte that is not UTF-8 into U+FFFD,
 * silently: the warning names the option, so the person knows the text was changed.
 */
export function replacementWarning(option: string, value: string): string | undefined {
  return value.includes('\uFFFD')
    ? `agentmail: warning: ${option} contains U+FFFD (�): a byte that was not UTF-8 was replaced; check your terminal's encoding (locale)`
    : undefined;
}
