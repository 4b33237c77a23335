/**
 * Agents, people and models: register (idempotent), heartbeat (online status, catalogue vs
 * selection, SPEC G-25..G-27), contacts and suggestions, naming sync, and the admin side (users,
 * agent keys, allowed models).
 */
import {
  type Address,
  type AgentKeysResponse,
  type AgentView,
  type AllowedModelsResponse,
  type CatalogueEntry,
  type Contact,
  formatAddress,
  HEARTBEAT_INTERVAL_MS,
  type HeartbeatRequest,
  type HeartbeatResponse,
  heartbeatUnknownFields,
  isValidAlias,
  ModeEnforcement,
  PermissionMode,
  type RegisterResponse,
  type ResetTokenResponse,
  type SessionSyncResponse,
  type Suggestion,
} from '@agentmail/protocol';
import { newUserToken } from './auth.js';
import type { Db, GatewayContext } from './context.js';
import { iso } from './context.js';
import { type GatewayDb, isUniqueViolation } from './db/database.js';
import { GatewayError } from './errors.js';
import { hashSecret, newId, newSecret } from './ids.js';
import { presenceOf } from './presence.js';
import { sessionById } from './sessions.js';

function parseJsonArray(text: string): unknown[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/**
 * Register an agent (idempotent; a later call updates the platform and version, unless
 * `keepExisting`: then a registered name keeps both and the answer names its platform).
 * @throws GatewayError `AM_GW_CONFLICT` when a person already has the name
 */
export async function registerAgent(
  ctx: GatewayContext,
  name: string,
  platform: string,
  version: string | undefined,
  keepExisting = false,
): Promise<RegisterResponse> {
  return ctx.db.transaction().execute(async (trx) => {
    const user = await trx.selectFrom('users').select('id').where('name', '=', name).executeTakeFirst();
    if (user)
      throw new GatewayError('CONFLICT', `the name "${name}" belongs to a person`, {
        suggestion: 'issue the agent a key under another name',
      });
    const existing = await trx
      .selectFrom('agents')
      .select(['name', 'meta', 'platform'])
      .where('name', '=', name)
      .executeTakeFirst();
    if (existing && keepExisting)
      return {
        name,
        platform: existing.platform,
        created: false,
        heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
      };
    const meta = JSON.stringify(version === undefined ? {} : { version });
    if (existing) {
      await trx.updateTable('agents').set({ platform, meta }).where('name', '=', name).execute();
    } else {
      await trx
        .insertInto('agents')
        .values({
          name,
          platform,
          registered_at: ctx.config.clock(),
          last_seen: null,
          mode_enforcement: null,
          workspaces: '[]',
          platform_sessions: '[]',
          models: '[]',
          meta,
        })
        .execute();
    }
    return { name, platform, created: existing === undefined, heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS };
  });
}

/**
 * Require a registered agent.
 * @throws GatewayError `AM_GW_NOT_REGISTERED` (409)
 */
export async function requireRegistered(db: Db, name: string): Promise<{ platform: string }> {
  const row = await db.selectFrom('agents').select('platform').where('name', '=', name).executeTakeFirst();
  if (!row)
    throw new GatewayError('NOT_REGISTERED', `agent "${name}" is not registered`, {
      suggestion: 'POST /api/v1/agent/register {name, platform} first',
    });
  return row;
}

/** The admin's ordered model selection of a platform (SPEC G-26). */
export async function allowedModels(db: Db, platform: string): Promise<string[]> {
  const rows = await db
    .selectFrom('allowed_models')
    .select('model_key')
    .where('platform', '=', platform)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.model_key);
}

/**
 * Take a heartbeat (SPEC G-25..G-27, G-11): `last_seen`; an omitted list keeps the stored one,
 * an empty list clears it; answers the selection and the unknown fields.
 */
