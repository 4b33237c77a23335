/**
 * The address grammar `name@path.session` (see SPEC G-1..G-4, G-6), part of the wire format:
 * parsing, formatting, alias validity and the reply/self addresses carried by `new_mail` events.
 * (Making aliases from subjects, G-5, is a rule of shared-policy.)
 *
 * Character rules, chosen so that `parseAddress(formatAddress(a))` is `a` for every valid `a`:
 * - name: non-empty, no `@`, no whitespace, no control characters (`.` and `/` are allowed,
 *   since the name ends at the first `@`).
 * - path: `''` (the agent's default workspace) or absolute (starts with `/`), no control
 *   characters. {@link parseAddress} keeps it verbatim (no normalisation of `..`, `//` or a
 *   trailing `/`); {@link isNormalizedPath} / {@link normalizeAbsolutePath} let the Gateway refuse
 *   a non-normalised path and suggest the normalised one.
 * - session: `''` (default session), `'new'`, or an alias ({@link isValidAlias}). An alias can
 *   not contain `.` or `/`, because the session is what follows the last `.` after the last `/`.
 */
import { z } from 'zod';

/** Error codes of the address grammar (documented in docs/errors.md). */
export const ADDRESS_ERROR_CODES = {
  ADDRESS_INVALID: 'AM_ADDRESS_INVALID',
  ADDRESS_NEW_SESSION_FORBIDDEN: 'AM_ADDRESS_NEW_SESSION_FORBIDDEN',
} as const;

/** A code of {@link ADDRESS_ERROR_CODES}. */
export type AddressErrorCode = (typeof ADDRESS_ERROR_CODES)[keyof typeof ADDRESS_ERROR_CODES];

/**
 * A malformed address (see SPEC G-1..G-6). `code` is stable (`AM_ADDRESS_INVALID`,
 * `AM_ADDRESS_NEW_SESSION_FORBIDDEN`); `message` names the part at fault and the fix. Check it by
 * `code`: a host may load two copies of this package.
 */
export class AddressError extends Error {
  readonly code: AddressErrorCode;
  constructor(code: AddressErrorCode, message: string) {
    super(message);
    this.name = 'AddressError';
    this.code = code;
  }
}

/** A parsed address (see SPEC G-1). */
export interface Address {
  /** Agent or user name; never empty. */
  name: string;
  /** Absolute working directory, or `''` for the agent's default workspace. */
  path: string;
  /** `''` = default session, `'new'` = always a new session, else an existing alias (G-2). */
  session: string;
}

/** The session word that asks for a new session (see SPEC G-2). Never in reply/self addresses. */
export const NEW_SESSION = 'new';

/** Longest alias accepted by {@link isValidAlias}, in code points. @default 64 */
export const ALIAS_MAX_LENGTH = 64;

const CONTROL = /\p{Cc}/u;
const WHITESPACE_OR_CONTROL = /[\s\p{Cc}]/u;
const ADDRESS_FORMAT_HINT = 'write name, name@/absolute/path. or name@/absolute/path.session';

function invalid(input: string, problem: string, fix: string): AddressError {
  return new AddressError(
    ADDRESS_ERROR_CODES.ADDRESS_INVALID,
    `address ${JSON.stringify(input)}: ${problem}; ${fix} (see SPEC G-3)`,
  );
}

/**
 * True when `alias` can be a session alias: 1..{@link ALIAS_MAX_LENGTH} code points, no `.`,
 * `/` , whitespace or control characters, and not the word `new` in any letter case (it would
 * read as "new session").
 * @example isValidAlias('pi-fix-import-paths') // true
 */
export function isValidAlias(alias: string): boolean {
  if (alias.length === 0 || Array.from(alias).length > ALIAS_MAX_LENGTH) return false;
  if (alias.includes('.') || alias.includes('/') || WHITESPACE_OR_CONTROL.test(alias)) return false;
  return alias.toLowerCase() !== NEW_SESSION;
}

