/**
 * Fixtures for the bridge-core tests (bridge-runtime, mail-turn, permission-flow): a `new_mail`
 * event, a recording logger, SSE frames and a waiter that resolves on an event (no sleeps).
 */
import type { NewMailEvent } from '@agentmail/protocol';
import { type BridgeEvent, BridgeEventBus, type EmitEvent } from '../../src/events.js';
import type { BridgeLogger } from '../../src/logger.js';

export function newMail(id: string, over: Partial<NewMailEvent> = {}): NewMailEvent {
  return {
    mail_id: id,
    session_id: 's1',
    from_name: 'alice',
    from_human: true,
    to_workspace: '',
    subject: `subject ${id}`,
    in_reply_to: '',
    parent_from: '',
    permission_mode: 'workspace',
    permission_enforcement: 'native',
    session_alias: 'pi-fix',
    reply_address: 'alice@.pi-fix',
    self_address: 'pi@/srv/app.pi-fix',
    platform_session_id: '',
    kind: 'mail',
    ...over,
  };
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  obj: Record<string, unknown>;
}

/** A {@link BridgeLogger} that keeps every line; `wait(msg)` resolves once such a line exists. */
export function recordingLog(): BridgeLogger & {
  lines: LogLine[];
  wait(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
} {
  const lines: LogLine[] = [];
  const waiters: Array<() => void> = [];
  const push =
    (level: LogLine['level']) =>
    (obj: object, msg = '') => {
      lines.push({ level, msg, obj: obj as Record<string, unknown> });
      for (const w of waiters.splice(0)) w();
    };
  return {
    lines,
    info: push('info'),
    warn: push('warn'),
    error: push('error'),
    wait: (pred, timeoutMs = 5_000) =>
      new Promise<LogLine>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching log line; got ${lines.map((l) => l.msg).join(' | ')}`)),
          timeoutMs,
        );
        const check = (): void => {
          const hit = lines.find(pred);
          if (hit) {
            clearTimeout(timer);
            resolve(hit);
          } else waiters.push(check);
        };
        check();
      }),
  };
}

/** One SSE frame. */
export function frame(id: number, type: string, data: unknown): string {
  return `event: ${type}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A promise with its resolver. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolve once `pred()` holds, re-checked whenever `kick` is called; rejects after `timeoutMs`. */
export function until(
  pred: () => boolean,
  kick: { on(cb: () => void): void },
  timeoutMs = 5_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('condition not reached')), timeoutMs);
    const check = (): void => {
      if (pred()) {
        clearTimeout(timer);
        resolve();
      } else kick.on(check);
    };
    check();
  });
}

/** A re-armable signal for {@link until}. */
export function kicker(): { on(cb: () => void): void; kick(): void } {
  let cbs: Array<() => void> = [];
  return {
    on: (cb) => cbs.push(cb),
    kick: () => {
      const now = cbs;
      cbs = [];
      for (const cb of now) cb();
    },
  };
}

/** A bus that records every event; `wait(pred)` resolves once such an event was emitted (no sleeps). */
export function recordingBus(): BridgeEventBus & {
  events: BridgeEvent[];
  wait(pred: (e: BridgeEvent) => boolean, timeoutMs?: number): Promise<BridgeEvent>;
  emitFn: EmitEvent;
} {
  const events: BridgeEvent[] = [];
  const bus = new BridgeEventBus();
  const waiters: Array<() => void> = [];
  bus.subscribe((e) => {
    events.push(e);
    for (const w of waiters.splice(0)) w();
  });
  return Object.assign(bus, {
    events,
    emitFn: ((e: BridgeEvent) => bus.emit(e)) as EmitEvent,
    wait: (pred: (e: BridgeEvent) => boolean, timeoutMs = 5_000) =>
      new Promise<BridgeEvent>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching event; got ${events.map((e) => e.type).join(' | ')}`)),
          timeoutMs,
        );
        const check = (): void => {
          const hit = events.find(pred);
          if (hit) {
            clearTimeout(timer);
            resolve(hit);
          } else waiters.push(check);
        };
        check();
      }),
  });
}