export async function heartbeat(
  ctx: GatewayContext,
  name: string,
  body: HeartbeatRequest,
  raw: Record<string, unknown>,
): Promise<HeartbeatResponse> {
  const { platform } = await requireRegistered(ctx.db, name);
  const now = ctx.config.clock();
  // A heartbeat is the agent being back: it clears a goodbye (H-3).
  const set: {
    last_seen: number;
    workspaces?: string;
    platform_sessions?: string;
    models?: string;
    mode_enforcement?: string;
    mode_enforcement_reason?: string | null;
    offline_since: null;
  } = { last_seen: now, offline_since: null };
  if (body.workspaces !== undefined) set.workspaces = JSON.stringify(body.workspaces);
  if (body.sessions !== undefined) set.platform_sessions = JSON.stringify(body.sessions);
  if (body.models !== undefined) set.models = JSON.stringify(body.models);
  // The reason belongs to the mode it came with: a mode without one (native) clears it.
  if (body.mode_enforcement !== undefined) {
    set.mode_enforcement = body.mode_enforcement;
    set.mode_enforcement_reason = body.mode_enforcement_reason ?? null;
  }
  await ctx.db.updateTable('agents').set(set).where('name', '=', name).execute();
  return {
    status: 'ok',
    server_time: iso(now),
    allowed_models: await allowedModels(ctx.db, platform),
    unknown_fields: heartbeatUnknownFields(raw),
    heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
  };
}

/**
 * Format an address from stored parts, or undefined (logged) when they do not form one: a name
 * stored before names were validated (`a b`, `x@y`), a workspace path with a control character.
 * Such a row is skipped, so one bad row never turns contacts or suggestions into a 500 for
 * everyone.
 */
function addressOrSkip(ctx: GatewayContext, address: Address, source: string): string | undefined {
  try {
    return formatAddress(address);
  } catch (err) {
    ctx.log.warn(
      // `event` is the line's stable kind (tests and log queries use it, not the message text).
      {
        event: 'directory_entry_skipped',
        source,
        name: address.name,
        path: address.path,
        reason: (err as Error).message,
      },
      'skipped an entry that does not form an address',
    );
    return undefined;
  }
}

/** Every agent and person, agents first (read only discovery); rows without a valid address are skipped. */
export async function listContacts(ctx: GatewayContext): Promise<Contact[]> {
  const now = ctx.config.clock();
  const agents = await ctx.db.selectFrom('agents').selectAll().orderBy('name').execute();
  const users = await ctx.db.selectFrom('users').select('name').orderBy('name').execute();
  const contacts: Contact[] = [];
  for (const a of agents) {
    const address = addressOrSkip(ctx, { name: a.name, path: '', session: '' }, 'agents');
    if (address === undefined) continue;
    contacts.push({
      name: a.name,
      kind: 'agent' as const,
      platform: a.platform,
      ...presenceOf(a, now),
      workspaces: parseJsonArray(a.workspaces)
        .map((w) => (typeof w === 'object' && w !== null ? (w as { path?: unknown }).path : undefined))
        .filter((p): p is string => typeof p === 'string'),
      address,
    });
  }
  for (const u of users) {
    const address = addressOrSkip(ctx, { name: u.name, path: '', session: '' }, 'users');
    if (address === undefined) continue;
    contacts.push({
      name: u.name,
      kind: 'person' as const,
      platform: '',
      online: false,
      last_seen: null,
      offline_since: null,
      workspaces: [],
      address,
    });
  }
  return contacts;
}

