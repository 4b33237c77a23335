import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import type { ApprovalDecision } from '@agentmail/shared-policy';
import { AgentMailError } from '@agentmail/shared-policy';

/** Options of {@link GrantStore}. */
export interface GrantStoreOptions {
  /**
   * Absolute path of a JSON grant file shared by every process of this bridge (a short-lived
   * permission hook process reads the grants a previous one wrote). Omit to keep grants in memory.
   */
  file?: string;
}

/** On-disk shape: `{ version: 1, grants: { "<session id>": ["<tool>", …] } }`. */
interface GrantFile {
  version: 1;
  grants: Record<string, string[]>;
}

/**
 * "Always" grants, per (session, tool) (see SPEC P-4). A plain approval is one call only and is
 * never stored; only `approve_always` is.
 *
 * With `file`, every {@link GrantStore.has} re-reads the file (so a grant written by another
 * process is seen) and every {@link GrantStore.grant} merges into the latest file content and
 * replaces the file atomically (temp file in the same directory, then rename), so a reader never
 * sees half a file. Two processes granting at the very same moment can still lose one grant
 * (last rename wins); the person is then asked again — that fails closed.
 * A missing or unreadable file counts as "no grants".
 *
 * @example
 * const grants = new GrantStore({ file: '/var/lib/agentmail/zcode/grants.json' });
 * await grants.record(sessionId, 'Bash', parseApproval(reply));
 * const alwaysGranted = await grants.has(sessionId, 'Bash');
 */
export class GrantStore {
  /** The grant file, when persisted. */
  readonly file: string | undefined;
  readonly #memory = new Map<string, Set<string>>();
  #writes: Promise<void> = Promise.resolve();

  /** @throws AgentMailError `AM_STATE_FILE_RELATIVE` when `file` is not an absolute path. */
  constructor(options: GrantStoreOptions = {}) {
    if (options.file !== undefined && !isAbsolute(options.file)) {
      throw new AgentMailError(
        'AM_STATE_FILE_RELATIVE',
        `GrantStore option "file" must be an absolute path (got "${options.file}"): processes with another working directory must find the same file`,
      );
    }
    this.file = options.file;
  }

  /** True when an "always" grant exists for (session, tool), here or in the grant file. */
  async has(sessionId: string, toolName: string): Promise<boolean> {
    if (this.#memory.get(sessionId)?.has(toolName)) return true;
    if (this.file === undefined) return false;
    const stored = await readGrantFile(this.file);
    for (const [session, tools] of Object.entries(stored.grants)) this.#remember(session, tools);
    return this.#memory.get(sessionId)?.has(toolName) ?? false;
  }

  /**
   * Remember an "always" grant for (session, tool) and persist it when a file is configured.
   * @throws AgentMailError `AM_GRANT_WRITE_FAILED` when the grant file cannot be written (the grant
   *   still holds in this process).
   */
  async grant(sessionId: string, toolName: string): Promise<void> {
    this.#remember(sessionId, [toolName]);
    const file = this.file;
    if (file === undefined) return;
    // Serialise this process's writes so two grants in one process never race each other.
    const write = this.#writes.then(() => writeGrant(file, sessionId, toolName));
    this.#writes = write.catch(() => undefined);
    await write;
  }

  /**
   * Apply a parsed approval: `approve_always` stores a grant; `approve_once` and `deny` store
   * nothing (see SPEC P-4).
   * @throws AgentMailError `AM_GRANT_WRITE_FAILED` as {@link GrantStore.grant}.
   */
  async record(sessionId: string, toolName: string, decision: ApprovalDecision): Promise<void> {
    if (decision === 'approve_always') await this.grant(sessionId, toolName);
  }

  #remember(sessionId: string, tools: readonly string[]): void {
    let set = this.#memory.get(sessionId);
    if (set === undefined) {
      set = new Set();
      this.#memory.set(sessionId, set);
    }
    for (const tool of tools) set.add(tool);
  }
}

async function readGrantFile(file: string): Promise<GrantFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { version: 1, grants: {} };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    const grants: Record<string, string[]> = {};
    const raw = (parsed as { grants?: unknown } | null)?.grants;
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
      for (const [session, tools] of Object.entries(raw)) {
        if (Array.isArray(tools)) grants[session] = tools.filter((t): t is string => typeof t === 'string');
      }
    }
    return { version: 1, grants };
  } catch {
    return { version: 1, grants: {} };
  }
}

async function writeGrant(file: string, sessionId: string, toolName: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  try {
    const current = await readGrantFile(file);
    const tools = new Set(current.grants[sessionId] ?? []);
    tools.add(toolName);
    current.grants[sessionId] = [...tools];
    await mkdir(dirname(file), { recursive: true });
    await writeFile(tmp, `${JSON.stringify(current, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, file);
  } catch (cause) {
    await unlink(tmp).catch(() => undefined);
    throw new AgentMailError(
      'AM_GRANT_WRITE_FAILED',
      `could not write the grant file "${file}" (${(cause as Error).message ?? String(cause)}); check that its directory is writable by the bridge user`,
      { cause },
    );
  }
}
