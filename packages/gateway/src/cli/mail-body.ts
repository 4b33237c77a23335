/**
 * The body of `agentmail send`: the one limit of a mail body (`MAIL_BODY_MAX_CHARS` of
 * @agentmail/protocol, the Gateway's own), checked before anything is sent and enforced while
 * stdin is read — reading stops at the limit, so `--body - < 100MB.log` costs no more memory than
 * a body may have — and text that is not UTF-8 is refused instead of silently turned into U+FFFD.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MAIL_BODY_MAX_CHARS, MAIL_SUBJECT_MAX_CHARS } from '@agentmail/protocol';
import { CliError, isCliError } from './errors.js';
import { fileErrorWords } from './file-errors.js';

/** The limit in the words of `--help` and of the error. */
export const BODY_LIMIT_WORDS = `${MAIL_BODY_MAX_CHARS.toLocaleString('en')} characters`;

/**
 * How a long body gets in. A shell refuses a single argument over about 128 KB ("Argument list
 * too long", Linux's MAX_ARG_STRLEN) before the CLI runs, far below the body limit: a long text
 * goes through a file or stdin.
 */
export const LONG_BODY_WORDS =
  'a long text goes in from a file: --body-file <path>, or --body - < <path> (stdin)';

/**
 * A body over the limit: the limit and the size it has (`size`, in the words of how it was
 * measured). A body given on the command line is told the file and stdin ways; one already read
 * from a file or stdin is not told to use them (issue 20).
 */
function tooLarge(what: string, size: string, from: 'argument' | 'file or stdin'): CliError {
  const ways = from === 'argument' ? ` (${LONG_BODY_WORDS})` : '';
  return new CliError(
    'BODY_TOO_LARGE',
    `${what} is ${size}, longer than a mail body may be (${BODY_LIMIT_WORDS})`,
    {
      suggestion: `send less: split it over several mails${ways}, or attach it as a file with --attach <file>`,
    },
  );
}

/**
 * Read a body from `chunks` (stdin, or a file: `what` names it in the errors), decoding UTF-8 strictly and stopping as soon as the text is
 * over `maxChars` (UTF-16 code units, as the Gateway counts).
 * @throws CliError `AM_CLI_BODY_TOO_LARGE` over the limit (nothing is sent);
 *   `AM_CLI_NOT_UTF8` naming the byte offset of the first byte that is not UTF-8.
 */
export async function readBodyStream(
  chunks: AsyncIterable<Uint8Array>,
  maxChars: number = MAIL_BODY_MAX_CHARS,
  what = 'the body read from stdin',
  sizeBytes?: number,
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
      throw new CliError('NOT_UTF8', `${what} is not UTF-8 text (near byte ${offset})`, {
        suggestion:
          'convert it first (iconv -f <its encoding> -t UTF-8), or attach the file as it is with --attach',
        cause: err,
      });
    }
    length += text.length;
    // Reading stops here: the size of the rest of a stream is not known, a file's is.
    if (length > maxChars)
      throw tooLarge(
        what,
        sizeBytes === undefined
          ? `over ${maxChars.toLocaleString('en')} characters (reading stopped there)`
          : `${sizeBytes.toLocaleString('en')} bytes`,
        'file or stdin',
      );
    parts.push(text);
  };
  for await (const chunk of chunks) {
    decode(chunk);
    offset += chunk.length;
  }
  decode(undefined);
  return parts.join('');
}

/**
 * The body of `--body-file <path>` (relative to `cwd`), read as {@link readBodyStream} reads stdin.
 * @throws CliError `AM_CLI_FILE_UNREADABLE` naming `--body-file` and the cause (missing, a
 *   directory, not readable); `AM_CLI_BODY_TOO_LARGE`; `AM_CLI_NOT_UTF8`.
 */
export async function readBodyFile(path: string, cwd: string = process.cwd()): Promise<string> {
  const absolute = resolve(cwd, path);
  try {
    const info = await stat(absolute);
    if (info.isDirectory())
      throw new CliError(
        'FILE_UNREADABLE',
        `--body-file ${JSON.stringify(path)} is a directory, not a file`,
        {
          suggestion: 'give the path of a text file; nothing was sent',
        },
      );
    return await readBodyStream(
      createReadStream(absolute),
      MAIL_BODY_MAX_CHARS,
      `--body-file ${JSON.stringify(path)}`,
      info.isFile() ? info.size : undefined,
    );
  } catch (err) {
    if (isCliError(err)) throw err;
    const why = fileErrorWords(err);
    throw new CliError('FILE_UNREADABLE', `cannot read --body-file ${JSON.stringify(path)}: ${why}`, {
      suggestion: 'check the path; nothing was sent',
      cause: err,
    });
  }
}

/**
 * `--subject` as given, checked against the subject limit before anything is sent.
 * @throws CliError `AM_CLI_USAGE` naming `--subject`, its length and the fix
 */
export function checkSubject(subject: string): string {
  if (subject.length <= MAIL_SUBJECT_MAX_CHARS) return subject;
  throw new CliError(
    'USAGE',
    `--subject is ${subject.length.toLocaleString('en')} characters long; a subject may have at most ${MAIL_SUBJECT_MAX_CHARS}`,
    {
      suggestion:
        "give a short --subject and put the rest in the body (--body, or --body-file <path>); without --subject the body's first line is the subject",
    },
  );
}

/** `--body <text>` as given on the command line, checked against the limit. @throws CliError `AM_CLI_BODY_TOO_LARGE` */
export function checkBodyText(text: string, maxChars: number = MAIL_BODY_MAX_CHARS): string {
  if (text.length > maxChars)
    throw tooLarge('--body', `${text.length.toLocaleString('en')} characters`, 'argument');
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
