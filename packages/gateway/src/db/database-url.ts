/**
 * The PostgreSQL URL of `agentmail serve --database`: checked before anything starts, and shown
 * without its password. No driver import here: the client commands load this module too.
 */

/** A database URL that can not be used; `code` is `AM_GW_DATABASE_URL_INVALID`. */
export class DatabaseUrlError extends Error {
  readonly code = 'AM_GW_DATABASE_URL_INVALID';
  /** What to do about it. */
  readonly suggestion: string;
  constructor(message: string, suggestion: string) {
    super(message);
    this.name = 'DatabaseUrlError';
    this.suggestion = suggestion;
  }
}

/**
 * The URL without its password, for messages and logs (`postgres://am:***@db:5432/mail`).
 * A text that does not parse as a URL is shown as `<not a URL>`.
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<not a URL>';
  }
}

/**
 * Check a database URL: `postgres:` or `postgresql:` with a host.
 *
 * @throws DatabaseUrlError naming what is wrong and the form to use
 */
export function checkDatabaseUrl(url: string): URL {
  const form = 'postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new DatabaseUrlError('the database URL is not a URL', `give it as ${form}`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new DatabaseUrlError(
      `the database URL must start with postgres:// (got ${JSON.stringify(u.protocol)})`,
      `give it as ${form}; without a database URL the Gateway keeps its SQLite file in the data directory`,
    );
  if (!u.hostname && !u.searchParams.get('host'))
    throw new DatabaseUrlError('the database URL names no host', `give it as ${form}`);
  return u;
}
