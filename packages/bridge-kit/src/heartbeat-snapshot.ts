/**
 * The host's part of each heartbeat (SPEC G-25, G-37, P-8): the adapter's snapshot, checked with
 * the wire schemas, without the bridge's own sessions and clamped to the Gateway's limits.
 */
import {
  CatalogueModel,
  HEARTBEAT_MAX_MODELS,
  HEARTBEAT_MAX_SESSIONS,
  ModeEnforcement,
  PlatformSession,
} from '@agentmail/protocol';
import { messageOf } from '@agentmail/shared-policy';
import { z } from 'zod';
import type { HostSnapshot } from './adapter.js';
import type { EmitEvent } from './events.js';
import type { HeartbeatSnapshot } from './runtime-host.js';
import type { SessionBindings } from './session-bindings.js';

/**
 * A host's snapshot, checked field by field with the wire schemas: a malformed part is left out
 * (the heartbeat then says "unreadable" for it, G-25) and reported; an unknown enforcement is
 * advisory (P-8: native only when verified). Never throws.
 */
function checkSnapshot(snap: unknown, emit: EmitEvent): HostSnapshot {
  const s = (typeof snap === 'object' && snap !== null ? snap : {}) as Record<string, unknown>;
  const enforcement = ModeEnforcement.safeParse(s.mode_enforcement);
  const out: HostSnapshot = enforcement.success
    ? { mode_enforcement: enforcement.data }
    : {
        mode_enforcement: 'advisory',
        mode_enforcement_reason: `the host reported mode_enforcement ${JSON.stringify(s.mode_enforcement)}, not native or advisory`,
      };
  if (enforcement.success && typeof s.mode_enforcement_reason === 'string' && s.mode_enforcement_reason)
    out.mode_enforcement_reason = s.mode_enforcement_reason;
  for (const [part, schema] of [
    ['sessions', z.array(PlatformSession)],
    ['models', z.array(CatalogueModel)],
  ] as const) {
    if (s[part] === undefined) continue;
    const r = schema.safeParse(s[part]);
    if (r.success) (out as unknown as Record<string, unknown>)[part] = r.data;
    else
      emit({
        type: 'snapshot_partial',
        part,
        error: `the host's ${part} do not fit the wire schema: ${r.error.issues[0]?.message ?? 'invalid'}`,
      });
  }
  return out;
}

/**
 * The heartbeat snapshots of a host: each call reads `snapshot()` once. A snapshot that throws
 * still gives a heartbeat (advisory, no sessions or models: the agent stays online, B-20); a
 * malformed part is left out (event `snapshot_partial`). Only sessions a person opened are offered
 * for adoption, never the bridge's own (G-37); at most `HEARTBEAT_MAX_SESSIONS` sessions and
 * `HEARTBEAT_MAX_MODELS` models. Never throws.
 */
export function heartbeatSnapshots(
  snapshot: () => Promise<HostSnapshot>,
  bindings: SessionBindings,
  emit: EmitEvent,
): () => Promise<HeartbeatSnapshot> {
  /** Host sessions the last heartbeat offered for adoption (G-37). */
  let offered = new Set<string>();
  return async (): Promise<HeartbeatSnapshot> => {
    // A host that cannot give its snapshot must not keep the agent offline (and its backlog
    // waiting, B-20): the heartbeat goes out without the unreadable parts (G-25), advisory (P-8).
    let snap: HostSnapshot;
    try {
      snap = await snapshot();
    } catch (err) {
      const reason = `the host snapshot failed: ${messageOf(err)}`;
      emit({ type: 'snapshot_partial', part: 'sessions', error: reason });
      return { mode_enforcement: 'advisory', mode_enforcement_reason: reason };
    }
    const checked = checkSnapshot(snap, emit);
    let sessions = checked.sessions;
    if (sessions !== undefined) {
      // G-37: only sessions a person opened are offered for adoption, never the bridge's own.
      // While a turn is creating a session, a new one in the list may be it: offer only those
      // offered before; a person's new session waits for the next heartbeat.
      const own = await bindings.ownPlatformSessionIds();
      const unsure = bindings.creationsInFlight > 0;
      sessions = sessions
        .filter((s) => !own.has(s.platform_id) && (!unsure || offered.has(s.platform_id)))
        .slice(0, HEARTBEAT_MAX_SESSIONS);
      offered = new Set(sessions.map((s) => s.platform_id));
    }
    return {
      mode_enforcement: checked.mode_enforcement,
      ...(checked.mode_enforcement_reason
        ? { mode_enforcement_reason: checked.mode_enforcement_reason }
        : {}),
      ...(sessions === undefined ? {} : { sessions }),
      ...(checked.models === undefined ? {} : { models: checked.models.slice(0, HEARTBEAT_MAX_MODELS) }),
    };
  };
}
