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

  /** The record of a Gateway session, if any. */
  async get(gatewaySessionId: string): Promise<MailSessionRecord | undefined> {
    return (await this.#load()).get(gatewaySessionId);
  }

  /** Bind a Gateway session to an opencode session (keeps nothing of an older binding). */
  async bind(gatewaySessionId: string, opencodeSessionId: string): Promise<void> {
    (await this.#load()).set(gatewaySessionId, { opencodeSessionId });
    await this.#save();
  }

  /** Forget a binding (B-8: a failed model attempt's session is set aside). */
  async unbind(gatewaySessionId: string): Promise<void> {
    if ((await this.#load()).delete(gatewaySessionId)) await this.#save();
  }

  /** Store the naming-sync state of a bound session (no-op when unbound). */
  async setNaming(gatewaySessionId: string, naming: NamingSyncState): Promise<void> {
    const records = await this.#load();
    const r = records.get(gatewaySessionId);
    if (!r) return;
    records.set(gatewaySessionId, { ...r, naming });
    await this.#save();
  }

  /** Gateway session id bound to an opencode session, if any. */
  async gatewaySessionOf(opencodeSessionId: string): Promise<string | undefined> {
    for (const [id, r] of await this.#load()) if (r.opencodeSessionId === opencodeSessionId) return id;
    return undefined;
  }
}
