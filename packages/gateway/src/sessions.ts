/**
 * Sessions: the default / `.new` / alias rules of SPEC G-2, automatic aliases (G-5), adoption of
 * platform sessions (G-37) and the new-session rate limit (G-34).
 */
import type { PermissionMode, PlatformSession } from '@agentmail/protocol';
import { formatAddress, isValidAlias, NEW_SESSION } from '@agentmail/protocol';
import { aliasCandidates } from '@agentmail/shared-policy';
import type { Db, GatewayContext, SessionRow } from './context.js';
import { GatewayError } from './errors.js';
import { newId } from './ids.js';

const HOUR_MS = 60 * 60 * 1000;

/** What a new session starts with. */
export interface NewSessionSeed {
  /** Subject of the mail that creates it (alias base, SPEC G-5). */
  subject: string;
  /** Alias asked for by the sender (`session_alias`); suffixed on collision. */
  requestedAlias?: string | undefined;
  ownerUserId: string | null;
  permissionMode: PermissionMode;
  maxRounds: number;
}

/** The address of a participant in a session: people as `name@.alias`, agents as `name@path.alias`. */
export function addressIn(name: string, human: boolean, session: SessionRow): string {
  return formatAddress({ name, path: human ? '' : session.path, session: session.alias ?? '' });
}

/** A session by id, or undefined. */
export async function sessionById(db: Db, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sessions by id, as a map. */
export async function sessionsById(db: Db, ids: Iterable<string>): Promise<Map<string, SessionRow>> {
  const list = [...new Set(ids)];
  if (list.length === 0) return new Map();
  const rows = await db.selectFrom('sessions').selectAll().where('id', 'in', list).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Refuse a new session when the agent already got `newSessionsPerHour` in the last hour
 * (SPEC G-34; adoption counts too).
 * @throws GatewayError `AM_GW_SESSION_RATE_LIMIT` (429)
 */
async function checkSessionRate(ctx: GatewayContext, db: Db, agentName: string): Promise<void> {
  const now = ctx.config.clock();
  const since = now - HOUR_MS;
  const row = await db
    .selectFrom('sessions')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('created_at').as('oldest')])
    .where('agent_name', '=', agentName)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  if (Number(row.n) >= ctx.config.newSessionsPerHour) {
    // A slot frees when the oldest session of the window leaves it.
    const seconds = Math.max(1, Math.ceil((Number(row.oldest ?? now) + HOUR_MS - now) / 1000));
    throw new GatewayError(
      'SESSION_RATE_LIMIT',
      `agent "${agentName}" got ${ctx.config.newSessionsPerHour} new sessions in the last hour`,
      {
        detail: 'new-session creation is rate limited per agent (SPEC G-34)',
        suggestion: `reply in an existing session (its alias), or retry in ${seconds} s`,
        retryAfterSeconds: seconds,
      },
    );
  }
}

/**
 * Give a session its first free alias of `candidates`, only if it has none yet (SPEC G-5). Call
 * under the agent's lock ({@link lockAgent}): the free alias read then stays free until commit;
 * the update is conditional on `alias IS NULL`, and the (agent, alias) pair is unique.
 */
export async function assignAlias(
  db: Db,
  session: SessionRow,
  candidates: readonly string[],
): Promise<string> {
  const valid = candidates.filter(isValidAlias);
  const taken = new Set(
    (
      await db
        .selectFrom('sessions')
        .select('alias')
        .where('agent_name', '=', session.agent_name)
        .where('alias', 'in', valid.length ? valid : [''])
        .execute()
    ).map((r) => r.alias),
  );
  const alias = valid.find((a) => !taken.has(a)) ?? `session-${session.id.slice(-8).toLowerCase()}`;
  await db
    .updateTable('sessions')
    .set({ alias })
    .where('id', '=', session.id)
    .where('alias', 'is', null)
    .execute();
  const row = await sessionById(db, session.id);
  return row?.alias ?? alias;
}

/** Candidates for an alias the sender asked for: itself, then `-2`, `-3`… */
function suffixed(base: string): string[] {
  const out = [base];
  for (let n = 2; n <= 99; n++) out.push(`${base}-${n}`);
  return out;
}

/**
 * Take the agent's row lock for the rest of the transaction: session creation, its rate window
 * and alias choice of one agent happen one at a time on every Gateway of the store (a
 * no-change UPDATE locks the row on PostgreSQL and takes the write lock on SQLite).
 * @throws GatewayError `AM_GW_UNKNOWN_RECIPIENT` when no such agent is registered
 */
