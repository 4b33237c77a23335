/**
 * The doctor's answer and its tools: one line per check (ok / warn / fail with its fix) in the
 * person's locale, and the external probes it runs with a time limit.
 */
import { execFile } from 'node:child_process';
import { formatText, type Locale, type TextKey, type TextParams } from '@agentmail/shared-policy';

/** The Node.js release every part needs (`engines.node`). */
export const NODE_MIN = [22, 19] as const;
/** Time one external probe (`--version`, `systemd-analyze verify`, a Gateway call) may take, in ms. */
export const PROBE_TIMEOUT_MS = 15_000;

/** One line of the doctor's answer. */
export interface DoctorCheck {
  /** What was checked: `node`, `gateway`, `token`, or a service (`pi`, …). */
  area: string;
  /** Stable id of the check within its area (`key`, `online`, `plugin`, …). */
  check: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  /** What to do (a command), for warn and fail. */
  fix?: string;
}

/**
 * Run one external probe to its end, killed after `timeoutMs`; never rejects. `timedOut` tells a
 * probe stopped at its limit from one that failed (a slow host is not a wrong one).
 */
export function run(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number = PROBE_TIMEOUT_MS,
): Promise<{ ok: boolean; out: string; missing: boolean; timedOut: boolean }> {
  return new Promise((resolve) => {
    execFile(bin, [...args], { env, timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({
        ok: err === null,
        out: `${stdout}${stderr}`.trim(),
        missing: (err as NodeJS.ErrnoException | null)?.code === 'ENOENT',
        // execFile kills a probe at its timeout: `killed` with no exit code of its own.
        timedOut: err !== null && err.killed === true && typeof err.code !== 'number',
      }),
    );
  });
}

/** The lines of one doctor run, worded in its locale. */
export class Report {
  readonly checks: DoctorCheck[] = [];
  constructor(readonly locale: Locale) {}
  t(key: TextKey, params: TextParams = {}): string {
    return formatText(key, params, this.locale);
  }
  add(
    area: string,
    check: string,
    status: DoctorCheck['status'],
    key: TextKey,
    params: TextParams = {},
    fix?: string,
  ): void {
    this.checks.push({
      area,
      check,
      status,
      message: this.t(key, params),
      ...(fix === undefined ? {} : { fix }),
    });
  }
}
