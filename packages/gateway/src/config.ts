/**
 * Gateway options and their defaults. Every limit is per SPEC §4 unless said otherwise.
 */
import { WEB_SESSION_MAX_AGE_MS } from '@agentmail/protocol';
import { DEFAULT_LOCALE, type Locale } from '@agentmail/shared-policy';
import type { Clock } from './ids.js';

/** Round budget of a new session when the first send names none (SPEC G-31). @default 20 */
export const DEFAULT_MAX_ROUNDS = 20;

/** Trailing relay mails allowed in a session before a relay is refused (SPEC G-33). @default 5 */
export const DEFAULT_HOP_LIMIT = 5;

/** New sessions one agent may get per hour, adoption included (SPEC G-34). @default 20 */
export const DEFAULT_NEW_SESSIONS_PER_HOUR = 20;

/** Largest upload, in bytes (25 MB). @default 26214400 */
export const DEFAULT_ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;

/** Age after which an unreferenced blob is swept, in ms (SPEC G-36). @default 48 h */
export const BLOB_SWEEP_AGE_MS = 48 * 60 * 60 * 1000;

/** Interval of the blob sweep, in ms (SPEC G-36). @default 1 h */
export const BLOB_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** An agent counts as online this long after its last heartbeat, in ms (SPEC G-25). @default 90 s */
export const ONLINE_WINDOW_MS = 90_000;

/** Requests one credential (or address) may make per minute (@fastify/rate-limit). @default 1200 */
export const DEFAULT_REQUESTS_PER_MINUTE = 1_200;

/** Options of `buildApp` (all but `dataDir` optional). */
export interface GatewayOptions {
  /** Directory holding the SQLite file and the blobs; created when missing. */
  dataDir: string;
  /**
   * PostgreSQL connection URL (`postgres://user@host:5432/db`): the store lives there instead of
   * the SQLite file (the data directory still holds the blobs and the lock); several Gateways may
   * share one database. `agentmail serve --database` or `AGENTMAIL_DATABASE_URL`. @default SQLite
   */
  databaseUrl?: string;
  /** Time source (tests inject one). @default Date.now */
  clock?: Clock;
  /** @default DEFAULT_MAX_ROUNDS */
  defaultMaxRounds?: number;
  /** @default DEFAULT_HOP_LIMIT */
  hopLimit?: number;
  /** @default DEFAULT_NEW_SESSIONS_PER_HOUR */
  newSessionsPerHour?: number;
  /** @default DEFAULT_ATTACHMENT_MAX_BYTES */
  attachmentMaxBytes?: number;
  /** Per-credential request rate limit; `false` turns it off. @default DEFAULT_REQUESTS_PER_MINUTE */
  requestsPerMinute?: number | false;
  /** Run the hourly blob sweep timer. @default true */
  sweepTimer?: boolean;
  /** SSE keep-alive comment interval, ms. @default 15000 */
  sseKeepaliveMs?: number;
  /** Events kept per stream for replay. @default 1000 */
  eventLogMaxPerStream?: number;
  /** pino log level; `silent` for tests. @default 'info' */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Language of the mail texts the Gateway writes itself (permission and question mails, the
   * forward header), from the shared-policy text catalogue; `agentmail serve` takes it from
   * `--locale` or `AGENTMAIL_LOCALE`. @default 'en'
   */
  locale?: Locale;
  /**
   * Check every 2xx JSON answer and every SSE event against its schema in the endpoint table
   * (`ENDPOINTS` of @agentmail/protocol) before it leaves, strictly (a field the schema does not
   * declare is a mismatch too). A mismatch is a 500 `AM_GW_RESPONSE_INVALID` naming the endpoint
   * and the field, and an error in the log. For tests: every Gateway test and the testkit stack
   * turn it on (`agentmail serve --check-responses`); production leaves it off (the answers are
   * built from protocol types, and the check costs a parse per answer). @default false
   */
  checkResponses?: boolean;
  /**
   * Directory of the built web mailbox (`index.html` and `assets/`), served at `/` on the API's
   * origin; `false` serves no web pages. @default the `dist` of the installed `@agentmail/web`
   */
  webDir?: string | false;
  /**
   * The origin people open the web mailbox at, when it is not what the Gateway sees (behind an
   * HTTPS proxy: `https://mail.example.com`). Changes through the web session must come from it,
   * and an `https://` origin makes the session cookie `Secure`. @default scheme and Host of each request
   */
  webOrigin?: string;
  /** How long a web session lasts after sign-in, in ms. @default WEB_SESSION_MAX_AGE_MS (7 days) */
  webSessionMaxAgeMs?: number;
}

/** {@link GatewayOptions} with every default filled. */
export interface ResolvedConfig {
  dataDir: string;
  databaseUrl: string | undefined;
  clock: Clock;
  defaultMaxRounds: number;
  hopLimit: number;
  newSessionsPerHour: number;
  attachmentMaxBytes: number;
  requestsPerMinute: number | false;
  sweepTimer: boolean;
  sseKeepaliveMs: number;
  eventLogMaxPerStream: number;
  logLevel: NonNullable<GatewayOptions['logLevel']>;
  locale: Locale;
  checkResponses: boolean;
  /** undefined: find the installed web app; false: no web pages. */
  webDir: string | false | undefined;
  webOrigin: string | undefined;
  webSessionMaxAgeMs: number;
}

/** The origin of a URL given as `webOrigin`. @throws Error naming the option and the form it takes */
function originOf(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new Error(`webOrigin ${JSON.stringify(url)} is not an origin; give it as https://mail.example.com`);
  return parsed.origin;
}

/** Fill the defaults of {@link GatewayOptions}. */
export function resolveConfig(options: GatewayOptions): ResolvedConfig {
  return {
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl || undefined,
    clock: options.clock ?? (() => Date.now()),
    defaultMaxRounds: options.defaultMaxRounds ?? DEFAULT_MAX_ROUNDS,
    hopLimit: options.hopLimit ?? DEFAULT_HOP_LIMIT,
    newSessionsPerHour: options.newSessionsPerHour ?? DEFAULT_NEW_SESSIONS_PER_HOUR,
    attachmentMaxBytes: options.attachmentMaxBytes ?? DEFAULT_ATTACHMENT_MAX_BYTES,
    requestsPerMinute: options.requestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
    sweepTimer: options.sweepTimer ?? true,
    sseKeepaliveMs: options.sseKeepaliveMs ?? 15_000,
    eventLogMaxPerStream: options.eventLogMaxPerStream ?? 1_000,
    logLevel: options.logLevel ?? 'info',
    locale: options.locale ?? DEFAULT_LOCALE,
    checkResponses: options.checkResponses ?? false,
    webDir: options.webDir,
    webOrigin: options.webOrigin === undefined ? undefined : originOf(options.webOrigin),
    webSessionMaxAgeMs: options.webSessionMaxAgeMs ?? WEB_SESSION_MAX_AGE_MS,
  };
}
