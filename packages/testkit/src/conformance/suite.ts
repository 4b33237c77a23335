/**
 * `conformanceSuite(adapter)`: registers every conformance scenario as a vitest test, so a bridge
 * package's test file is one line. One Gateway serves the file; each scenario has its own person
 * (and peer agents), and runs where its {@link ConformanceScenario.host} says: beside the others on
 * one running bridge, in turn on a second bridge it may restart, or on a bridge (and Gateway) of
 * its own. The tests run concurrently (at most {@link CONFORMANCE_MAX_CONCURRENCY} at a time).
 */
import { afterAll, describe, it, vi } from 'vitest';
import type { HostHarness } from '../harness/bridge.js';
import { type Stack, type StackOptions, startStack } from '../harness/stack.js';
import { startTestbed, type Testbed } from '../harness/testbed.js';
import type { ConformanceMeta } from './meta.js';
import { CONFORMANCE_SCENARIOS, type ConformanceScenario } from './scenarios.js';
import { CONFORMANCE_MODELS, TITLE_SCENARIO } from './script.js';

/** Time one conformance test may take, stack start and close included (a restart scenario starts the bridge twice), in ms. @default 240_000 */
export const CONFORMANCE_TEST_TIMEOUT_MS = 240_000;

/**
 * Conformance tests of one file running at the same time (vitest's `maxConcurrency` for the file).
 * Most of a scenario is waiting on the host; more than this only queues on two cores (and stretches
 * every wait of the file). @default 3
 */
export const CONFORMANCE_MAX_CONCURRENCY = 3;

/** Options of {@link conformanceSuite}. */
export interface ConformanceOptions {
  /** Scenarios to skip, by id, each with the reason (shown in the test name). */
  skip?: Readonly<Record<string, string>>;
  /** Run only these scenario ids. @default every scenario */
  only?: readonly string[];
  /** @default CONFORMANCE_TEST_TIMEOUT_MS */
  testTimeoutMs?: number;
  /** Base of the bridge agents' names (each bridge's gets a unique suffix). @default adapter.platform */
  agentName?: string;
  /** Name of the host in test names and the conformance matrix, e.g. `dsh (web profile)`. @default adapter.platform */
  label?: string;
  /** @default CONFORMANCE_MAX_CONCURRENCY */
  maxConcurrency?: number;
}

/**
 * The stack a conformance scenario runs on: the agent registered with the adapter's platform, the
 * conformance models (working first), a title-request answer as the first model scenario. No
 * bridge runs yet. On `testbed` when given (else a Gateway of its own).
 */
export function startConformanceStack(
  adapter: HostHarness,
  options: Pick<ConformanceOptions, 'agentName'> & Pick<StackOptions, 'signal' | 'testbed'> = {},
): Promise<Stack> {
  return startStack({
    agentName: options.agentName ?? adapter.platform,
    platform: adapter.platform,
    models: [CONFORMANCE_MODELS.working, CONFORMANCE_MODELS.failingA, CONFORMANCE_MODELS.failingB],
    scenarios: [TITLE_SCENARIO],
    ...(adapter.modelProvider === undefined ? {} : { modelProvider: adapter.modelProvider }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.testbed === undefined ? {} : { testbed: options.testbed }),
  });
}

/**
 * Runs one scenario on a fresh conformance stack of its own and always closes it (also when
 * `signal` aborts, e.g. on a test timeout).
 */
export async function runConformanceScenario(
  scenario: ConformanceScenario,
  adapter: HostHarness,
  options: Pick<ConformanceOptions, 'agentName'> & Pick<StackOptions, 'signal' | 'testbed'> = {},
): Promise<void> {
  const stack = await startConformanceStack(adapter, options);
  try {
    await scenario.run(stack, adapter);
  } finally {
    await stack.close();
  }
}

/**
 * One Gateway for the calling test file: the returned function starts it on first use (later
 * calls share it) and an `afterAll` closes it. Give it to stacks of the file's tests
 * (`startConformanceStack(adapter, { testbed: await testbed() })`) that do not need a Gateway of
 * their own (one they stop, restart or configure with `gatewayArgs`).
 * @example
 * const testbed = fileTestbed();
 * it('…', async ({ signal }) => {
 *   const stack = await startConformanceStack(piAdapter, { signal, testbed: await testbed() });
 * });
 */
export function fileTestbed(): () => Promise<Testbed> {
  let started: Promise<Testbed> | undefined;
  afterAll(async () => {
    const testbed = started;
    started = undefined;
    await (await testbed?.catch(() => undefined))?.close();
  });
  return () => {
    started ??= startTestbed();
    return started;
  };
}

/** The shared parts of one file's run: the Gateway and the two bridges scenarios share. Made on first use. */
class ConformanceRun {
  readonly #adapter: HostHarness;
  readonly #agentName: string | undefined;
  #testbed: Promise<Testbed> | undefined;
  readonly #hosts = new Map<'shared' | 'serial', Promise<Stack>>();

