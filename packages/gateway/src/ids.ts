/**
 * Identifiers, secrets and the clock. Ids are time-ordered (a monotonic ULID-like string with a
 * kind prefix), so sorting by id gives creation order — no dialect-specific autoincrement.
 */
import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A source of the current time in ms; injected so tests can move time (SPEC G-34, G-36). */
export type Clock = () => number;

/** The real clock. */
export const systemClock: Clock = () => Date.now();

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/**
 * A new time-ordered id `<prefix>_<26 chars>`; ids made later in this process always sort after
 * earlier ones, even within one millisecond (the random part is incremented).
 *
 * @param prefix - kind marker, e.g. `m` (mail), `s` (session)
 * @param nowMs - the time to encode @default Date.now()
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  const t = Math.max(nowMs, lastTime);
  if (t === lastTime) {
    // increment the 16-symbol random part (base 32) to stay strictly monotonic
    let i = lastRandom.length - 1;
    while (i >= 0 && lastRandom[i] === 31) {
      lastRandom[i] = 0;
      i--;
    }
    if (i >= 0) lastRandom[i] = (lastRandom[i] ?? 0) + 1;
  } else {
    lastTime = t;
    lastRandom = Array.from(randomBytes(16), (b) => b % 32);
    lastRandom[0] = (lastRandom[0] ?? 0) % 16; // headroom for increments
  }
  return `${prefix}_${encodeTime(t)}${lastRandom.map((n) => CROCKFORD[n]).join('')}`;
}

/**
 * A new secret (agent key, user token): `<prefix>_` + 32 random bytes, base64url.
 *
 * @param prefix - `amk` for agent keys, `amu` for user tokens
 */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 hex of a secret: what the store keeps instead of the secret itself (SPEC G-12). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
