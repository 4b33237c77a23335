/**
 * Presence (SPEC G-25, H-3): an agent is online while its heartbeats keep coming — for
 * {@link ONLINE_WINDOW_MS} after the last one — unless its bridge said goodbye
 * (`POST /agent/offline`): then it is offline at once, until its next heartbeat.
 */
import type { AgentOfflineResponse, OfflineRecipient } from '@agentmail/protocol';
import { ONLINE_WINDOW_MS } from './config.js';
import type { Db, GatewayContext } from './context.js';
import { iso } from './context.js';
import { GatewayError } from './errors.js';

/** The stored presence fields of an agent row (ms). */
export interface PresenceRow {
  last_seen: number | null;
  offline_since: number | null;
}

/** An agent's presence as the wire shows it. */
export interface Presence {
  online: boolean;
  /** ISO time of the last heartbeat or goodbye, or null when never seen. */
  last_seen: string | null;
  /** ISO time since which it is offline, or null while online or when never seen. */
  offline_since: string | null;
}

/** The presence of an agent row at `nowMs` (SQLite may hand bigints back as strings or bigints). */
export function presenceOf(row: PresenceRow, nowMs: number): Presence {
  if (row.last_seen === null) return { online: false, last_seen: null, offline_since: null };
  const lastSeen = Number(row.last_seen);
  if (row.offline_since !== null)
    return { online: false, last_seen: iso(lastSeen), offline_since: iso(Number(row.offline_since)) };
  const online = nowMs - lastSeen <= ONLINE_WINDOW_MS;
  return {
    online,
    last_seen: iso(lastSeen),
    offline_since: online ? null : iso(lastSeen + ONLINE_WINDOW_MS),
  };
}

/**
 * A bridge says it stops (SPEC H-3): the agent is offline from now on, its last contact is now;
 * its next heartbeat makes it online again. Logged with the reason.
 * @throws GatewayError `AM_GW_NOT_REGISTERED` (409) for an agent that never registered.
 */
export async function markOffline(
  ctx: GatewayContext,
  name: string,
  reason: string | undefined,
): Promise<AgentOfflineResponse> {
  const now = ctx.config.clock();
  const r = await ctx.db
    .updateTable('agents')
    .set({ last_seen: now, offline_since: now })
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0)
    throw new GatewayError('NOT_REGISTERED', `agent "${name}" is not registered`, {
      suggestion: 'nothing to do: an agent that never registered is offline anyway',
    });
  ctx.log.info({ event: 'agent_offline', agent: name, reason: reason ?? '' }, 'agent said it stops');
  return { status: 'offline', name, offline_since: iso(now) };
}

/** The offline ones among the agents `names` (for a send's answer, H-3), in the order given. */
export async function offlineAgents(
  db: Db,
  names: readonly string[],
  nowMs: number,
): Promise<OfflineRecipient[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('agents')
    .select(['name', 'last_seen', 'offline_since'])
    .where('name', 'in', [...names])
    .execute();
  const byName = new Map(rows.map((r) => [r.name, r]));
  const out: OfflineRecipient[] = [];
  for (const name of names) {
    const row = byName.get(name);
    if (!row) continue;
    const p = presenceOf(row, nowMs);
    if (!p.online) out.push({ name, last_seen: p.last_seen, offline_since: p.offline_since });
  }
  return out;
}
