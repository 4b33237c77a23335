import { describe, expect, it } from 'vitest';
import { BridgeEventBus } from '../src/events.js';
import { type HostEventLevel, hostLogEntry, logBridgeEvents } from '../src/log-events.js';
import type { BridgeLogger } from '../src/logger.js';

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

describe('logBridgeEvents (host events)', () => {
  function logged(hostLevel?: HostEventLevel): Array<[string, Record<string, unknown>]> {
    const lines: Array<[string, Record<string, unknown>]> = [];
    const at =
      (level: string) =>
      (fields: Record<string, unknown>): void =>
        void lines.push([level, fields]);
    const log = { info: at('info'), warn: at('warn'), error: at('error') } as unknown as BridgeLogger;
    const bus = new BridgeEventBus<{ type: 'self_check'; ok: boolean }>();
    logBridgeEvents(bus, log, hostLevel);
    bus.emit({ type: 'self_check', ok: false });
    bus.emit({ type: 'self_check', ok: true });
    return lines;
  }

  it('are logged at info, or at the level the bridge gives them by content', () => {
    expect(logged().map(([level]) => level)).toEqual(['info', 'info']);
    const level: HostEventLevel = (e) => (e.type === 'self_check' && e.ok === false ? 'warn' : undefined);
    expect(logged(level)).toEqual([
      ['warn', { event: 'self_check', ok: false }],
      ['info', { event: 'self_check', ok: true }],
    ]);
  });
});