/** Problem with a name, or undefined when valid. */
function nameProblem(name: string): [string, string] | undefined {
  if (name.length === 0)
    return ['the name is missing', `put the agent or user name first: ${ADDRESS_FORMAT_HINT}`];
  if (name.includes('@')) return ['the name contains "@"', 'a name can not contain "@"'];
  if (WHITESPACE_OR_CONTROL.test(name))
    return ['the name contains whitespace or a control character', 'remove it from the name'];
  return undefined;
}

function pathProblem(path: string): [string, string] | undefined {
  if (path === '') return undefined;
  if (!path.startsWith('/'))
    return [
      `the path ${JSON.stringify(path)} is relative`,
      'give an absolute path starting with "/", or leave it out for the default workspace ' +
        '(name@. or name@.session)',
    ];
  if (CONTROL.test(path)) return ['the path contains a control character', 'remove it from the path'];
  return undefined;
}

function sessionProblem(session: string): [string, string] | undefined {
  if (session === '' || session === NEW_SESSION) return undefined;
  if (session.toLowerCase() === NEW_SESSION)
    return [`the session ${JSON.stringify(session)} is not the word "new"`, 'write "new" in lower case'];
  if (isValidAlias(session)) return undefined;
  return [
    `the session alias ${JSON.stringify(session)} is not valid`,
    `an alias has 1..${ALIAS_MAX_LENGTH} characters without ".", "/", whitespace or control characters; ` +
      'a path whose last segment contains "." needs a trailing "." (name@/srv/app.v2.)',
  ];
}

/**
 * The lexically normalised form of an absolute path: `.` segments and empty segments (`//`)
 * dropped, `..` resolved against the segment before it (above the root it stays at the root, as
 * POSIX does), no trailing `/` except for the root itself. Pure: the file system is never read,
 * so symbolic links are not resolved. `''` (the default workspace) is returned as is.
 *
 * @throws AddressError `AM_ADDRESS_INVALID` when `path` is relative (see SPEC G-3).
 * @example normalizeAbsolutePath('/x/../../etc') // '/etc'
 * @example normalizeAbsolutePath('//srv//app/') // '/srv/app'
 */
