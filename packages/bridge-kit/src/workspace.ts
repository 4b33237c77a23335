import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentMailError } from '@agentmail/shared-policy';

/** Input of {@link resolveWorkspace}. */
export interface WorkspaceInput {
  /** The path part of the recipient address (`to_workspace`); '' or undefined for none. */
  addressPath: string | null | undefined;
  /** Absolute directory owned by the bridge; per-session fallback directories live under it. */
  fallbackRoot: string;
  /** The session the turn belongs to; names the fallback directory. */
  sessionKey: string;
}

/** Why the address path was not used. */
export type WorkspaceFallbackReason =
  | 'no_path'
  | 'relative_path'
  | 'missing'
  | 'not_directory'
  | 'unreadable';

/** Result of {@link resolveWorkspace}. */
export interface WorkspaceResolution {
  /** Absolute working directory for the turn. */
  cwd: string;
  usedFallback: boolean;
  /** Set when `usedFallback`: log it (see SPEC B-3). */
  reason?: WorkspaceFallbackReason;
}

/**
 * The fallback directory name for a session: its key folded to `[A-Za-z0-9._-]` (at most 60
 * characters, no leading dot) plus 8 hex of its SHA-256, so two keys that fold alike stay apart
 * and no key can climb out of the root.
 */
export function fallbackDirName(sessionKey: string): string {
  const hash = createHash('sha256').update(sessionKey).digest('hex').slice(0, 8);
  const slug = sessionKey
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 60)
    .replace(/[.-]+$/, '');
  return slug === '' ? `session-${hash}` : `${slug}-${hash}`;
}

/**
 * Pick the working directory of a turn (see SPEC B-3): the address path when it is absolute and
 * an existing directory; otherwise a per-session fallback directory under `fallbackRoot` (created
 * if needed). The address path itself is never created: a typo must not leave a real empty
 * directory behind.
 *
 * @throws AgentMailError `AM_WORKSPACE_ROOT_RELATIVE` when `fallbackRoot` is not absolute.
 * @throws AgentMailError `AM_WORKSPACE_FALLBACK_FAILED` when the fallback directory cannot be created.
 * @example await resolveWorkspace({ addressPath: '/srv/app', fallbackRoot: '/var/lib/agentmail/ws', sessionKey: 's1' })
 */
export async function resolveWorkspace(input: WorkspaceInput): Promise<WorkspaceResolution> {
  if (!isAbsolute(input.fallbackRoot)) {
    throw new AgentMailError(
      'AM_WORKSPACE_ROOT_RELATIVE',
      `resolveWorkspace "fallbackRoot" must be an absolute path (got "${input.fallbackRoot}")`,
    );
  }
  const path = input.addressPath ?? '';
  let reason: WorkspaceFallbackReason;
  if (path === '') reason = 'no_path';
  else if (!isAbsolute(path)) reason = 'relative_path';
  else {
    try {
      const info = await stat(path);
      if (info.isDirectory()) return { cwd: resolve(path), usedFallback: false };
      reason = 'not_directory';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      reason = code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable';
    }
  }
  const cwd = join(resolve(input.fallbackRoot), fallbackDirName(input.sessionKey));
  try {
    await mkdir(cwd, { recursive: true });
  } catch (cause) {
    throw new AgentMailError(
      'AM_WORKSPACE_FALLBACK_FAILED',
      `could not create the fallback working directory "${cwd}" (${(cause as Error).message}); check that "fallbackRoot" is writable by the bridge user`,
      { cause },
    );
  }
  return { cwd, usedFallback: true, reason };
}
