/**
 * Naming sync, platform → Gateway (see SPEC B-11): when the platform session of a mail session
 * got a (new) name, the bridge sends it to `POST /sessions/{id}/sync` as title plus an alias
 * folded from it. The fingerprint of the name is stored BEFORE the request, so the next turn
 * (and the echo of our own rename) does not sync again; adopted sessions are never synced.
 * Pure: the bridge reads/writes the platform name and stores the {@link NamingSyncState}.
 */
import type { SessionSyncRequest, SessionSyncResponse } from '@agentmail/protocol';
import { aliasBase } from './alias.js';

/** Longest title sent to the Gateway, in code points (the wire limit). @default 500 */
export const NAMING_SYNC_TITLE_MAX_LENGTH = 500;

/** What the bridge remembers per mail session (see SPEC B-11). */
export interface NamingSyncState {
  /** {@link namingFingerprint} of the platform name last sent (stored before the request). */
  fingerprint: string;
  /** The final alias the Gateway answered (suffixed on collision), once known. */
  alias?: string;
}

/** Input of {@link decideNamingSync}. */
export interface NamingSyncInput {
  /** The session was adopted from the platform (`platform_session_id` set): never synced. */
  adopted: boolean;
  /** The platform session's current name, or undefined when it has none. */
  platformName: string | undefined;
  /** The stored state of the last sync, or undefined when none happened. */
  state: NamingSyncState | undefined;
  /** The agent's name: the alias is folded from agent name and platform name (G-5). */
  agentName: string;
}

/** Why no sync happens (see {@link decideNamingSync}). */
export type NamingSyncSkip = 'adopted' | 'unnamed' | 'unchanged';

/** The decision: skip with a reason, or sync with this request after storing `fingerprint`. */
export type NamingSyncDecision =
  | { sync: false; reason: NamingSyncSkip }
  | { sync: true; fingerprint: string; request: SessionSyncRequest };

/**
 * The fingerprint of a platform name: whitespace folded and trimmed (a name differing only in
 * spacing is the same name). `''` for no name.
 * @example namingFingerprint('  Fix   imports ') // 'Fix imports'
 */
export function namingFingerprint(name: string | undefined): string {
  return (name ?? '').replace(/\s+/gu, ' ').trim();
}

/**
 * Decide whether to sync the platform name to the Gateway after a turn (see SPEC B-11): never
 * for an adopted session, nor when the platform session has no name, nor when the name's
 * fingerprint equals the stored one. Otherwise the request carries the name as `title` and, when
 * folding leaves something, `alias` = {@link aliasBase}(agentName, name).
 * @example decideNamingSync({ adopted: false, platformName: 'Fix imports', state: undefined, agentName: 'pi' })
 *   // { sync: true, fingerprint: 'Fix imports', request: { title: 'Fix imports', alias: 'pi-fix-imports' } }
 */
export function decideNamingSync(input: NamingSyncInput): NamingSyncDecision {
  if (input.adopted) return { sync: false, reason: 'adopted' };
  const fingerprint = namingFingerprint(input.platformName);
  if (fingerprint === '') return { sync: false, reason: 'unnamed' };
  if (input.state?.fingerprint === fingerprint) return { sync: false, reason: 'unchanged' };
  const title = Array.from(fingerprint).slice(0, NAMING_SYNC_TITLE_MAX_LENGTH).join('');
  const alias = aliasBase(input.agentName, fingerprint);
  return { sync: true, fingerprint, request: alias === '' ? { title } : { title, alias } };
}

/**
 * The state to store once the Gateway answered: the fingerprint sent and the final alias it
 * chose (which may differ from the one asked for), so the next turn does not sync again
 * (see SPEC B-11).
 */
export function namingStateAfterSync(fingerprint: string, response: SessionSyncResponse): NamingSyncState {
  return { fingerprint, alias: response.alias };
}