/** Suggest addresses for a (partial) name and/or path: existing sessions, then workspaces. */
export async function suggestAddresses(
  ctx: GatewayContext,
  name?: string,
  path?: string,
): Promise<Suggestion[]> {
  const n = (name ?? '').toLowerCase();
  const p = path ?? '';
  const out: Suggestion[] = [];
  const seen = new Set<string>();
  // Suggestions are built from stored rows and the query: one that does not form an address is
  // skipped (and logged), never a 500.
  const push = (parts: Address, s: Omit<Suggestion, 'address'>) => {
    const address = addressOrSkip(ctx, parts, 'suggestions');
    if (address === undefined || seen.has(address)) return;
    seen.add(address);
    out.push({ address, ...s });
  };
  const agents = (await ctx.db.selectFrom('agents').selectAll().orderBy('name').execute()).filter((a) =>
    a.name.toLowerCase().includes(n),
  );
  for (const a of agents) {
    const sessions = await ctx.db
      .selectFrom('sessions')
      .select(['path', 'alias'])
      .where('agent_name', '=', a.name)
      .where('alias', 'is not', null)
      .orderBy('updated_at', 'desc')
      .limit(20)
      .execute();
    for (const s of sessions) {
      if (p !== '' && !s.path.startsWith(p)) continue;
      const alias = s.alias ?? '';
      push(
        { name: a.name, path: s.path, session: alias },
        {
          name: a.name,
          path: s.path,
          session_alias: alias,
          reason: 'existing session',
        },
      );
    }
    for (const w of parseJsonArray(a.workspaces)) {
      const wp = typeof w === 'object' && w !== null ? (w as { path?: unknown }).path : undefined;
      if (typeof wp !== 'string' || !wp.startsWith('/') || (p !== '' && !wp.startsWith(p))) continue;
      push(
        { name: a.name, path: wp, session: 'new' },
        {
          name: a.name,
          path: wp,
          session_alias: '',
          reason: 'announced workspace (new session)',
        },
      );
    }
    if (p === '' || p.startsWith('/'))
      push(
        { name: a.name, path: p, session: '' },
        {
          name: a.name,
          path: p,
          session_alias: '',
          reason: 'default session',
        },
      );
  }
  const users = await ctx.db.selectFrom('users').select('name').orderBy('name').execute();
  for (const u of users.filter((x) => x.name.toLowerCase().includes(n)))
    push(
      { name: u.name, path: '', session: '' },
      {
        name: u.name,
        path: '',
        session_alias: '',
        reason: 'person',
      },
    );
  return out.slice(0, 50);
}

/**
 * Naming sync (SPEC B-11): rename a session of the agent (suffix on collision) and/or set its
 * title; answers the final alias.
 * @throws GatewayError `AM_GW_NOT_FOUND`, `AM_GW_BAD_REQUEST` (alias not valid)
 */
export async function syncSession(
  ctx: GatewayContext,
  agentName: string,
  sessionId: string,
  alias: string | undefined,
  title: string | undefined,
): Promise<SessionSyncResponse> {
  return ctx.db.transaction().execute(async (trx) => {
    const session = await sessionById(trx, sessionId);
    if (!session || session.agent_name !== agentName)
      throw new GatewayError('NOT_FOUND', `agent "${agentName}" has no session "${sessionId}"`);
    let finalAlias = session.alias ?? '';
    if (alias !== undefined && alias !== session.alias) {
      if (!isValidAlias(alias))
        throw new GatewayError('BAD_REQUEST', `field "alias": "${alias}" is not a valid alias`, {
          detail:
            'an alias has 1..64 characters without ".", "/", whitespace or control characters and is not "new"',
          extra: { field: 'alias' },
        });
      const candidates = [alias, ...Array.from({ length: 98 }, (_, i) => `${alias}-${i + 2}`)];
      const taken = new Set(
        (
          await trx
            .selectFrom('sessions')
            .select('alias')
            .where('agent_name', '=', agentName)
            .where('alias', 'in', candidates)
            .where('id', '!=', sessionId)
            .execute()
        ).map((r) => r.alias),
      );
      const free = candidates.find((c) => !taken.has(c));
      if (free === undefined)
        throw new GatewayError('CONFLICT', `every suffix of the alias "${alias}" is taken`);
      finalAlias = free;
    }
    const finalTitle = title ?? session.title;
    await trx
      .updateTable('sessions')
      .set({
        alias: finalAlias === '' ? null : finalAlias,
        title: finalTitle,
        updated_at: ctx.config.clock(),
      })
      .where('id', '=', sessionId)
      .execute();
    return { session_id: sessionId, alias: finalAlias, title: finalTitle };
  });
}

/**
 * Every agent with its presence and mode enforcement, and the sessions of it that `userId` took
 * part in — sent or received a mail there, or owns (SPEC H-4: a person never learns the aliases,
 * titles or paths of other people's sessions).
 */