  constructor(adapter: HostHarness, agentName: string | undefined) {
    this.#adapter = adapter;
    this.#agentName = agentName;
  }

  testbed(): Promise<Testbed> {
    this.#testbed ??= startTestbed();
    return this.#testbed;
  }

  /** The stack a scenario runs on (close it when the scenario ends). */
  async stackFor(scenario: ConformanceScenario, signal: AbortSignal): Promise<Stack> {
    const base = this.#agentName === undefined ? {} : { agentName: this.#agentName };
    if (scenario.host === 'own-gateway') return startConformanceStack(this.#adapter, { ...base, signal });
    const testbed = await this.testbed();
    if (scenario.host === 'own') return startConformanceStack(this.#adapter, { ...base, signal, testbed });
    const kind = scenario.host;
    let host = this.#hosts.get(kind);
    if (host === undefined) {
      host = startConformanceStack(this.#adapter, { ...base, testbed });
      this.#hosts.set(kind, host);
    }
    const owner = await host;
    if (kind === 'serial' && scenario.freshStart === true) await owner.stopBridge();
    return owner.lane({ mode: kind === 'shared' ? 'shared' : 'exclusive', signal });
  }

  /** After a scenario on the serial bridge: a failed one, or one that changed the bridge, leaves none running. */
  async after(scenario: ConformanceScenario, failed: boolean): Promise<void> {
    if (scenario.host !== 'serial' || !(failed || scenario.changesBridge === true)) return;
    await (await this.#hosts.get('serial'))?.stopBridge();
  }

  async close(): Promise<void> {
    for (const host of this.#hosts.values()) await (await host.catch(() => undefined))?.close();
    this.#hosts.clear();
    await (await this.#testbed?.catch(() => undefined))?.close();
    this.#testbed = undefined;
  }
}

/** Start order: the longest waits first (own bridges, the serial chain), the quick shared ones after. */
const START_ORDER: Readonly<Record<ConformanceScenario['host'], number>> = {
  own: 0,
  serial: 1,
  shared: 2,
  'own-gateway': 3,
};

/**
 * Registers the conformance scenarios for `adapter` as one vitest `describe` with one test per
 * scenario (the serial ones in a nested `describe`, run in turn). One Gateway child process serves
 * the file; each scenario gets its own person and runs on the bridge its `host` names (see
 * {@link ConformanceScenario.host}). Sets the file's `maxConcurrency`.
 * @example
 * // packages/bridge-pi/test/conformance.test.ts
 * conformanceSuite(piAdapter);
 */
export function conformanceSuite(adapter: HostHarness, options: ConformanceOptions = {}): void {
  const timeout = options.testTimeoutMs ?? CONFORMANCE_TEST_TIMEOUT_MS;
  const label = options.label ?? adapter.platform;
  vi.setConfig({ maxConcurrency: options.maxConcurrency ?? CONFORMANCE_MAX_CONCURRENCY });
  const run = new ConformanceRun(adapter, options.agentName);
  const picked = CONFORMANCE_SCENARIOS.filter(
    (s) => options.only === undefined || options.only.includes(s.id),
  );
  const ordered = [...picked].sort((a, b) => START_ORDER[a.host] - START_ORDER[b.host]);
  const serial = ordered.filter((s) => s.host === 'serial').sort((a, b) => rank(a) - rank(b));

  const register = (scenario: ConformanceScenario, test: typeof it.concurrent): void => {
    const name = `${scenario.id}: ${scenario.title} (${scenario.rules.join(', ')})`;
    const skipped = options.skip?.[scenario.id] ?? scenario.unsupportedBy?.(adapter);
    const meta: ConformanceMeta = {
      conformance: {
        scenario: scenario.id,
        order: CONFORMANCE_SCENARIOS.indexOf(scenario),
        host: label,
        ...(skipped === undefined ? {} : { skipped }),
      },
    };
    if (skipped !== undefined) {
      it.skip(`${name} — skipped: ${skipped}`, { meta }, () => {});
      return;
    }
    test(name, { timeout, meta }, async ({ signal }) => {
      // The test's signal aborts on a timeout: the scenario's stack is closed then too.
      const stack = await run.stackFor(scenario, signal);
      let failed = true;
      try {
        await scenario.run(stack, adapter);
        failed = false;
      } finally {
        await stack.close();
        await run.after(scenario, failed);
      }
    });
  };

  describe(`AgentMail bridge conformance: ${label}`, () => {
    afterAll(() => run.close());
    let serialRegistered = false;
    for (const scenario of ordered) {
      if (scenario.host !== 'serial') {
        register(scenario, it.concurrent);
        continue;
      }
      if (serialRegistered) continue;
      serialRegistered = true;
      describe.concurrent('one bridge in turn (restarts, cut streams)', () => {
        for (const s of serial) register(s, it.sequential);
      });
    }
  });
}

/** Serial order: the ones that need a fresh start first, the ones that change the bridge last. */
function rank(scenario: ConformanceScenario): number {
  return scenario.freshStart === true ? 0 : scenario.changesBridge === true ? 2 : 1;
}
