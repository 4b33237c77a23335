/**
 * Relay keys: the idempotency keys of relay sends (see SPEC G-32, B-9, B-10). The Gateway
 * accepts at most {@link RELAY_KEY_MAX_BYTES}; longer keys are clamped here, deterministically,
 * so a retry of the same relay always sends the same key.
 */
import { RELAY_KEY_MAX_BYTES } from '@agentmail/protocol';
// Pure JS sha256 (no node:crypto): this module is part of the browser-safe root entry.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { AgentMailError, ERROR_CODES } from './errors.js';

/**
 * Largest relay key the Gateway accepts, in UTF-8 bytes (see SPEC G-32): 160. Re-exported from
 * `@agentmail/protocol`, where the wire contract defines it once.
 */
export { RELAY_KEY_MAX_BYTES };

/** Separator between the kept prefix and the hash of a clamped key. */
const HASH_SEPARATOR = '~';
/** sha256 as hex: 64 ASCII bytes. */
const HASH_HEX_BYTES = 64;
const PREFIX_MAX_BYTES = RELAY_KEY_MAX_BYTES - HASH_SEPARATOR.length - HASH_HEX_BYTES;

const UTF8 = new TextEncoder();

/** UTF-8 length in bytes (a lone surrogate counts as U+FFFD, as the encoder writes it). */
function utf8Length(text: string): number {
  return UTF8.encode(text).length;
}

function requireNonEmpty(value: string, field: string): void {
  if (value.trim() === '')
    throw new AgentMailError(
      ERROR_CODES.RELAY_KEY_INVALID,
      `${field} is empty; a relay key must be built from a stable, non-empty id (see SPEC G-32)`,
    );
}

/**
 * Clamp a relay key to at most {@link RELAY_KEY_MAX_BYTES} UTF-8 bytes (see SPEC G-32).
 *
 * A key that fits is returned unchanged. A longer key becomes its longest prefix of whole
 * characters that fits in 95 bytes, then `~`, then the 64 hex digits of the sha256 of the whole
 * key: deterministic, never splits a multi-byte character, and two long keys that share the
 * prefix still differ. (A lone UTF-16 surrogate is hashed as U+FFFD, as UTF-8 encodes it.)
 *
 * @throws AgentMailError `AM_RELAY_KEY_INVALID` when `key` is empty or only whitespace.
 * @example clampRelayKey('model-failure:' + 'x'.repeat(300)).length // 160
 */
export function clampRelayKey(key: string): string {
  requireNonEmpty(key, 'relay key');
  if (utf8Length(key) <= RELAY_KEY_MAX_BYTES) return key;
  let prefix = '';
  let bytes = 0;
  for (const char of key) {
    const size = utf8Length(char);
    if (bytes + size > PREFIX_MAX_BYTES) break;
    prefix += char;
    bytes += size;
  }
  const hash = bytesToHex(sha256(UTF8.encode(key)));
  return `${prefix}${HASH_SEPARATOR}${hash}`;
}

/** Start of every failure mail's relay key (SPEC B-9): how a reader tells a failure mail from a reply. */
export const FAILURE_RELAY_KEY_PREFIX = 'model-failure:';

/**
 * Relay key of the failure mail for a mail whose turn failed: `model-failure:<mail_id>`,
 * clamped (see SPEC B-9). Stable, so a retried failure mail is a `duplicate_relay`.
 * @throws AgentMailError `AM_RELAY_KEY_INVALID` when `mailId` is empty.
 * @example failureRelayKey('m_42') // 'model-failure:m_42'
 */
export function failureRelayKey(mailId: string): string {
  requireNonEmpty(mailId, 'mailId');
  return clampRelayKey(`${FAILURE_RELAY_KEY_PREFIX}${mailId}`);
}

/** Escape `%` and `:` so joined parts can not run into each other. */
function escapePart(part: string): string {
  return part.replaceAll('%', '%25').replaceAll(':', '%3A');
}

/**
 * Relay key of an automatic relay of a turn's final text:
 * `auto-relay:<platformSessionId>:<lastEntryId>`, clamped (see SPEC B-10); with `mailId`,
 * `auto-relay:<mailId>:<platformSessionId>:<lastEntryId>`, so a host whose ids repeat (counters
 * after a restart) never has a reply dropped as a duplicate of another thread's (G-32). `%` and
 * `:` inside the ids are escaped (`%25`, `%3A`) so different id tuples never give the same key.
 * @throws AgentMailError `AM_RELAY_KEY_INVALID` when either id is empty.
 * @example autoRelayKey('ses_1', 'entry_9') // 'auto-relay:ses_1:entry_9'
 */
export function autoRelayKey(platformSessionId: string, lastEntryId: string, mailId?: string): string {
  requireNonEmpty(platformSessionId, 'platformSessionId');
  requireNonEmpty(lastEntryId, 'lastEntryId');
  const mail = mailId?.trim() ? `${escapePart(mailId)}:` : '';
  return clampRelayKey(`auto-relay:${mail}${escapePart(platformSessionId)}:${escapePart(lastEntryId)}`);
}

/**
 * Relay key of an automatic relay when the host gives no entry id (or no session id): from the
 * mail the turn answered, `auto-relay:mail:<mailId>`, clamped (see SPEC B-10, G-32). A mail gets
 * at most one auto relay, so a retried or redelivered turn of the same mail relays exactly once.
 * @throws AgentMailError `AM_RELAY_KEY_INVALID` when `mailId` is empty.
 * @example mailRelayKey('m_42') // 'auto-relay:mail:m_42'
 */
export function mailRelayKey(mailId: string): string {
  requireNonEmpty(mailId, 'mailId');
  return clampRelayKey(`auto-relay:mail:${escapePart(mailId)}`);
}
