/**
 * The setup check of a driver whose host loads the AgentMail plugin (SPEC P-8): checked once at
 * start, its outcome decides `mode_enforcement`; a failed check is repeated before the next turn
 * (one at a time), so a plugin fixed meanwhile makes the bridge native again and a broken one
 * fails the turn before the host is ever run.
 */

/** The outcome of a setup check: `reason` says what is missing and how to fix it. */
export type SetupCheckResult = { ok: true } | { ok: false; reason: string };

/** A driver's own events about its setup (on the kit's bus next to the kit's events). */
export type DriverEvent =
  /** P-8: the startup check (or a repeat of it) that the plugin's hooks and tools load in the host. */
  | { type: 'self_check'; ok: boolean; reason?: string; duration_ms: number }
  /** The daemon got a stop signal (SIGTERM, SIGINT). */
  | { type: 'signal_received'; signal: string }
  /**
   * B-15: at start, a host run an earlier process of this driver left alive (it crashed): its
   * process group was ended (`ended`), or could not be told from a reused pid and was left alone.
   */
  | { type: 'leftover_run'; pgid: number; outcome: 'ended' | 'unverifiable' };

/**
 * The log level of a driver's own events: a failed setup check (`self_check`, `ok: false`) is a
 * warning (the bridge runs, but every mail fails with the reason until it is fixed), and so is a
 * leftover run of a crash; the rest info.
 */
export function driverEventLevel(event: { type: string } & Record<string, unknown>): 'warn' | undefined {
  return (event.type === 'self_check' && event.ok === false) || event.type === 'leftover_run'
    ? 'warn'
    : undefined;
}

/** The `self_check` event of a check that took `durationMs`. */
export function selfCheckEvent(result: SetupCheckResult, durationMs: number): DriverEvent {
  return {
    type: 'self_check',
    ok: result.ok,
    ...(result.ok ? {} : { reason: result.reason }),
    duration_ms: durationMs,
  };
}

/** Options of {@link SetupGate}. */
export interface SetupGateOptions {
  /** The start's check (run before the bridge starts, P-8). */
  initial: SetupCheckResult;
  /** Run the check again. Never throws. */
  recheck: () => Promise<SetupCheckResult>;
  /** Each repeat, with how long it took (emit `self_check`, and `enforcement` when it now passes). */
  onRecheck?: (result: SetupCheckResult, durationMs: number) => void;
}

/**
 * The setup as last checked. {@link SetupGate.current} is what the heartbeat reports;
 * {@link SetupGate.ensure} is consulted before every attempt.
 * @example
 * const gate = new SetupGate({ initial: await selfCheck(config), recheck: () => selfCheck(config) });
 * const ready = await gate.ensure(); if (!ready.ok) return { ok: false, cause: ready.reason, setupProblem: true };
 */
export class SetupGate {
  #current: SetupCheckResult;
  #rechecking: Promise<SetupCheckResult> | undefined;
  readonly #options: SetupGateOptions;

  constructor(options: SetupGateOptions) {
    this.#options = options;
    this.#current = options.initial;
  }

  /** The last outcome. */
  get current(): SetupCheckResult {
    return this.#current;
  }

  /** The current outcome, after one repeat of the check when it had failed (concurrent callers share it). */
  ensure(): Promise<SetupCheckResult> {
    if (this.#current.ok) return Promise.resolve(this.#current);
    this.#rechecking ??= (async () => {
      const started = Date.now();
      const r = await this.#options.recheck();
      this.#current = r;
      this.#rechecking = undefined;
      this.#options.onRecheck?.(r, Date.now() - started);
      return r;
    })();
    return this.#rechecking;
  }
}

/** The heartbeat's enforcement fields for a setup outcome (P-8: `native` only when verified). */
export function enforcementOf(
  result: SetupCheckResult,
): { mode_enforcement: 'native' } | { mode_enforcement: 'advisory'; mode_enforcement_reason: string } {
  return result.ok
    ? { mode_enforcement: 'native' }
    : { mode_enforcement: 'advisory', mode_enforcement_reason: result.reason.slice(0, 500) };
}

/** The kit's `enforcement` event (`BridgeEvent` of shared-policy) for a setup outcome (P-8). */
export function enforcementEvent(result: SetupCheckResult): {
  type: 'enforcement';
  mode: 'native' | 'advisory';
  reason?: string;
} {
  return result.ok
    ? { type: 'enforcement', mode: 'native' }
    : { type: 'enforcement', mode: 'advisory', reason: result.reason };
}

/**
 * A {@link SetupGate} whose repeats are reported on the bridge's bus: `self_check` each time, and
 * `enforcement: native` once it passes again. `emit` is called only after the bridge exists.
 * @example
 * const gate = reportingSetupGate({ initial, recheck: () => selfCheck(config), emit: (e) => bridge?.emit(e) });
 */
export function reportingSetupGate(options: {
  initial: SetupCheckResult;
  recheck: () => Promise<SetupCheckResult>;
  emit: (event: DriverEvent | ReturnType<typeof enforcementEvent>) => void;
}): SetupGate {
  return new SetupGate({
    initial: options.initial,
    recheck: options.recheck,
    onRecheck: (r, durationMs) => {
      options.emit(selfCheckEvent(r, durationMs));
      if (r.ok) options.emit(enforcementEvent(r));
    },
  });
}
