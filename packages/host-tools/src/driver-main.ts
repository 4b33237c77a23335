/**
 * The main of a driver daemon (`agentmail-claude`, `agentmail-zcode`): configured by environment
 * variables only; logs are pino JSON lines on stderr, one per event (field `event`). The setup
 * check runs before the bridge starts (SPEC P-8). SIGTERM and SIGINT stop it gracefully (B-15):
 * running host processes are stopped as groups and pending permissions denied; exit code 0 then,
 * 2 on a configuration error (a setting, or a key or agent name the Gateway refuses for good at
 * registration), 1 when it cannot start otherwise or lost the bridge lock (a supervisor restarts
 * it as a standby, G-22).
 */
import { homedir } from 'node:os';
import {
  type BridgeLogger,
  createBridgeLogger,
  type StartingAgent,
  sayStartProgress,
  startRefusal,
  terminalLines,
} from '@agentmail/bridge-kit';
import { isPermanent } from '@agentmail/shared-policy/client';
import { type DriverEvent, type SetupCheckResult, selfCheckEvent } from './setup-gate.js';

/** The part of a kit `Bridge` the main uses. */
export interface DriverBridge {
  emit(event: DriverEvent): void;
  readonly events: { subscribe(listener: (event: { type: string }) => void): () => void };
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What {@link runDriverMain} runs. */
export interface DriverMainOptions<C extends StartingAgent> {
  /** Logger name, e.g. `agentmail-zcode`. */
  name: string;
  /**
   * Read the configuration.
   * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` naming the variable (logged, exit 2).
   */
  readConfig(env: NodeJS.ProcessEnv, home: string): C;
  /** The setup check (P-8). Never throws. */
  selfCheck(config: C, signal: AbortSignal): Promise<SetupCheckResult>;
  /** The bridge (not started) with the check's outcome. */
  createBridge(config: C, options: { log: BridgeLogger; enforcement: SetupCheckResult }): DriverBridge;
}

/**
 * Run a driver daemon until it is stopped (the process exits from here).
 * @example await runDriverMain({ name: 'agentmail-zcode', readConfig: readZcodeConfig, selfCheck, createBridge: createZcodeBridge });
 */
export async function runDriverMain<C extends StartingAgent>(options: DriverMainOptions<C>): Promise<void> {
  const log = createBridgeLogger(options.name);
  // On a terminal, failures to start and the connection are also plain lines (as agentmail-pi).
  const say = terminalLines(options.name);
  let config: C;
  try {
    config = options.readConfig(process.env, process.env.HOME || homedir());
  } catch (err) {
    log.fatal(
      { event: 'config_invalid', code: (err as { code?: string }).code, err: (err as Error).message },
      'bad configuration',
    );
    say(`bad configuration: ${(err as Error).message}`);
    process.exit(2);
  }

  const stopping = new AbortController();
  const started = Date.now();
  const check = await options.selfCheck(config, stopping.signal);
  const bridge = options.createBridge(config, { log, enforcement: check });
  bridge.emit(selfCheckEvent(check, Date.now() - started));
  sayStartProgress(bridge.events, say, config);

  let exiting = false;
  const stop = (signal: string): void => {
    if (exiting) return;
    exiting = true;
    stopping.abort();
    bridge.emit({ type: 'signal_received', signal });
    void bridge.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  bridge.events.subscribe((e) => {
    if (e.type === 'lock_lost') process.exit(1);
  });
  bridge.start().catch(async (err: unknown) => {
    // A refusal for good (a wrong key, a name the key is not bound to) is a configuration
    // error: exit 2 as for a bad setting (as agentmail-pi), so a supervisor does not loop on it.
    const permanent = isPermanent(err);
    log.fatal({ event: 'start_failed_permanently', err: String(err), permanent }, 'start failed');
    if (permanent) {
      const { line, fix } = startRefusal(err, config);
      say(line, fix);
    } else say(`cannot start: ${(err as Error).message}`);
    await bridge.stop().catch(() => undefined);
    process.exit(permanent ? 2 : 1);
  });
}
