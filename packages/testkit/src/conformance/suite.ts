/**
 * `conformanceSuite(adapter)`: registers every conformance scenario as a vitest test, each on a
 * fresh stack that is closed when the test ends (also when it fails), so a bridge package's test
 * file is one line.
 */
import { describe, it } from 'vitest';
import type { BridgeAdapter } from '../harness/bridge.js';
import { type Stack, type StackOptions, startStack } from '../harness/stack.js';
import { CONFORMANCE_SCENARIOS, type ConformanceScenario } from './scenarios.js';
import { CONFORMANCE_MODELS, TITLE_SCENARIO } from './script.js';

/** Time one conformance test may take, stack start and close included (a restart scenario starts the bridge twice), in ms. @default 240_000 */
export const CONFORMANCE_TEST_TIMEOUT_MS = 240_000;

/** Options of {@link conformanceSuite}. */
export interface ConformanceOptions {
  /** Scenarios to skip, by id, each with the reason (shown in the test name). */
  skip?: Readonly<Record<string, string>>;
  /** Run only these scenario ids. @default every scenario */
  only?: readonly string[];
  /** @default CONFORMANCE_TEST_TIMEOUT_MS */
  testTimeoutMs?: number;
  /** Name of the bridge's agent. @default adapter.platform */
  agentName?: string;
}

/**
 * The stack a conformance scenario runs on: the agent registered with the adapter's platform, the
 * conformance models (working first), a title-request answer as the first model scenario. No
 * bridge runs yet.
 */
export function startConformanceStack(
  adapter: BridgeAdapter,
  options: Pick<ConformanceOptions, 'agentName'> & Pick<StackOptions, 'signal'> = {},
): Promise<Stack> {
  return startStack({
    agentName: options.agentName ?? adapter.platform,
    platform: adapter.platform,
    models: [CONFORMANCE_MODELS.working, CONFORMANCE_MODELS.failingA, CONFORMANCE_MODELS.failingB],
    scenarios: [TITLE_SCENARIO],
    ...(adapter.modelProvider === undefined ? {} : { modelProvider: adapter.modelProvider }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

/**
 * Runs one scenario on a fresh conformance stack and always closes it (also when `signal` aborts,
 * e.g. on a test timeout).
 */
export async function runConformanceScenario(
  scenario: ConformanceScenario,
  adapter: BridgeAdapter,
  options: Pick<ConformanceOptions, 'agentName'> & Pick<StackOptions, 'signal'> = {},
): Promise<void> {
  const stack = await startConformanceStack(adapter, options);
  try {
    await scenario.run(stack, adapter);
  } finally {
    await stack.close();
  }
}

/**
 * Registers the conformance scenarios for `adapter` as one vitest `describe` with one `it` per
 * scenario. Each test starts a fresh stack (Gateway child process, scripted model, proxy, person)
 * and closes it when it ends, pass or fail.
 * @example
 * // packages/bridge-pi/test/conformance.test.ts
 * conformanceSuite(piAdapter);
 */
export function conformanceSuite(adapter: BridgeAdapter, options: ConformanceOptions = {}): void {
  const timeout = options.testTimeoutMs ?? CONFORMANCE_TEST_TIMEOUT_MS;
  describe(`AgentMail bridge conformance: ${adapter.platform}`, () => {
    for (const scenario of CONFORMANCE_SCENARIOS) {
      if (options.only !== undefined && !options.only.includes(scenario.id)) continue;
      const name = `${scenario.id}: ${scenario.title} (${scenario.rules.join(', ')})`;
      const skip = options.skip?.[scenario.id] ?? scenario.unsupportedBy?.(adapter);
      if (skip !== undefined) {
        it.skip(`${name} — skipped: ${skip}`, () => {});
        continue;
      }
      it(
        name,
        async ({ signal }) => {
          // The test's signal aborts on a timeout: the stack is closed then too.
          await runConformanceScenario(scenario, adapter, {
            signal,
            ...(options.agentName === undefined ? {} : { agentName: options.agentName }),
          });
        },
        timeout,
      );
    }
  });
}
