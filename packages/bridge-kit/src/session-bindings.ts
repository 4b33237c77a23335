/**
 * Which platform session belongs to which Gateway mail session (see SPEC B-4, B-8, B-11, G-37):
 * the binding, the naming baseline and the sessions of failed model attempts set aside. One small
 * JSON file per Gateway session under the bridge's data directory, so processes working on
 * different sessions at once (pi's workers) never write the same file; turns of one session are
 * serial (B-13), so one file has one writer at a time. Writes are atomic (temp file + rename).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { NamingSyncState } from '@agentmail/shared-policy';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import { fallbackDirName } from './workspace.js';

/** What is kept per Gateway session. */
export interface SessionBinding {
  /** The Gateway session id (`s_…`). */
  sessionId: string;
  /** The platform's session id the mails of this Gateway session run in; '' = none bound now. */
  platformSessionId: string;
  /** Where the host finds that session, when an id is not enough (pi: its session file). */
  locator?: string;
  /** Naming-sync state (B-11): the fingerprint of the name last seen or given. */
  naming?: NamingSyncState;
  /** Platform sessions of failed model attempts (B-8): kept on the platform, never adoptable (G-37). */
  setAside?: Array<{ platformSessionId: string; locator?: string }>;
}

interface BindingFile extends SessionBinding {
  version: 1;
}

function isBinding(value: unknown): value is BindingFile {
  const v = value as Partial<BindingFile> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.sessionId === 'string' &&
    typeof v.platformSessionId === 'string'
  );
}

/**
 * The session-binding store of one bridge (see SPEC B-4, B-8, B-11, G-37).
 *
 * @example
 * const bindings = new SessionBindings('/home/me/.local/share/agentmail/opencode');
 * await bindings.bind('s_1', { platformSessionId: 'ses_9', createdName: 'Fix the tests' });
 * (await bindings.get('s_1'))?.platformSessionId // 'ses_9'
 */
export class SessionBindings {
  /** Directory of the binding files (`<dataDir>/bindings`). */
  readonly dir: string;

  /** @throws AgentMailError `AM_STATE_FILE_RELATIVE` when `dataDir` is not absolute. */
  constructor(dataDir: string) {
    if (!isAbsolute(dataDir))
      throw new AgentMailError(
        ERROR_CODES.STATE_FILE_RELATIVE,
        `SessionBindings needs an absolute data directory (got "${dataDir}")`,
      );
    this.dir = join(dataDir, 'bindings');
  }

  /** Platform sessions this process bound (known before their file is written: G-37 filter). */
  readonly #known = new Set<string>();
  #creating = 0;

  /**
   * Mark a session creation in flight (a `new` attempt that has not reported its session yet):
   * until the returned release is called, a heartbeat cannot tell the bridge's new session from a
   * person's (the host may list it before its creation answer arrives), so it offers no new ones.
   * The release is idempotent.
   */
  creating(): () => void {
    this.#creating += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#creating -= 1;
    };
  }

  /** Session creations in flight (see {@link creating}). */
  get creationsInFlight(): number {
    return this.#creating;
  }

  #file(sessionId: string): string {
    return join(this.dir, `${fallbackDirName(sessionId)}.json`);
  }

  async #read(sessionId: string): Promise<SessionBinding | undefined> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.#file(sessionId), 'utf8'));
      if (!isBinding(parsed) || parsed.sessionId !== sessionId) return undefined;
      const { version: _v, ...binding } = parsed;
      return binding;
    } catch {
      return undefined;
    }
  }

  async #write(binding: SessionBinding): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.#file(binding.sessionId);
    const tmp = `${file}.${randomUUID()}.tmp`;
    const body: BindingFile = { version: 1, ...binding };
    await writeFile(tmp, JSON.stringify(body, null, 1), { mode: 0o600 });
    await rename(tmp, file);
  }

  /** The binding of a Gateway session that has a platform session bound now, if any. */
  async get(sessionId: string): Promise<SessionBinding | undefined> {
    const b = await this.#read(sessionId);
    return b && b.platformSessionId !== '' ? b : undefined;
  }

  /**
   * Bind a Gateway session to a platform session the bridge created (or found). `createdName` is
   * the name the bridge gave it: its fingerprint becomes the naming baseline, so only a later
   * rename (by the model or a person) is synced (B-11). Keeps the set-aside list.
   */
  async bind(
    sessionId: string,
    session: { platformSessionId: string; locator?: string; naming?: NamingSyncState },
  ): Promise<SessionBinding> {
    if (session.platformSessionId !== '') this.#known.add(session.platformSessionId);
    const old = await this.#read(sessionId);
    const binding: SessionBinding = {
      sessionId,
      platformSessionId: session.platformSessionId,
      ...(session.locator === undefined ? {} : { locator: session.locator }),
      ...(session.naming === undefined ? {} : { naming: session.naming }),
      ...(old?.setAside?.length ? { setAside: old.setAside } : {}),
    };
    await this.#write(binding);
    return binding;
  }

  /** Forget the bound platform session (it is gone, B-4); the set-aside list stays. */
  async unbind(sessionId: string): Promise<void> {
    const old = await this.#read(sessionId);
    if (!old) return;
    if (old.setAside?.length) await this.#write({ sessionId, platformSessionId: '', setAside: old.setAside });
    else await rm(this.#file(sessionId), { force: true });
  }

  /**
   * Unbind the platform session of a failed model attempt and keep it in the set-aside list (B-8:
   * the next model gets a fresh session; G-37: it is never offered for adoption).
   */
  async setAside(sessionId: string): Promise<void> {
    const old = await this.#read(sessionId);
    if (!old || old.platformSessionId === '') return;
    const aside = {
      platformSessionId: old.platformSessionId,
      ...(old.locator ? { locator: old.locator } : {}),
    };
    await this.#write({ sessionId, platformSessionId: '', setAside: [...(old.setAside ?? []), aside] });
  }

  /** Store the naming-sync state of a bound session (no-op when none is bound, B-11). */
  async setNaming(sessionId: string, naming: NamingSyncState): Promise<void> {
    const old = await this.get(sessionId);
    if (old) await this.#write({ ...old, naming });
  }

  /** Every platform session id the bridge made for mail, bound or set aside (G-37 filter). */
  async ownPlatformSessionIds(): Promise<Set<string>> {
    const ids = new Set<string>(this.#known);
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return ids;
    }
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      try {
        const b: unknown = JSON.parse(await readFile(join(this.dir, name), 'utf8'));
        if (!isBinding(b)) continue;
        if (b.platformSessionId !== '') ids.add(b.platformSessionId);
        for (const a of b.setAside ?? [])
          if (typeof a.platformSessionId === 'string') ids.add(a.platformSessionId);
      } catch {
        // a torn or foreign file: skip
      }
    }
    return ids;
  }
}
