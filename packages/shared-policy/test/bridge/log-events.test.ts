import { describe, expect, it } from 'vitest';
import { hostLogEntry } from '../../src/bridge/log-events.js';

describe("hostLogEntry (what a host's own log shows)", () => {
  it('the first event-stream open is "AgentMail connected"; later ones are not shown', () => {
    expect(hostLogEntry({ type: 'stream_open', connection: 1 })).toEqual({
      level: 'info',
      message: 'AgentMail connected',
    });
    expect(hostLogEntry({ type: 'stream_open', connection: 2 })).toBeUndefined();
  });

  it('milestones at info, warnings and errors at their level, the rest not at all', () => {
    expect(hostLogEntry({ type: 'ready' })).toEqual({ level: 'info', message: 'ready' });
    expect(hostLogEntry({ type: 'standby' })).toEqual({ level: 'info', message: 'standby' });
    expect(hostLogEntry({ type: 'turn_failed' })).toEqual({ level: 'error', message: 'turn_failed' });
    expect(hostLogEntry({ type: 'heartbeat_failed' })).toEqual({
      level: 'warn',
      message: 'heartbeat_failed',
    });
    expect(hostLogEntry({ type: 'turn_done' })).toBeUndefined();
    expect(hostLogEntry({ type: 'mail_queued' })).toBeUndefined();
  });

  it('host events are left to the bridge', () => {
    expect(hostLogEntry({ type: 'dsh_approval_answered' })).toBeUndefined();
  });
});
