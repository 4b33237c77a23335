/**
 * Which opencode session belongs to which Gateway mail session, and the naming-sync state of
 * each (see SPEC B-4, B-11). One JSON file in the bridge's data directory, written atomically
 * (temp file + rename) and serially; a missing or unreadable file is an empty store.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { NamingSyncState } from '@agentmail/shared-policy';

/** What the store keeps per Gateway session id. */
export interface MailSessionRecord {
  /** The opencode session (`ses_…`) the mails of this Gateway session run in. */
  opencodeSessionId: string;
  /** Naming-sync state (B-11), written before each sync request. */
  naming?: NamingSyncState;
  /**
   * opencode sessions of failed model attempts of this Gateway session, kept in opencode for the
   * record (B-8) and, like the bound one, never offered for adoption (G-37).
   */
  setAside?: string[];
}

/** The file-backed map Gateway session id → {@link MailSessionRecord}. */
export class MailSessionStore {
  readonly #file: string;
  #records: Map<string, MailSessionRecord> | undefined;
  #writing: Promise<void> = Promise.resolve();

  /** @param file Absolute path of the JSON file (created on the first write). */
  constructor(file: string) {
    this.#file = file;
  }

  async #load(): Promise<Map<string, MailSessionRecord>> {
    if (this.#records) return this.#records;
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.#file, 'utf8'));
    } catch {
      parsed = {};
    }
    const records = new Map<string, MailSessionRecord>();
    if (parsed && typeof parsed === 'object')
      for (const [id, value] of Object.entries(parsed as Record<string, unknown>)) {
        const r = value as Partial<MailSessionRecord> | null;
        if (r && typeof r.opencodeSessionId === 'string') records.set(id, r as MailSessionRecord);
      }
    this.#records ??= records;
    return this.#records;
  }

  async #save(): Promise<void> {
    const records = await this.#load();
    const next = this.#writing.then(async () => {
      await mkdir(dirname(this.#file), { recursive: true });
      const tmp = `${this.#file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(Object.fromEntries(records), null, 1));
      await rename(tmp, this.#file);
    });
    this.#writing = next.catch(() => undefined);
    await next;
  }

  /** The record of a Gateway session bound to an opencode session, if any. */
  async get(gatewaySessionId: string): Promise<MailSessionRecord | undefined> {
    const r = (await this.#load()).get(gatewaySessionId);
    return r && r.opencodeSessionId !== '' ? r : undefined;
  }

  /** Bind a Gateway session to an opencode session (keeps only the set-aside list of an older binding). */
  async bind(gatewaySessionId: string, opencodeSessionId: string): Promise<void> {
    const records = await this.#load();
    const setAside = records.get(gatewaySessionId)?.setAside;
    records.set(gatewaySessionId, { opencodeSessionId, ...(setAside ? { setAside } : {}) });
    await this.#save();
  }

  /** Forget a binding whose opencode session is gone (B-4). */
  async unbind(gatewaySessionId: string): Promise<void> {
    const records = await this.#load();
    const r = records.get(gatewaySessionId);
    if (!r) return;
    if (r.setAside?.length) records.set(gatewaySessionId, { opencodeSessionId: '', setAside: r.setAside });
    else records.delete(gatewaySessionId);
    await this.#save();
  }

  /**
   * Unbind and remember the bound opencode session as a failed attempt's (B-8: kept in opencode
   * for the record, the next model gets a fresh session; G-37: never adoptable).
   */
  async setAside(gatewaySessionId: string): Promise<void> {
    const records = await this.#load();
    const r = records.get(gatewaySessionId);
    if (!r || r.opencodeSessionId === '') return;
    records.set(gatewaySessionId, {
      opencodeSessionId: '',
      setAside: [...(r.setAside ?? []), r.opencodeSessionId],
    });
    await this.#save();
  }

  /**
   * Every opencode session the bridge made for mail (bound or set aside): left out of the
   * heartbeat's snapshot, which offers only sessions a person opened for adoption (G-37).
   */
  async ownSessionIds(): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const r of (await this.#load()).values()) {
      if (r.opencodeSessionId !== '') ids.add(r.opencodeSessionId);
      for (const id of r.setAside ?? []) ids.add(id);
    }
    return ids;
  }

  /** Store the naming-sync state of a bound session (no-op when unbound). */
  async setNaming(gatewaySessionId: string, naming: NamingSyncState): Promise<void> {
    const records = await this.#load();
    const r = records.get(gatewaySessionId);
    if (!r || r.opencodeSessionId === '') return;
    records.set(gatewaySessionId, { ...r, naming });
    await this.#save();
  }

  /** Gateway session id bound to an opencode session, if any. */
  async gatewaySessionOf(opencodeSessionId: string): Promise<string | undefined> {
    if (opencodeSessionId === '') return undefined;
    for (const [id, r] of await this.#load()) if (r.opencodeSessionId === opencodeSessionId) return id;
    return undefined;
  }
}