export async function agentsFor(
  ctx: GatewayContext,
  user: { id: string; name: string },
): Promise<AgentView[]> {
  const now = ctx.config.clock();
  const agents = await ctx.db.selectFrom('agents').selectAll().orderBy('name').execute();
  const sessions = await ctx.db
    .selectFrom('sessions')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('sessions.owner_user_id', '=', user.id),
        eb.exists(
          eb
            .selectFrom('mails')
            .select('mails.id')
            .whereRef('mails.session_id', '=', 'sessions.id')
            .where('mails.from_name', '=', user.name)
            .where('mails.from_human', '=', 1),
        ),
        eb.exists(
          eb
            .selectFrom('deliveries')
            .select('deliveries.mail_id')
            .whereRef('deliveries.session_id', '=', 'sessions.id')
            .where('deliveries.recipient_name', '=', user.name)
            .where('deliveries.recipient_human', '=', 1),
        ),
      ]),
    )
    .orderBy('updated_at', 'desc')
    .execute();
  const out: AgentView[] = [];
  for (const a of agents) {
    const address = addressOrSkip(ctx, { name: a.name, path: '', session: '' }, 'agents');
    if (address === undefined) continue;
    const enforcement = ModeEnforcement.safeParse(a.mode_enforcement);
    const own = sessions.filter((x) => x.agent_name === a.name);
    // One presence rule for every view: a bridge's goodbye makes it offline at once (H-3).
    const { online, last_seen } = presenceOf(a, now);
    out.push({
      name: a.name,
      platform: a.platform,
      online,
      last_seen,
      mode_enforcement: enforcement.success ? enforcement.data : null,
      mode_enforcement_reason: enforcement.success ? a.mode_enforcement_reason : null,
      workspaces: parseJsonArray(a.workspaces)
        .map((w) => (typeof w === 'object' && w !== null ? (w as { path?: unknown }).path : undefined))
        .filter((p): p is string => typeof p === 'string'),
      address,
      sessions: own.flatMap((x) => {
        const sessionAddress = addressOrSkip(
          ctx,
          { name: a.name, path: x.path, session: x.alias ?? '' },
          'sessions',
        );
        if (sessionAddress === undefined) return [];
        const mode = PermissionMode.safeParse(x.permission_mode);
        return [
          {
            id: x.id,
            alias: x.alias ?? '',
            path: x.path,
            address: sessionAddress,
            title: x.title,
            permission_mode: mode.success ? mode.data : 'workspace',
            updated_at: iso(Number(x.updated_at)),
          },
        ];
      }),
    });
  }
  return out;
}

// ---- admin ----

/**
 * Create a user with a fresh token (shown once, stored hashed).
 * @throws GatewayError `AM_GW_CONFLICT` when the name is taken by a person or an agent
 */
export async function createUser(
  ctx: GatewayContext,
  name: string,
  admin: boolean,
): Promise<{ token: string; id: string }> {
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const agent = await trx.selectFrom('agents').select('name').where('name', '=', name).executeTakeFirst();
      if (agent) throw new GatewayError('CONFLICT', `the name "${name}" belongs to an agent`);
      const now = ctx.config.clock();
      const id = newId('u', now);
      await trx
        .insertInto('users')
        .values({ id, name, is_admin: admin ? 1 : 0, created_at: now })
        .execute();
      return { token: await newUserToken(trx, id, now), id };
    });
  } catch (err) {
    if (isUniqueViolation(err, 'name')) throw new GatewayError('CONFLICT', `a user named "${name}" exists`);
    throw err;
  }
}

