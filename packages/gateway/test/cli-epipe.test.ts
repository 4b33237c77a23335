/**
 * The `agentmail` CLI as a real child process (bundled by tsup, helpers/cli-build.ts) whose stdout
 * reader goes away before it writes — what `agentmail … | head -c 10` or `| grep -q` does once it
 * has enough. The CLI must end quietly: its own exit code (0), no EPIPE stack trace.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from './helpers/cli-build.js';
import { CHILD_TIMEOUT_MS, cleanEnv, PROCESS_TEST_TIMEOUT_MS } from './helpers/processes.js';

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
let tmp = '';
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  const built = await buildCli('cli-epipe');
  mainJs = built.mainJs;
  removeBuild = built.remove;
  tmp = await mkdtemp(join(tmpdir(), 'agentmail-epipe-'));
  env = cleanEnv({ HOME: join(tmp, 'home'), AGENTMAIL_CONFIG: join(tmp, 'config.json') });
}, 60_000);

afterAll(async () => {
  await removeBuild();
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

/** Run the CLI with its stdout reader closed before the CLI writes; collect stderr and the exit. */
function runWithClosedStdout(
  args: readonly string[],
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [mainJs, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    // The reader is gone (head/grep exited): the CLI's first stdout write hits EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`agentmail ${args.join(' ')} did not finish; stderr: ${stderr}`));
    }, CHILD_TIMEOUT_MS);
    child.once('error', fail);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stderr });
    });
  });
}

describe('agentmail with a closed stdout (| head -c 10, | grep -q)', () => {
  it('ends quietly: exit 0, no EPIPE stack on stderr', async () => {
    const result = await runWithClosedStdout(['--help']);
    expect(result.stderr).not.toMatch(/EPIPE|Error|at /);
    expect(result).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('a failing command keeps its own exit code and its message on the open stderr', async () => {
    const result = await runWithClosedStdout(['no-such-command']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no-such-command|unknown command/i);
    expect(result.stderr).not.toMatch(/EPIPE/);
  });
});
