/**
 * Agents and their models: register (idempotent), heartbeat (online status, the catalogue and
 * mode enforcement it reports, SPEC G-25..G-27, P-8), and the admin's model selection (G-26).
 */
import {
  type AllowedModelsResponse,
  type CatalogueEntry,
  HEARTBEAT_INTERVAL_MS,
  type HeartbeatRequest,
  type HeartbeatResponse,
  heartbeatUnknownFields,
  type RegisterResponse,
} from '@agentmail/protocol';
import { claimName } from './accounts.js';
import type { Db, GatewayContext } from './context.js';
import { iso } from './context.js';
import { parseJsonArray } from './directory.js';
import { GatewayError, isGatewayError } from './errors.js';

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
    await claimName(trx, name, 'agent', ctx.config.clock()).catch((err: unknown) => {
      throw isGatewayError(err)
        ? new GatewayError('CONFLICT', err.message, {
            suggestion: 'issue the agent a key under another name',
          })
        : err;
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
      // Two first registrations racing: the second finds the row the first inserted.
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
        .onConflict((oc) => oc.column('name').doUpdateSet({ platform, meta }))
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
    sandbox?: string;
    offline_since: null;
  } = { last_seen: now, offline_since: null };
  if (body.workspaces !== undefined) set.workspaces = JSON.stringify(body.workspaces);
  if (body.sessions !== undefined) set.platform_sessions = JSON.stringify(body.sessions);
  if (body.models !== undefined) set.models = JSON.stringify(body.models);
  if (body.sandbox !== undefined) set.sandbox = body.sandbox;
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
  // Upsert by position, then drop the positions past the end: two admins saving at once (on two
  // Gateways) serialise on the rows instead of colliding on the key; the later save wins.
  await ctx.db.transaction().execute(async (trx) => {
    for (const [position, model_key] of unique.entries())
      await trx
        .insertInto('allowed_models')
        .values({ platform, position, model_key })
        .onConflict((oc) => oc.columns(['platform', 'position']).doUpdateSet({ model_key }))
        .execute();
    await trx
      .deleteFrom('allowed_models')
      .where('platform', '=', platform)
      .where('position', '>=', unique.length)
      .execute();
  });
  return allowedModelsView(ctx, platform);
}
