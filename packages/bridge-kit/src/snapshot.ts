/**
 * The host's part of a heartbeat, read part by part (SPEC G-25): a part the host cannot read is
 * omitted — never sent as an empty list, which would clear what the Gateway knows — and reported.
 */
import { messageOf } from '@agentmail/shared-policy';
import type { HostSnapshot } from './adapter.js';
import type { EmitEvent } from './events.js';

/** How a host reads each part of its snapshot. */
export interface SnapshotReaders {
  sessions?: () => Promise<NonNullable<HostSnapshot['sessions']>>;
  models?: () => Promise<NonNullable<HostSnapshot['models']> | undefined>;
}

/**
 * Read both parts in parallel; a reader that throws (or gives undefined) leaves its part out, with
 * a `snapshot_partial` event naming the part and the error. Never throws.
 * @example return { mode_enforcement: 'native', ...(await readSnapshotParts({ sessions, models }, emit)) };
 */
export async function readSnapshotParts(
  readers: SnapshotReaders,
  emit: EmitEvent,
): Promise<Pick<HostSnapshot, 'sessions' | 'models'>> {
  const read = async <T>(part: 'sessions' | 'models', reader: (() => Promise<T | undefined>) | undefined) => {
    if (reader === undefined) return undefined;
    try {
      return await reader();
    } catch (err) {
      emit({ type: 'snapshot_partial', part, error: messageOf(err) });
      return undefined;
    }
  };
  const [sessions, models] = await Promise.all([
    read('sessions', readers.sessions),
    read('models', readers.models),
  ]);
  return { ...(sessions === undefined ? {} : { sessions }), ...(models === undefined ? {} : { models }) };
}