export async function lockAgent(db: Db, agentName: string): Promise<void> {
  const r = await db
    .updateTable('agents')
    .set((eb) => ({ platform: eb.ref('agents.platform') }))
    .where('name', '=', agentName)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0)
    throw new GatewayError('UNKNOWN_RECIPIENT', `no agent is named "${agentName}"`, {
      suggestion: 'check the address; `agentmail status` lists the agents',
    });
}

/**
 * Insert a session under the agent's lock, after the rate check. Undefined when its default key
 * or platform id is taken (another send or heartbeat created it first): the caller reads that one.
 */
async function insertSession(
  ctx: GatewayContext,
  db: Db,
  fields: {
    agentName: string;
    path: string;
    defaultKey: string | null;
    platformId: string | null;
    title: string;
    seed: NewSessionSeed;
  },
): Promise<SessionRow | undefined> {
  await lockAgent(db, fields.agentName);
  await checkSessionRate(ctx, db, fields.agentName);
  const now = ctx.config.clock();
  const row: SessionRow = {
    id: newId('s', now),
    agent_name: fields.agentName,
    path: fields.path,
    alias: null,
    default_key: fields.defaultKey,
    platform_id: fields.platformId,
    title: fields.title,
    owner_user_id: fields.seed.ownerUserId,
    permission_mode: fields.seed.permissionMode,
    max_rounds: fields.seed.maxRounds,
    rounds_used: 0,
    hop_limit: ctx.config.hopLimit,
    created_at: now,
    updated_at: now,
  };
  const inserted = await db
    .insertInto('sessions')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted ? row : undefined;
}

/** The default session of (agent, path), created on first use (SPEC G-2). */
export async function defaultSession(
  ctx: GatewayContext,
  db: Db,
  agentName: string,
  path: string,
  seed: NewSessionSeed,
): Promise<{ session: SessionRow; created: boolean }> {
  const key = `${agentName}\n${path}`;
  const byKey = () => db.selectFrom('sessions').selectAll().where('default_key', '=', key).executeTakeFirst();
  const found = await byKey();
  if (found) return { session: found, created: false };
  const session = await insertSession(ctx, db, {
    agentName,
    path,
    defaultKey: key,
    platformId: null,
    title: '',
    seed,
  });
  if (session) return { session, created: true };
  // Created meanwhile by a concurrent send (this or another Gateway): that one is the default.
  const raced = await byKey();
  if (!raced) throw new Error(`default session ${JSON.stringify(key)} neither inserted nor found`);
  return { session: raced, created: false };
}

/**
 * A new session for `.new` (SPEC G-2), aliased at once from agent name and subject, or from the
 * alias the sender asked for (SPEC G-5).
 */
export async function newSession(
  ctx: GatewayContext,
  db: Db,
  agentName: string,
  path: string,
  seed: NewSessionSeed,
): Promise<SessionRow> {
  const session = await insertSession(ctx, db, {
    agentName,
    path,
    defaultKey: null,
    platformId: null,
    title: seed.subject,
    seed,
  });
  if (!session) throw new Error('a new session has no unique key to collide on');
  const candidates =
    seed.requestedAlias !== undefined && isValidAlias(seed.requestedAlias)
      ? [...suffixed(seed.requestedAlias), ...aliasCandidates(agentName, seed.subject, session.id.slice(-16))]
      : aliasCandidates(agentName, seed.subject, session.id.slice(-16));
  session.alias = await assignAlias(db, session, candidates);
  return session;
}

/**
 * Adopt a platform session from the agent's heartbeat snapshot (SPEC G-37): one local session per
 * platform session, keeping its directory and title, with the platform slug as alias (suffixed on
 * collision). Returns the existing local session when it was adopted before.
 */
export async function adoptPlatformSession(
  ctx: GatewayContext,
  db: Db,
  agentName: string,
  entry: PlatformSession,
  seed: NewSessionSeed,
): Promise<SessionRow> {
  const adopted = () =>
    db
      .selectFrom('sessions')
      .selectAll()
      .where('agent_name', '=', agentName)
      .where('platform_id', '=', entry.platform_id)
      .executeTakeFirst();
  const existing = await adopted();
  if (existing) return existing;
  const session = await insertSession(ctx, db, {
    agentName,
    path: entry.path,
    defaultKey: null,
    platformId: entry.platform_id,
    title: entry.title ?? '',
    seed,
  });
  if (!session) {
    // Adopted meanwhile (a send naming it, or a heartbeat on another Gateway).
    const raced = await adopted();
    if (!raced)
      throw new Error(`platform session ${JSON.stringify(entry.platform_id)} neither adopted nor found`);
    return raced;
  }
  const slug = entry.slug ?? entry.title ?? '';
  const folded = aliasCandidates(agentName, '', session.id.slice(-16)); // fallback list
  const slugBase = isValidAlias(slug) ? slug : '';
  session.alias = await assignAlias(
    db,
    session,
    slugBase ? [...suffixed(slugBase), ...folded.slice(-1)] : folded.slice(-1),
  );
  return session;
}

