/**
 * The summary the whole test run prints at its end (a vitest reporter beside the default one): the
 * conformance matrix (scenarios × hosts, from the `meta.conformance` every conformance test carries)
 * and the five slowest test files. With `AGENTMAIL_TEST_SUMMARY_FILE` set it also writes the
 * figures as JSON there (`.ci/run` prints its closing line from it).
 *
 * Kept free of the rest of the kit (only vitest types): the root vitest config loads it.
 */
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { experimental_getRunnerTask } from 'vitest/node';
import type {} from './conformance/meta.js';
import { durationKey, readTestDurations, TEST_DURATIONS_FILE } from './sequencer.js';

/** Environment variable naming the JSON file the summary is written to. */
export const TEST_SUMMARY_FILE_ENV = 'AGENTMAIL_TEST_SUMMARY_FILE';

/**
 * Set to `1` to write each file's wall time of this run into `.ci/test-durations.json` (merged
 * with the figures already there), which orders the next runs longest first (sequencer.ts).
 */
export const TEST_DURATIONS_WRITE_ENV = 'AGENTMAIL_TEST_DURATIONS_WRITE';

/** One cell of the matrix. */
export type MatrixCell = 'passed' | 'failed' | 'skipped';

/** The figures of one run, as written to {@link TEST_SUMMARY_FILE_ENV}. */
export interface TestRunSummary {
  /** Wall time of the vitest run, in ms. */
  durationMs: number;
  /** The slowest files, slowest first: `project path`, wall time in ms. */
  slowest: Array<{ file: string; ms: number }>;
  /** Conformance cells by state. */
  matrix: Record<MatrixCell, number>;
  /** Why the skipped cells are skipped: `host: scenario` → reason. */
  skipped: Record<string, string>;
  /** Cells not run and not skipped for a documented reason (filtered out by -t or a file filter). */
  notRun: number;
}

/** How many of the slowest files are named. @default 5 */
export const SLOWEST_FILES = 5;

const SYMBOL: Record<MatrixCell, string> = { passed: 'ok', failed: 'FAIL', skipped: 'skip' };

/** Build the matrix rows (scenario ids in the scenario list's order) × columns (hosts by name). */
function matrixOf(modules: ReadonlyArray<TestModule>): {
  scenarios: string[];
  hosts: string[];
  cells: Map<string, MatrixCell>;
  reasons: Map<string, string>;
  notRun: number;
} {
  let notRun = 0;
  const order = new Map<string, number>();
  const hosts: string[] = [];
  const cells = new Map<string, MatrixCell>();
  const reasons = new Map<string, string>();
  for (const module of modules)
    for (const test of module.children.allTests()) {
      const c = test.meta().conformance;
      if (c === undefined) continue;
      order.set(c.scenario, c.order);
      if (!hosts.includes(c.host)) hosts.push(c.host);
      const state = test.result().state;
      // Skipped without a documented reason: filtered out (-t, a file filter) or never reached.
      if (state !== 'passed' && state !== 'failed' && c.skipped === undefined) {
        notRun += 1;
        continue;
      }
      const cell: MatrixCell = state === 'passed' ? 'passed' : state === 'failed' ? 'failed' : 'skipped';
      cells.set(`${c.host}\u0000${c.scenario}`, cell);
      if (cell === 'skipped') reasons.set(`${c.host}: ${c.scenario}`, c.skipped ?? '');
    }
  const scenarios = [...order.keys()].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  return { scenarios, hosts: hosts.sort(), cells, reasons, notRun };
}

/** Wall time of a test file, in ms (tests of a file may overlap: not their sum). */
function fileMs(module: TestModule): number {
  return experimental_getRunnerTask(module).result?.duration ?? module.diagnostic().duration;
}

/** The reporter: add it after `'default'` in the root vitest config's `reporters`. */
export class SummaryReporter implements Reporter {
  #startedAt = Date.now();
  #root = process.cwd();

  #filtered = false;

  onInit(vitest: { config: { root: string; testNamePattern?: RegExp | string | undefined } }): void {
    this.#root = vitest.config.root;
    this.#filtered = vitest.config.testNamePattern !== undefined;
  }

