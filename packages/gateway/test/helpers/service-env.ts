/**
 * Helpers of the deploy tests: a temp home with its own XDG directories, the in-process CLI on
 * that environment, and `systemd-analyze verify` (it parses units without a running systemd; a
 * user unit needs an XDG_RUNTIME_DIR, here a temp one).
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type CrashReport, spoolReport } from '../../src/cli/crash-report.js';
import type { CliIo } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/program.js';
import { tempDir } from '../helpers.js';
import { cleanEnv } from './processes.js';

/** A temp home: HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR (0700), no AGENTMAIL_* of the shell. */
export function tempHome(extra: Readonly<Record<string, string>> = {}): {
  home: string;
  env: NodeJS.ProcessEnv;
} {
  const home = tempDir('agentmail-home-');
  const runtime = join(home, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  return {
    home,
    env: cleanEnv({
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_RUNTIME_DIR: runtime,
      AGENTMAIL_CONFIG: join(home, 'no-cli-config.json'),
      ...extra,
    }),
  };
}

/** Output and exit code of one in-process CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the `agentmail` CLI in this process with `env`. */
export async function cliRun(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    env,
    stdin: async function* () {},
  };
  const code = await runCli(args, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** `systemd-analyze verify --man=no [--user]` of a unit file: exit status and everything it printed. */
export function verifyUnit(
  file: string,
  scope: 'user' | 'system',
  env: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; output: string }> {
  const args = ['verify', '--man=no', ...(scope === 'user' ? ['--user'] : []), file];
  return new Promise((resolve) => {
    execFile('systemd-analyze', args, { env, encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ ok: error === null, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

/** Spool a crash report of the pi unit (as `service report` does with the Gateway down): its file. */
export function spoolPiReport(stateDir: string, fields: Partial<CrashReport> = {}): Promise<string> {
  return spoolReport(stateDir, {
    id: 'agentmail-pi.service:x',
    service: 'pi',
    unit: 'agentmail-pi.service',
    host: 'h',
    result: 'oom-kill',
    exit_code: 'killed',
    exit_status: 'KILL',
    at: '2026-12-01T10:00:00.000Z',
    scope: 'user',
    log_lines: [],
    ...fields,
  });
}
