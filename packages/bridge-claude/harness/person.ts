/**
 * A person's own `claude` (not the bridge's): the real binary with the built plugin, their own
 * HOME, no turn RPC in its environment — as a person runs Claude Code next to the bridge. Tests use
 * it for sessions to adopt and for the plugin outside mail turns. Also a vitest stack per test.
 */
import { mkdir } from 'node:fs/promises';
import type { Stack } from '@agentmail/testkit';
import { fileTestbed, startConformanceStack } from '@agentmail/testkit/conformance';
import { afterAll, afterEach, beforeEach, type TestContext } from 'vitest';
import { type ClaudeRunReport, runClaude } from '../src/claude-run.js';
import type { StreamLine } from '../src/stream-json.js';
import { RUN_ENV } from '../src/turns.js';
import { claudeAdapter, removeBundle } from './claude-adapter.js';
import { claudeBinary } from './claude-bin.js';

/** What {@link personClaude} runs. */
export interface PersonRun {
  stack: Stack;
  home: string;
  tmp: string;
  cwd: string;
  /** Arguments after `-p --output-format stream-json --verbose --include-hook-events`, before `-- <prompt>`. */
  args: readonly string[];
  prompt: string;
  /** Added to the environment (e.g. the person's AgentMail key for the standalone mail tools). */
  env?: NodeJS.ProcessEnv;
}

/** Run the person's `claude -p` against the stack's scripted model; the report and its hook responses. */
export async function personClaude(
  run: PersonRun,
): Promise<{ report: ClaudeRunReport; hooks: StreamLine[] }> {
  await mkdir(run.tmp, { recursive: true });
  const hooks: StreamLine[] = [];
  const report = await runClaude({
    bin: claudeBinary(),
    args: [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--include-hook-events',
      ...run.args,
      '--',
      run.prompt,
    ],
    cwd: run.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: run.home,
      TMPDIR: run.tmp,
      ANTHROPIC_BASE_URL: run.stack.model.url,
      ANTHROPIC_API_KEY: 'test-key',
      CLAUDE_CODE_MAX_RETRIES: '0',
      AGENTMAIL_NODE: process.execPath,
      ...RUN_ENV,
      ...run.env,
    },
    onLine: (l) => {
      if (l.kind === 'hook_response') hooks.push(l);
    },
  });
  return { report, hooks };
}

/** A fresh conformance stack for each test of the file (closed after it), the bundle removed at the end. */
export function stackPerTest(): () => Stack {
  let stack: Stack | undefined;
  beforeEach(async () => {
    stack = await startConformanceStack(claudeAdapter);
  }, 90_000);
  afterEach(() => stack?.close());
  afterAll(removeBundle);
  return () => {
    if (!stack) throw new Error('no stack: call inside a test');
    return stack;
  };
}

/**
 * Stacks for tests that run concurrently: each test's own agent, person and bridge on the file's
 * one Gateway (started on first use), closed when the test finishes (also on a timeout: the test's
 * signal aborts the start). The bundle is removed at the end of the file.
 * @example
 * const stackFor = stacksOnOneGateway();
 * it.concurrent('…', async (context) => { const stack = await stackFor(context); … });
 */
export function stacksOnOneGateway(): (context: TestContext) => Promise<Stack> {
  const testbed = fileTestbed();
  afterAll(removeBundle);
  return async (context) => {
    const stack = await startConformanceStack(claudeAdapter, {
      signal: context.signal,
      testbed: await testbed(),
    });
    context.onTestFinished(() => stack.close());
    return stack;
  };
}
