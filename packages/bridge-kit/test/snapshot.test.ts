import { describe, expect, it } from 'vitest';
import { readSnapshotParts } from '../src/snapshot.js';
import { recordingBus } from './support/bridge-fixtures.js';

describe('readSnapshotParts (SPEC G-25: omit what cannot be read)', () => {
  it('both parts read: both sent; an empty list is sent as empty', async () => {
    const bus = recordingBus();
    const parts = await readSnapshotParts(
      { sessions: async () => [], models: async () => [{ key: 'p/m' }] },
      bus.emitFn,
    );
    expect(parts).toEqual({ sessions: [], models: [{ key: 'p/m' }] });
    expect(bus.events).toEqual([]);
  });

  it('a part that throws is omitted and reported; the other part still goes', async () => {
    const bus = recordingBus();
    const parts = await readSnapshotParts(
      {
        sessions: async () => {
          throw new Error('disk gone');
        },
        models: async () => [{ key: 'p/m' }],
      },
      bus.emitFn,
    );
    expect(parts).toEqual({ models: [{ key: 'p/m' }] });
    expect(bus.events).toEqual([{ type: 'snapshot_partial', part: 'sessions', error: 'disk gone' }]);
  });

  it('a reader that gives undefined, or none at all, leaves its part out', async () => {
    expect(await readSnapshotParts({ models: async () => undefined }, () => undefined)).toEqual({});
  });
});
