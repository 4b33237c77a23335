/**
 * Session aliases made from subjects (see SPEC G-5): folding, candidates and the first free one.
 * The address grammar itself (parse, format, alias validity) is wire format: `@agentmail/protocol`.
 */
import { isValidAlias } from '@agentmail/protocol';
import { AgentMailError, ERROR_CODES } from './errors.js';

/**
 * Longest alias base built by {@link aliasCandidates} from agent name and subject, in code
 * points, before any `-N` suffix. Leaves room for the suffix under `ALIAS_MAX_LENGTH`.
 * @default 48
 */
export const ALIAS_BASE_MAX_LENGTH = 48;

/** Highest collision suffix tried by {@link aliasCandidates} (`-2` … `-99`). @default 99 */
export const ALIAS_MAX_SUFFIX = 99;

/**
 * Code points of the session id used in the fallback alias `session-<id>` (G-5), taken after
 * folding (a UUID keeps its first 8 hex digits). @default 8
 */
export const ALIAS_FALLBACK_ID_LENGTH = 8;

/**
 * Fold text to alias characters (see SPEC G-5): NFKC, lower case, letters, digits and combining
 * marks of any script kept (marks so scripts like Devanagari stay readable), every other run
 * folded to one `-`, `-` trimmed from both ends.
 */
function foldAlias(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The alias base for a new session: agent name and subject folded (see SPEC G-5), at most
 * {@link ALIAS_BASE_MAX_LENGTH} code points. `''` when nothing usable remains.
 * @example aliasBase('pi', 'Fix import paths!') // 'pi-fix-import-paths'
 */
export function aliasBase(agentName: string, subject: string): string {
  const folded = foldAlias(`${agentName} ${subject}`);
  return Array.from(folded).slice(0, ALIAS_BASE_MAX_LENGTH).join('').replace(/-+$/, '');
}

/**
 * Every alias a new session may get, in order of preference (see SPEC G-5): the base
 * ({@link aliasBase}), then `base-2` … `base-99`, then `session-<first 8 of sessionId>`. Only
 * valid aliases are listed (a base `new` is skipped). Pure: the Gateway tries them in order
 * under its "set only if still empty" update.
 * @throws AgentMailError `AM_ALIAS_SESSION_ID_MISSING` when `sessionId` has no letter or digit
 *   (the fallback could not be built).
 * @example aliasCandidates('pi', 'Fix import paths!', '0b7c52e1-…') // ['pi-fix-import-paths', 'pi-fix-import-paths-2', …, 'session-0b7c52e1']
 */
export function aliasCandidates(agentName: string, subject: string, sessionId: string): string[] {
  const idPart = Array.from(foldAlias(sessionId))
    .slice(0, ALIAS_FALLBACK_ID_LENGTH)
    .join('')
    .replace(/-+$/, '');
  if (idPart === '')
    throw new AgentMailError(
      ERROR_CODES.ALIAS_SESSION_ID_MISSING,
      `sessionId ${JSON.stringify(sessionId)} has no letter or digit; ` +
        'pass the id of the created session (see SPEC G-5)',
    );
  const candidates: string[] = [];
  const base = aliasBase(agentName, subject);
  if (base !== '') {
    candidates.push(base);
    for (let n = 2; n <= ALIAS_MAX_SUFFIX; n++) candidates.push(`${base}-${n}`);
  }
  candidates.push(`session-${idPart}`);
  return candidates.filter(isValidAlias);
}

/** Whether an alias is already used: a predicate or a set of used aliases. */
export type AliasTaken = ((alias: string) => boolean) | ReadonlySet<string>;

/**
 * The first candidate not taken.
 * @throws AgentMailError `AM_ALIAS_EXHAUSTED` when every candidate is taken.
 */
export function pickFreeAlias(candidates: readonly string[], taken: AliasTaken): string {
  const isTaken = typeof taken === 'function' ? taken : (alias: string) => taken.has(alias);
  const free = candidates.find((alias) => !isTaken(alias));
  if (free === undefined)
    throw new AgentMailError(
      ERROR_CODES.ALIAS_EXHAUSTED,
      `all ${candidates.length} alias candidates are taken (last: ${JSON.stringify(candidates.at(-1) ?? '')}); ` +
        'choose an alias explicitly (see SPEC G-5)',
    );
  return free;
}

/**
 * The alias for a session created by `.new` (see SPEC G-5): the first free one of
 * {@link aliasCandidates}.
 * @throws AgentMailError `AM_ALIAS_SESSION_ID_MISSING` (see {@link aliasCandidates}),
 *   `AM_ALIAS_EXHAUSTED` (see {@link pickFreeAlias}).
 * @example aliasFromSubject('pi', 'Fix import paths!', sessionId, new Set(['pi-fix-import-paths'])) // 'pi-fix-import-paths-2'
 */
export function aliasFromSubject(
  agentName: string,
  subject: string,
  sessionId: string,
  taken: AliasTaken,
): string {
  return pickFreeAlias(aliasCandidates(agentName, subject, sessionId), taken);
}
