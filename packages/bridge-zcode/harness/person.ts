/**
 * A person's own ZCode (not the bridge's): the stand-in run directly, headless, with the person's
 * HOME and environment and no turn RPC — as a person runs ZCode next to the bridge. Tests use it
 * for sessions to adopt and for the plugin outside mail turns. Also one stack per test file.
 */
import { type HostCliRunReport, runHostCli } from '@agentmail/host-tools/driver';
import type { Stack } from '@agentmail/testkit';
import { startConformanceStack } from '@agentmail/testkit/conformance';
import { afterAll, beforeAll } from 'vitest';
import { parseStreamLine, type StreamLine } from '../src/stream-json.js';
import { bundled, removeBundle, zcodeAdapter } from './zcode-adapter.js';

/** What {@link personZcode} runs. */
export interface PersonRun {
  /** The person's HOME (their `~/.zcode`). */
  home: string;
  cwd: string;
  prompt: string;
  /** `--mode` (the person's choice; the CLI's own default is yolo). */
  mode: string;
  /** More arguments, e.g. `--resume`. */
  args?: readonly string[];
  /** Added to the environment (their AgentMail connection, the stand-in's permission client). */
  env?: NodeJS.ProcessEnv;
}

/** What a person's run left: the report, its stream lines, and its session. */
export interface PersonRunResult {
  report: HostCliRunReport;
  lines: StreamLine[];
  sessionId: string | undefined;
}

/** Run the person's `zcode --prompt … --output-format stream-json`. */
export async function personZcode(run: PersonRun): Promise<PersonRunResult> {
  const { zcodeBin } = await bundled();
  const lines: StreamLine[] = [];
  const report = await runHostCli({
    bin: zcodeBin,
    args: [
      `--prompt=${run.prompt}`,
      '--output-format',
      'stream-json',
      '--mode',
      run.mode,
      '--cwd',
      run.cwd,
      ...(run.args ?? []),
    ],
    cwd: run.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: run.home, ...run.env },
    onLine: (l) => {
      const line = parseStreamLine(l);
      if (line) lines.push(line);
    },
  });
  const result = lines.find((l) => l.kind === 'result');
  return { report, lines, sessionId: result?.kind === 'result' ? result.line.sessionId : undefined };
}

/**
 * One conformance stack for the whole test file (started before its first test, closed after the
 * last, with the bundle): tests stop the bridge they started and use unique markers.
 */
export function stackPerFile(): () => Stack {
  let stack: Stack | undefined;
  beforeAll(async () => {
    [stack] = await Promise.all([startConformanceStack(zcodeAdapter), bundled()]);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await removeBundle();
  });
  return () => {
    if (!stack) throw new Error('no stack: call inside a test');
    return stack;
  };
}
