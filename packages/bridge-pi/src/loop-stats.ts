/**
 * The daemon's event-loop delay (see SPEC B-12: no model work on the loop that reads SSE), measured
 * with a perf_hooks `monitorEventLoopDelay` histogram. Off unless `AGENTMAIL_LOOP_STATS=1`; then
 * SIGUSR2 logs one `event loop delay` line with the figures since the previous report and starts a
 * new window, and the last window is logged at shutdown. The histogram's timer runs in libuv, not
 * in JavaScript: nothing of it is on the path that reads events.
 */
import {
  constants,
  type IntervalHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
} from 'node:perf_hooks';

/** Environment variable that turns the histogram on (`1`). @default off */
export const LOOP_STATS_ENV = 'AGENTMAIL_LOOP_STATS';

/** Sampling interval of the histogram, in ms. Every sample is that interval plus the delay. @default 1 */
export const LOOP_STATS_RESOLUTION_MS = 1;

/** Message of the log line carrying {@link LoopDelayStats} in the field `loop_delay`. */
export const LOOP_STATS_LOG_MSG = 'event loop delay';

/**
 * One window of the histogram, in ms. A sample is the time between two timer ticks, so an idle
 * loop shows about {@link LOOP_STATS_RESOLUTION_MS}; a 30 ms block shows about 31.
 */
export interface LoopDelayStats {
  min_ms: number;
  max_ms: number;
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  samples: number;
  /** Length of the window (since the previous report or the start), in ms. */
  window_ms: number;
  resolution_ms: number;
  /** Garbage collections in the window (perf_hooks `gc` entries): count, summed and longest pause, in ms. */
  gc_count: number;
  gc_total_ms: number;
  gc_max_ms: number;
  /** Kind of the longest pause: `minor` (scavenge), `major` (mark-compact), `incremental`, `weakcb`. */
  gc_max_kind: string;
  /**
   * The longest late tick of a {@link LOOP_STATS_PROBE_MS} ms interval timer in the window: how late
   * (ms) and when it fired (epoch ms), to line the block up with the log (e.g. `worker spawned`).
   */
  block_max_ms: number;
  block_max_at: number;
}

/** Period of the timer that timestamps the longest block, in ms. @default 5 */
export const LOOP_STATS_PROBE_MS = 5;

const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** `AGENTMAIL_LOOP_STATS=1` in `env`. */
export function loopStatsEnabled(env: NodeJS.ProcessEnv): boolean {
  return env[LOOP_STATS_ENV] === '1';
}

const ms = (ns: number): number => Math.round(ns / 1e4) / 100;

/** A running event-loop delay histogram; {@link take} reads and resets it. */
export class LoopDelayMonitor {
  readonly #histogram: IntervalHistogram;
  readonly #gcObserver: PerformanceObserver;
  #gc = { count: 0, totalMs: 0, maxMs: 0, maxKind: '' };
  #block = { maxMs: 0, at: 0 };
  #lastTick = performance.now();
  readonly #probe: NodeJS.Timeout;
  #since = performance.now();

  constructor() {
    this.#histogram = monitorEventLoopDelay({ resolution: LOOP_STATS_RESOLUTION_MS });
    this.#histogram.enable();
    this.#gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const gc = this.#gc;
        gc.count += 1;
        gc.totalMs += entry.duration;
        if (entry.duration > gc.maxMs) {
          gc.maxMs = entry.duration;
          gc.maxKind = GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
        }
      }
    });
    this.#gcObserver.observe({ entryTypes: ['gc'] });
    this.#probe = setInterval(() => {
      const now = performance.now();
      const late = now - this.#lastTick - LOOP_STATS_PROBE_MS;
      this.#lastTick = now;
      if (late > this.#block.maxMs) this.#block = { maxMs: late, at: Date.now() };
    }, LOOP_STATS_PROBE_MS);
    this.#probe.unref();
  }

  /** The figures since the previous `take` (or the start), then a fresh window. */
  take(): LoopDelayStats {
    const h = this.#histogram;
    const now = performance.now();
    const empty = h.count === 0;
    const stats: LoopDelayStats = {
      min_ms: empty ? 0 : ms(h.min),
      max_ms: empty ? 0 : ms(h.max),
      mean_ms: empty ? 0 : ms(h.mean),
      p50_ms: empty ? 0 : ms(h.percentile(50)),
      p99_ms: empty ? 0 : ms(h.percentile(99)),
      samples: h.count,
      window_ms: Math.round(now - this.#since),
      resolution_ms: LOOP_STATS_RESOLUTION_MS,
      gc_count: this.#gc.count,
      gc_total_ms: Math.round(this.#gc.totalMs * 100) / 100,
      gc_max_ms: Math.round(this.#gc.maxMs * 100) / 100,
      gc_max_kind: this.#gc.maxKind,
      block_max_ms: Math.round(this.#block.maxMs * 100) / 100,
      block_max_at: this.#block.at,
    };
    this.#block = { maxMs: 0, at: 0 };
    this.#gc = { count: 0, totalMs: 0, maxMs: 0, maxKind: '' };
    h.reset();
    this.#since = now;
    return stats;
  }

  stop(): void {
    this.#histogram.disable();
    this.#gcObserver.disconnect();
    clearInterval(this.#probe);
  }
}