  onTestRunStart(): void {
    this.#startedAt = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const { scenarios, hosts, cells, reasons, notRun } = matrixOf(modules);
    const out: string[] = [];
    const counts: Record<MatrixCell, number> = { passed: 0, failed: 0, skipped: 0 };
    for (const cell of cells.values()) counts[cell] += 1;
    if (scenarios.length > 0) {
      const width = Math.max(...scenarios.map((s) => s.length), 'scenario'.length);
      const cols = hosts.map((h) => Math.max(h.length, 4));
      out.push('', 'Conformance matrix (scenarios × hosts)');
      out.push(`  ${'scenario'.padEnd(width)}  ${hosts.map((h, i) => h.padEnd(cols[i] ?? 4)).join('  ')}`);
      for (const s of scenarios) {
        const row = hosts.map((h, i) => {
          const cell = cells.get(`${h}\u0000${s}`);
          return (cell === undefined ? '-' : SYMBOL[cell]).padEnd(cols[i] ?? 4);
        });
        out.push(`  ${s.padEnd(width)}  ${row.join('  ')}`);
      }
      out.push(
        `  ${counts.passed} of ${cells.size} cells pass, ${counts.skipped} skipped, ${counts.failed} failed${
          notRun > 0 ? `; ${notRun} not run (filtered out: -)` : ''
        }`,
      );
      for (const [where, why] of reasons) out.push(`  skipped ${where}: ${why}`);
    }
    const slowest = modules
      .map((m) => ({
        file: `${m.project.name} ${relative(m.project.config.root, m.moduleId)}`,
        ms: fileMs(m),
      }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST_FILES);
    const durationMs = Date.now() - this.#startedAt;
    out.push('', `Tests took ${(durationMs / 1000).toFixed(0)} s${slowestText(slowest)}`, '');
    process.stdout.write(`${out.join('\n')}\n`);
    // The summary first: `.ci/run` reads it for its closing line whatever happens to the durations.
    const file = process.env[TEST_SUMMARY_FILE_ENV];
    if (file) {
      const summary: TestRunSummary = {
        durationMs,
        slowest,
        matrix: counts,
        skipped: Object.fromEntries(reasons),
        notRun,
      };
      try {
        writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
      } catch (error) {
        process.stderr.write(
          `${TEST_SUMMARY_FILE_ENV}=${file}: the run's summary could not be written (${errorText(error)}); set it to a file in an existing directory, or unset it\n`,
        );
        process.exitCode = 1;
      }
    }
    if (process.env[TEST_DURATIONS_WRITE_ENV] === '1') this.#writeDurations(modules);
  }

  #writeDurations(modules: ReadonlyArray<TestModule>): void {
    const refuse = (why: string): void => {
      process.stderr.write(`${TEST_DURATIONS_WRITE_ENV}=1: ${TEST_DURATIONS_FILE} left as it was: ${why}\n`);
      process.exitCode = 1;
    };
    // A filtered run's times are not the files' times.
    if (this.#filtered) {
      refuse('the run was filtered by test name (-t); write the figures from a whole run');
      return;
    }
    const read = readTestDurations(this.#root);
    if (!read.ok) {
      refuse(read.problem);
      return;
    }
    const durations = { ...read.durations };
    for (const m of modules)
      if (m.state() === 'passed')
        durations[durationKey(m.project.name, this.#root, m.moduleId)] = Math.round(fileMs(m));
    const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
    try {
      writeFileSync(join(this.#root, TEST_DURATIONS_FILE), `${JSON.stringify(sorted, null, 2)}\n`);
    } catch (error) {
      refuse(errorText(error));
    }
  }
}

/** `; the 5 slowest files: a 12 s, …`, `; the file: a 3 s`, or nothing. */
function slowestText(slowest: ReadonlyArray<{ file: string; ms: number }>): string {
  const list = slowest.map((f) => `${f.file} ${(f.ms / 1000).toFixed(0)} s`).join(', ');
  if (slowest.length === 0) return '';
  return slowest.length === 1 ? `; the file: ${list}` : `; the ${slowest.length} slowest files: ${list}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
