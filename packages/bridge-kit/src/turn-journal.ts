/**
 * Which mails' turns started and are not settled yet (SPEC B-10, B-14): one empty file per mail in
 * `<dataDir>/turns-started`, written when the runtime starts a mail's turn and removed once the
 * mail is marked read. A file that a crashed or stopped process left makes the next turn of that
 * mail a retry, and its prompt says so (`prompt.note.retry`): part of the work may be done already.
 */

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Records older than this are dropped at start, in ms (their mail was answered or is long gone). @default 7 days */
export const STARTED_TURN_MAX_AGE_MS = 7 * 24 * 3600_000;

/** The started-turn record of one bridge data directory. Never throws: without it only the retry note is lost. */
export class StartedTurns {
  readonly #dir: string;

  /** Opens the record in `dataDir`, dropping entries older than `maxAgeMs`. */
  constructor(dataDir: string, maxAgeMs: number = STARTED_TURN_MAX_AGE_MS) {
    this.#dir = join(dataDir, 'turns-started');
    try {
      const cutoff = Date.now() - maxAgeMs;
      for (const name of readdirSync(this.#dir))
        if (statSync(join(this.#dir, name)).mtimeMs < cutoff) rmSync(join(this.#dir, name), { force: true });
    } catch {
      // none yet
    }
  }

  #file(mailId: string): string {
    // One plain file name per id: no separator, no `.`/`..`, within the 255-byte name limit.
    const safe = encodeURIComponent(mailId).replaceAll('.', '%2E');
    return join(this.#dir, safe.length <= 200 ? safe : createHash('sha256').update(mailId).digest('hex'));
  }

  /** Whether a turn of `mailId` started before and its mail was not marked read. */
  has(mailId: string): boolean {
    return existsSync(this.#file(mailId));
  }

  /** Record that a turn of `mailId` starts. */
  add(mailId: string): void {
    try {
      mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      writeFileSync(this.#file(mailId), '');
    } catch {
      // not recorded: a crash of this turn will not be named a retry
    }
  }

  /** Forget `mailId` (its mail is marked read). */
  delete(mailId: string): void {
    try {
      rmSync(this.#file(mailId), { force: true });
    } catch {
      // left: dropped by age
    }
  }
}