/** Issue an agent key bound to `agentName` (shown once, stored hashed; SPEC G-12). */
export async function issueAgentKey(
  ctx: GatewayContext,
  agentName: string,
): Promise<{ keyId: string; key: string }> {
  const user = await ctx.db.selectFrom('users').select('id').where('name', '=', agentName).executeTakeFirst();
  if (user) throw new GatewayError('CONFLICT', `the name "${agentName}" belongs to a person`);
  const now = ctx.config.clock();
  const key = newSecret('amk');
  const keyId = newId('k', now);
  await ctx.db
    .insertInto('agent_keys')
    .values({
      id: keyId,
      agent_name: agentName,
      key_hash: hashSecret(key),
      created_at: now,
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
  return { keyId, key };
}

/** Every agent key, oldest first: id, bound name, created, last used, revoked (never the key). */
export async function listAgentKeys(ctx: GatewayContext): Promise<AgentKeysResponse> {
  const rows = await ctx.db
    .selectFrom('agent_keys')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const at = (ms: number | null): string | null => (ms === null ? null : iso(Number(ms)));
  return {
    keys: rows.map((k) => ({
      key_id: k.id,
      agent_name: k.agent_name,
      created_at: iso(Number(k.created_at)),
      last_used_at: at(k.last_used_at),
      revoked_at: at(k.revoked_at),
    })),
  };
}

/**
 * Give user `name` a new token (shown once, stored hashed) and revoke every older one, ending the
 * web sessions made from them, in one transaction: for a person who lost theirs, or whose token leaked. Takes the store itself, so
 * `agentmail admin reset-token` can run it on a data directory without a Gateway.
 * @throws GatewayError `AM_GW_NOT_FOUND` when no user has the name.
 */
export async function resetUserToken(db: GatewayDb, name: string, now: number): Promise<ResetTokenResponse> {
  return db.transaction().execute(async (trx) => {
    const user = await trx.selectFrom('users').select('id').where('name', '=', name).executeTakeFirst();
    if (!user)
      throw new GatewayError('NOT_FOUND', `no user is named "${name}"`, {
        suggestion: 'list the users (GET /api/v1/admin/users)',
        extra: { name },
      });
    const revoked = await trx
      .updateTable('user_tokens')
      .set({ revoked_at: now })
      .where('user_id', '=', user.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    // A session made from a revoked token must end with it (a leaked token's sessions too).
    await trx.deleteFrom('web_sessions').where('user_id', '=', user.id).execute();
    const token = await newUserToken(trx, user.id, now);
    return { name, token, revoked_tokens: Number(revoked.numUpdatedRows) };
  });
}

/** Revoke an agent key. @throws GatewayError `AM_GW_NOT_FOUND` */
export async function revokeAgentKey(ctx: GatewayContext, keyId: string): Promise<void> {
  const r = await ctx.db
    .updateTable('agent_keys')
    .set({ revoked_at: ctx.config.clock() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0)
    throw new GatewayError('NOT_FOUND', `agent key "${keyId}" not found or already revoked`);
}

/**
 * The selection of a platform beside what its agents have (SPEC G-26): the union of the
 * catalogues the platform's agents last reported, each model with the agents that have it, and
 * the selection with stale flags — a selected model that no reporting agent has stays selected
 * and is flagged stale. While no agent has reported a catalogue nothing is stale (nothing is known
 * yet); `reported_by` is empty then.
 */
export async function allowedModelsView(
  ctx: GatewayContext,
  platform: string,
): Promise<AllowedModelsResponse> {
  const selection = await allowedModels(ctx.db, platform);
  const agents = await ctx.db
    .selectFrom('agents')
    .select(['name', 'models'])
    .where('platform', '=', platform)
    .orderBy('name')
    .execute();
  const catalogue = new Map<string, CatalogueEntry>();
  const reportedBy: string[] = [];
  for (const a of agents) {
    const models = parseJsonArray(a.models);
    // '[]' is also what registration stores: an empty list counts as "not reported".
    if (models.length > 0) reportedBy.push(a.name);
    for (const m of models) {
      if (typeof m !== 'object' || m === null) continue;
      const { key, name } = m as { key?: unknown; name?: unknown };
      if (typeof key !== 'string') continue;
      const entry = catalogue.get(key) ?? { key, name: '', agents: [] };
      if (entry.name === '' && typeof name === 'string') entry.name = name;
      if (!entry.agents.includes(a.name)) entry.agents.push(a.name);
      catalogue.set(key, entry);
    }
  }
  return {
    platform,
    models: selection.map((key) => ({ key, stale: reportedBy.length > 0 && !catalogue.has(key) })),
    catalogue: [...catalogue.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
    reported_by: reportedBy,
  };
}

/** Replace the ordered selection of a platform (≤10, SPEC G-26). */
export async function setAllowedModels(
  ctx: GatewayContext,
  platform: string,
  models: readonly string[],
): Promise<AllowedModelsResponse> {
  const unique = [...new Set(models)];
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('allowed_models').where('platform', '=', platform).execute();
    for (const [position, model_key] of unique.entries())
      await trx.insertInto('allowed_models').values({ platform, position, model_key }).execute();
  });
  return allowedModelsView(ctx, platform);
}