export function normalizeAbsolutePath(path: string): string {
  if (path === '') return '';
  if (!path.startsWith('/'))
    throw new AddressError(
      ADDRESS_ERROR_CODES.ADDRESS_INVALID,
      `path ${JSON.stringify(path)} is relative; give an absolute path starting with "/" (see SPEC G-3)`,
    );
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/**
 * True when `path` is `''` or an absolute path equal to its {@link normalizeAbsolutePath} form:
 * no `.` or `..` segment, no `//`, no trailing `/` except the root `/`. A relative path is false.
 * @example isNormalizedPath('/srv/app') // true
 * @example isNormalizedPath('/srv/app/') // false
 */
export function isNormalizedPath(path: string): boolean {
  if (path === '') return true;
  return path.startsWith('/') && normalizeAbsolutePath(path) === path;
}

/**
 * Parse `name`, `name@path.session`, `name@.session` or `name@path.` (see SPEC G-3).
 *
 * The name ends at the first `@`; the session is whatever follows the last `.` after the last
 * `/` (no such `.` → default session). So `pi@/srv/app.v2` is path `/srv/app` with alias `v2`:
 * write `pi@/srv/app.v2.` for the directory `app.v2`. Surrounding whitespace is ignored.
 *
 * @returns `{ name, path, session }`; `path`/`session` are `''` for the defaults.
 * @throws AddressError `AM_ADDRESS_INVALID` when the name is missing or malformed, the path is
 *   relative, or the session alias is not valid ({@link isValidAlias}); the message names the
 *   part and the fix.
 * @example parseAddress('pi@/srv/app.v2.fix-x') // { name: 'pi', path: '/srv/app.v2', session: 'fix-x' }
 */
export function parseAddress(input: string): Address {
  const text = input.trim();
  if (text === '') throw invalid(input, 'the address is empty', ADDRESS_FORMAT_HINT);
  const at = text.indexOf('@');
  const name = at === -1 ? text : text.slice(0, at);
  const rest = at === -1 ? '' : text.slice(at + 1);
  const lastSlash = rest.lastIndexOf('/');
  const lastDot = rest.lastIndexOf('.');
  const dot = lastDot > lastSlash ? lastDot : -1;
  const path = dot === -1 ? rest : rest.slice(0, dot);
  const session = dot === -1 ? '' : rest.slice(dot + 1);
  const address: Address = { name, path, session };
  const problem = nameProblem(name) ?? pathProblem(path) ?? sessionProblem(session);
  if (problem) throw invalid(input, problem[0], problem[1]);
  return address;
}

/**
 * Format an address, always with `@` and `.` (`pi@.`, `pi@/srv/app.v2.`), so the result parses
 * back to the same triple (see SPEC G-4).
 *
 * @throws AddressError `AM_ADDRESS_INVALID` when a part could not be parsed back (empty name,
 *   relative path, invalid alias).
 * @example formatAddress({ name: 'pi', path: '/srv/app.v2', session: '' }) // 'pi@/srv/app.v2.'
 */
export function formatAddress(address: Address): string {
  const text = `${address.name}@${address.path}.${address.session}`;
  const problem = nameProblem(address.name) ?? pathProblem(address.path) ?? sessionProblem(address.session);
  if (problem) throw invalid(text, problem[0], problem[1]);
  return text;
}

/** Parts of a session address: the session is given by its alias, never by the word `new`. */
export interface SessionAddressParts {
  /** Agent or user name. */
  name: string;
  /** Absolute working directory, or `''` (people, default workspace). */
  path: string;
  /** Session alias, or `''` for the default session. */
  alias: string;
}

function sessionAddress(parts: SessionAddressParts, which: string): string {
  if (parts.alias.toLowerCase() === NEW_SESSION)
    throw new AddressError(
      ADDRESS_ERROR_CODES.ADDRESS_NEW_SESSION_FORBIDDEN,
      `${which}: the session "${parts.alias}" would create a new session on every reply; ` +
        'pass the alias of the existing session (see SPEC G-6)',
    );
  return formatAddress({ name: parts.name, path: parts.path, session: parts.alias });
}

/**
 * Where a reply to a mail should go: the sender's name, workspace path and the session alias,
 * e.g. `alice@.pi-fix-import-paths` (see SPEC G-6, `reply_address`).
 * @throws AddressError `AM_ADDRESS_NEW_SESSION_FORBIDDEN` when `alias` is `new`;
 *   `AM_ADDRESS_INVALID` for a malformed part.
 */
export function replyAddress(parts: SessionAddressParts): string {
  return sessionAddress(parts, 'reply_address');
}

/**
 * The recipient's own address in a session, e.g. `pi@/srv/app.pi-fix-import-paths`
 * (see SPEC G-6, `self_address`).
 * @throws AddressError `AM_ADDRESS_NEW_SESSION_FORBIDDEN` when `alias` is `new`;
 *   `AM_ADDRESS_INVALID` for a malformed part.
 */
export function selfAddress(parts: SessionAddressParts): string {
  return sessionAddress(parts, 'self_address');
}

/**
 * True when `err` is an {@link AddressError} (by `code`, so it works across duplicate package
 * copies), optionally of one code.
 */
export function isAddressError(err: unknown, code?: AddressErrorCode): err is AddressError {
  if (typeof err !== 'object' || err === null) return false;
  const c = (err as { code?: unknown }).code;
  return code === undefined ? Object.values(ADDRESS_ERROR_CODES).includes(c as AddressErrorCode) : c === code;
}

/**
 * An address field of a request (`to`, `cc`): a string {@link parseAddress} accepts. The decode
 * error names the field and the parser's reason (G-10), e.g. `field "to": address "pi@rel":
 * the path "rel" is relative; …`.
 */
export const AddressString = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    try {
      parseAddress(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
    }
  });
