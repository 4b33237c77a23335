/**
 * `pnpm demo` as a person runs it: its entry (demo/demo.ts bundled by demo/tsup.config.ts, exactly
 * what the `demo` script runs) as a child process. Every process it starts inherits a unique
 * DEMO_TRACE_TAG, so "nothing left running" is checked over all of /proc, workers and tool
 * processes included, not only over the pids the demo reports.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SECTIONS, DEMO_TRACE_ENV } from '../demo/sections.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO_JS = join(ROOT, 'node_modules', '.cache', 'agentmail-demo', 'demo.js');
const TSUP_CLI = join(ROOT, '..', '..', 'node_modules', 'tsup', 'dist', 'cli-default.js');

/** One demo run may take this long, in ms (about 10 s on a quiet machine, over 60 s on a loaded one). */
const RUN_TIMEOUT_MS = 170_000;

/** Pids of live processes whose environment carries `tag` (zombies have none and are not counted). */
function processesTagged(tag: string): number[] {
  const needle = `${DEMO_TRACE_ENV}=${tag}`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(needle))
        found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

interface Run {
  child: ChildProcess;
  tag: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr contains `text`. */
  waitForStderr: (text: string) => Promise<void>;
}

function startDemo(): Run {
  const tag = randomUUID();
  const env: NodeJS.ProcessEnv = {};
  // A developer's AGENTMAIL_REPLY_* must not switch the test to a real provider.
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('AGENTMAIL_') && value !== undefined) env[key] = value;
  env[DEMO_TRACE_ENV] = tag;
  const child = spawn(process.execPath, [DEMO_JS], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<{ text: string; done: () => void }> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
    for (const w of waiters.filter((w) => err.includes(w.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.done();
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return {
    child,
    tag,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStderr: (text) =>
      err.includes(text)
        ? Promise.resolve()
        : new Promise<void>((done, fail) => {
            waiters.push({ text, done });
            void exited.then(() =>
              fail(new Error(`the demo exited before printing "${text}":\n${out}\n${err}`)),
            );
          }),
  };
}

/** Waits for the exit, killing the demo (SIGKILL) if it overruns. */
async function finished(run: Run): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = setTimeout(() => run.child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  try {
    return await run.exited;
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(() => {
  const built = spawnSync(process.execPath, [TSUP_CLI, '--config', 'demo/tsup.config.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(built.status, `tsup --config demo/tsup.config.ts failed:\n${built.stdout}${built.stderr}`).toBe(0);
}, 60_000);

/**
 * A whole demo run: bundle, Gateway, bridge, a pi worker, a turn with an approval. Every wait in
 * it is on the demo's own output or exit (no sleeps); on a machine loaded by other suites a run
 * took over 60 s (a pi worker alone took 28 s to load), so the budget covers that.
 */
const DEMO_RUN_MS = 180_000;

describe('pnpm demo', () => {
  it(
    'mails pi a task, approves its shell command from the agentmail CLI, prints thread, permission exchange and timings, exits 0 and leaves no process',
    async () => {
      const run = startDemo();
      const exit = await finished(run);
      const out = run.stdout();
      expect(exit, `the demo failed:\n${out}\n${run.stderr()}`).toEqual({ code: 0, signal: null });

      const thread = out.indexOf(DEMO_SECTIONS.thread);
      const permission = out.indexOf(DEMO_SECTIONS.permission);
      const timings = out.indexOf(DEMO_SECTIONS.timings);
      expect(thread, 'sections in order: thread, permission exchange, timings').toBeGreaterThan(-1);
      expect(permission).toBeGreaterThan(thread);
      expect(timings).toBeGreaterThan(permission);

      // The thread as `agentmail thread` prints it: the task, the permission mail, the reply.
      const threadText = out.slice(thread, permission);
      expect(threadText).toMatch(/Thread pi-how-long-is-notes-txt \(s_\w+\): 3 mails/);
      expect(threadText).toContain('Subject:  How long is notes.txt?');
      expect(threadText).toContain('"command": "wc -l notes.txt"');
      expect(threadText).toContain('notes.txt has 4 lines');

      // Granted from the CLI: the pending approval listed, then approved by its id.
      const exchange = out.slice(permission, timings);
      const id = /^\$ agentmail approve (p_\w+)$/m.exec(exchange)?.[1];
      expect(id, 'agentmail approve <id> was run').toBeDefined();
      expect(exchange).toMatch(
        new RegExp(`^\\$ agentmail permissions\\n${id} {2}approval {2}from pi .*\\[pending\\]`, 'm'),
      );
      expect(exchange).toContain(`${id}: approve_once`);

      const timingText = out.slice(timings);
      for (const label of [
        'Gateway start',
        'bridge ready',
        'mail → first model request',
        'approval round trip',
        'mail → reply',
      ])
        expect(timingText).toMatch(new RegExp(`^${label}.* \\d+ ms$`, 'm'));
      expect(timingText).toMatch(/All processes stopped: \d+ process groups started, none left running\./);

      expect(processesTagged(run.tag), 'processes started by the demo still running').toEqual([]);
    },
    DEMO_RUN_MS,
  );

  it(
    'ctrl-C in the middle of a turn stops every process it started',
    async () => {
      const run = startDemo();
      // The worker's shell call waits for the approval: Gateway, bridge and a pi worker are running.
      await run.waitForStderr('asked by mail');
      expect(processesTagged(run.tag).length, 'the stack runs before ctrl-C').toBeGreaterThanOrEqual(3);
      run.child.kill('SIGINT');
      const exit = await finished(run);
      expect(exit.code, run.stderr()).toBe(130);
      expect(run.stderr()).toContain('SIGINT: stopping every process the demo started');
      expect(processesTagged(run.tag), 'processes left after ctrl-C').toEqual([]);
    },
    DEMO_RUN_MS,
  );
});