/** The platform session snapshot stored from the agent's last heartbeat. */
export async function platformSnapshot(db: Db, agentName: string): Promise<PlatformSession[]> {
  const row = await db
    .selectFrom('agents')
    .select('platform_sessions')
    .where('name', '=', agentName)
    .executeTakeFirst();
  if (!row) return [];
  try {
    const list = JSON.parse(row.platform_sessions) as unknown;
    return Array.isArray(list) ? (list as PlatformSession[]) : [];
  } catch {
    return [];
  }
}

/**
 * An alias names one session, in one directory: an address that writes another path with it is
 * refused, never delivered into the alias's session elsewhere (a mail would land in another
 * project's session). An address without a path (`pi@.alias`) names the session by alias alone.
 * @throws GatewayError `AM_GW_ALIAS_ELSEWHERE` (409) naming the alias's real address.
 */
function requireSamePath(agentName: string, path: string, alias: string, sessionPath: string): void {
  if (path === '' || path === sessionPath) return;
  const real = formatAddress({ name: agentName, path: sessionPath, session: alias });
  throw new GatewayError(
    'ALIAS_ELSEWHERE',
    `the session "${alias}" of agent "${agentName}" is in ${sessionPath === '' ? 'its default workspace' : sessionPath}, not in ${path}`,
    {
      detail: 'an alias names one session in one directory; the mail was not sent',
      suggestion: `write ${real} for that session, or ${formatAddress({ name: agentName, path, session: NEW_SESSION })} for a new one in ${path}`,
      extra: { alias, session_address: real, path: sessionPath },
    },
  );
}

/**
 * Resolve the session part of an agent address (SPEC G-2): `''` → default session of (agent,
 * path); `new` → a new session; an alias → that session, or a platform session of the snapshot
 * whose slug or id it names (adopted, SPEC G-37).
 * @throws GatewayError `AM_GW_UNKNOWN_ALIAS` (404) naming the alias, never a silent new session;
 *   `AM_GW_ALIAS_ELSEWHERE` (409) when the alias's session is in another directory than the
 *   address's path.
 */
export async function resolveAgentSession(
  ctx: GatewayContext,
  db: Db,
  agentName: string,
  path: string,
  sessionPart: string,
  seed: NewSessionSeed,
): Promise<{ session: SessionRow; created: boolean }> {
  if (sessionPart === '') return defaultSession(ctx, db, agentName, path, seed);
  if (sessionPart === NEW_SESSION)
    return { session: await newSession(ctx, db, agentName, path, seed), created: true };
  const found = await db
    .selectFrom('sessions')
    .selectAll()
    .where('agent_name', '=', agentName)
    .where('alias', '=', sessionPart)
    .executeTakeFirst();
  if (found) {
    requireSamePath(agentName, path, sessionPart, found.path);
    return { session: found, created: false };
  }
  const snapshot = await platformSnapshot(db, agentName);
  const entry =
    snapshot.find((s) => s.slug === sessionPart) ?? snapshot.find((s) => s.platform_id === sessionPart);
  if (entry) {
    requireSamePath(agentName, path, sessionPart, entry.path);
    const before = await db
      .selectFrom('sessions')
      .select('id')
      .where('agent_name', '=', agentName)
      .where('platform_id', '=', entry.platform_id)
      .executeTakeFirst();
    const session = await adoptPlatformSession(ctx, db, agentName, entry, seed);
    return { session, created: before === undefined };
  }
  throw new GatewayError(
    'UNKNOWN_ALIAS',
    `agent "${agentName}" has no session with the alias "${sessionPart}"`,
    {
      detail: 'an alias must already exist; it never creates a session (SPEC G-2)',
      // G-3: `pi@/srv/my.project` reads as the alias "project" in /srv/my; the form for the
      // directory /srv/my.project is shown too, since that is often what was meant.
      suggestion:
        `write ${agentName}@${path}.new for a new session, or ${agentName}@${path}. for the default one` +
        (path === ''
          ? ''
          : `; for the directory ${path}.${sessionPart}, end the address with a dot: ${agentName}@${path}.${sessionPart}.`),
      extra: { alias: sessionPart },
    },
  );
}
