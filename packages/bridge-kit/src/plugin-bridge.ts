/**
 * `runPluginBridge`: the steps every bridge that lives inside its host's process repeats (opencode,
 * DSH: a plugin the host loads), beside the driver main of the headless-CLI hosts (host-tools
 * `runDriverMain`) and the child-process turn runner (`childProcessTurns`). The host's own parts —
 * its bridge class, its plugin shape, when it is ready to start — stay in the bridge.
 */
import type { BridgeConfig } from './bridge-config.js';
import type { BridgeEvent } from './events.js';
import { type HostLogEntry, hostLogEntry } from './log-events.js';
import type { BridgeLogger } from './logger.js';
import { dropCredentialVariables } from './turn-env.js';

/** An event as the host's log sees it. */
export type PluginLogEvent = { type: string } & Record<string, unknown>;

/** The host's own log (opencode's app log, DSH's `ctx.logger`), beside the bridge's JSON log. */
export interface HostLogSink {
  /** What the host's log shows of an event. @default the kit's {@link hostLogEntry} (milestones, warnings, errors) */
  entry?(event: PluginLogEvent): HostLogEntry | undefined;
  /** Write one entry. A throw or a rejection is dropped: the host's log failing must not break the bridge. */
  write(entry: HostLogEntry, event: PluginLogEvent): void | Promise<void>;
}

/** What a plugin's bridge offers: the kit's bridge (its bus) and its start and stop. */
export interface PluginHostBridge {
  /** The kit's bridge (`createBridge`): its event bus. */
  readonly bridge: {
    emit(event: BridgeEvent): void;
    readonly events: { subscribe(listener: (event: PluginLogEvent) => void): () => void };
  };
  /** Connect (B-1, B-20), retrying while the Gateway is away (`onPermanentStartError: 'retry'`: a plugin cannot exit its host). */
  start(): Promise<void>;
  /** Graceful stop (B-15, P-7). */
  stop(): Promise<void>;
}

/** Options of {@link runPluginBridge}. */
export interface PluginBridgeOptions<C extends BridgeConfig, B extends PluginHostBridge> {
  /**
   * Read the settings (the plugin's options over the environment).
   * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the setting: the host reports the plugin as failed.
   */
  readConfig(): C;
  /** The bridge's JSON log (stderr). */
  log: BridgeLogger;
  /** The host's bridge, not started (the host's tools may already call into it). */
  create(config: C, log: BridgeLogger): B;
  /** The host's own log, given the settings (e.g. the agent name in its lines). @default none */
  hostLog?(config: C): HostLogSink;
  /**
   * SIGTERM and SIGINT of the host's process stop the bridge (B-15), and then:
   * - `'reraise'`: the signal is raised again once the bridge stopped (a host that does not stop its
   *   plugins on a signal, opencode `serve`). The listener is gone by then, so the signal gets what
   *   it would have got without us: the host's own handling, or the default action (exit).
   * - `'host-continues'`: the bridge's stop starts before the host's own listeners run (prepended)
   *   and the host's shutdown goes on (DSH: mail turns are aborted before the host disposes their
   *   agents, or a turn ended "disposed" would look like a model failure).
   */
  signals: 'reraise' | 'host-continues';
}

/** A plugin's bridge, set up and not started (see {@link runPluginBridge}). */
export interface PluginBridge<C extends BridgeConfig, B extends PluginHostBridge> {
  readonly config: C;
  /** The host's bridge that `create` made. */
  readonly host: B;
  /**
   * Start once `ready` resolved (e.g. the host's loader finished). Never rejects: a failure is a
   * `start_failed` event.
   */
  start(ready?: () => Promise<void>): Promise<void>;
  /** Stop the bridge (B-15), then drop the signal listeners. Never rejects; every call waits for the one stop. */
  stop(): Promise<void>;
}

/**
 * Set up a bridge inside its host's process (SPEC B-15, B-21): read the settings, take the key
 * and every credential out of the process environment (the host's tools run with it), create the
 * host's bridge, feed the host's log, stop on SIGTERM/SIGINT. The plugin then calls `start()` when
 * its host is ready and `stop()` when it unloads.
 * @throws what `readConfig` throws (a bad setting fails the plugin's load).
 * @example
 * const plugin = runPluginBridge({ readConfig: () => readMyConfig(options, process.env), log,
 *   create: (config, log) => new MyBridge(config, log), hostLog: () => mySink, signals: 'reraise' });
 * void plugin.start();
 * onUnload(() => plugin.stop());
 */
export function runPluginBridge<C extends BridgeConfig, B extends PluginHostBridge>(
  options: PluginBridgeOptions<C, B>,
): PluginBridge<C, B> {
  const config = options.readConfig();
  // The key is read: now out of the environment the host's tools and shells inherit (B-21).
  dropCredentialVariables(process.env);
  const host = options.create(config, options.log);
  const sink = options.hostLog?.(config);
  if (sink) feedHostLog(host.bridge.events, sink);

  const signals = ['SIGTERM', 'SIGINT'] as const;
  const listeners = signals.map((signal) => {
    const listener =
      options.signals === 'reraise'
        ? (): void => void host.stop().finally(() => process.kill(process.pid, signal))
        : (): void => void host.stop().catch(() => undefined);
    if (options.signals === 'reraise') process.once(signal, listener);
    else process.prependOnceListener(signal, listener);
    return [signal, listener] as const;
  });
  let stopped: Promise<void> | undefined;
  return {
    config,
    host,
    start: (ready) =>
      (async () => {
        await ready?.();
        await host.start();
      })().catch((err: unknown) =>
        host.bridge.emit({ type: 'start_failed', error: String(err), permanent: false, retry_ms: 0 }),
      ),
    stop() {
      stopped ??= (async () => {
        await host.stop().catch(() => undefined);
        // Only now: a signal during the stop still waits for it (and is raised again after it).
        for (const [signal, listener] of listeners) process.removeListener(signal, listener);
      })();
      return stopped;
    },
  };
}

/** Copy what {@link HostLogSink.entry} picks of each event to the host's log. */
function feedHostLog(bus: PluginHostBridge['bridge']['events'], sink: HostLogSink): () => void {
  const pick = sink.entry ?? hostLogEntry;
  return bus.subscribe((event) => {
    const entry = pick(event);
    if (entry === undefined) return;
    try {
      void Promise.resolve(sink.write(entry, event)).catch(() => undefined);
    } catch {
      // the host's log failing must not break the bus
    }
  });
}
