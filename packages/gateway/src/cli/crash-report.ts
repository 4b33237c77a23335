/**
 * Service failure report by mail (SPEC B-19). `agentmail service report` runs as the unit's
 * `ExecStopPost=`: systemd gives it `SERVICE_RESULT`, `EXIT_CODE`, `EXIT_STATUS` (and
 * `INVOCATION_ID`); on anything but `success` (a crash, OOM kill, watchdog, timeout, start limit)
 * it mails the report recipient — a normal stop or restart is `success` and sends nothing. When
 * the Gateway cannot take the mail the report is spooled in the state directory, and
 * `agentmail service flush` (`ExecStartPost=`) sends it once the Gateway answers, exactly once:
 * a bridge's report carries a relay key (G-32), and a spooled file is removed once it is sent.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { formatText, type Locale, resolveLocale, type TextKey } from '@agentmail/shared-policy';
import { GatewayClient, isTransient, readAgentKey } from '@agentmail/shared-policy/client';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-file.js';
import { CliError } from './errors.js';
import { bridges } from './service-hosts.js';
import { type ServiceName, unitName } from './service-platforms.js';

/** The platform a service's agent registers with (the Gateway's reporter: `agentmail`). */
function platformOf(service: string, env: NodeJS.ProcessEnv): string {
  try {
    return bridges(env).get(service)?.platform ?? 'agentmail';
  } catch {
    // A report must still go out when the checkout's descriptors cannot be read.
    return 'agentmail';
  }
}

/** Lines of the unit's journal put into a report. @default 30 */
export const REPORT_LOG_LINES = 30;
/** Longest log line kept in a report, in characters (longer ones are cut). */
export const REPORT_LOG_LINE_MAX_CHARS = 500;
/** Time the report may wait for the journal and for one send, in ms. */
export const REPORT_STEP_TIMEOUT_MS = 5_000;
/** Time `service flush` waits for a Gateway that is still starting, in ms. @default 20_000 */
export const FLUSH_WAIT_MS = 20_000;
/** Subdirectory of the state dir holding spooled reports (one JSON file each, 0600). */
export const SPOOL_DIR = 'crash-reports';

/** `SERVICE_RESULT` values systemd documents; every one but `success` is a failure worth a mail. */
export const SERVICE_RESULTS = [
  'success',
  'protocol',
  'timeout',
  'exit-code',
  'signal',
  'core-dump',
  'watchdog',
  'start-limit-hit',
  'resources',
  'oom-kill',
] as const;

/** A report as spooled and mailed. */
export const CrashReport = z.object({
  /** Stable id: the unit and its invocation (one report per invocation). */
  id: z.string().min(1),
  service: z.string(),
  unit: z.string(),
  host: z.string(),
  result: z.string(),
  exit_code: z.string(),
  exit_status: z.string(),
  /** ISO time the report was made. */
  at: z.string(),
  scope: z.enum(['user', 'system']),
  log_lines: z.array(z.string()),
});
export type CrashReport = z.infer<typeof CrashReport>;

/** What the report command was told. */
export interface ReportOptions {
  service: ServiceName;
  unit?: string | undefined;
  stateDir: string;
  scope: 'user' | 'system';
}

/** Outcome of one report or flush step, for the caller's output. */
export type ReportOutcome =
  | { status: 'not_a_failure'; result: string }
  | { status: 'sent'; id: string; to: string; duplicate: boolean }
  | { status: 'spooled'; id: string; file: string; error: string };

/** True when `SERVICE_RESULT` says the service failed (anything set but `success`). */
export function isFailure(result: string | undefined): result is string {
  return result !== undefined && result !== '' && result !== 'success';
}

/** The journal's last lines of the unit (journalctl, or `$AGENTMAIL_JOURNALCTL`); [] when there is none. */
export function lastLogLines(
  unit: string,
  scope: 'user' | 'system',
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const bin = env.AGENTMAIL_JOURNALCTL || 'journalctl';
  const args = [
    ...(scope === 'user' ? ['--user'] : []),
    '-u',
    unit,
    '-n',
    String(REPORT_LOG_LINES),
    '-o',
    'cat',
    '--no-pager',
  ];
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: REPORT_STEP_TIMEOUT_MS, encoding: 'utf8', env }, (err, stdout) => {
      if (err && stdout === '') return resolve([]);
      resolve(
        stdout
          .split('\n')
          .filter((l) => l !== '')
          .slice(-REPORT_LOG_LINES)
          .map((l) =>
            l.length > REPORT_LOG_LINE_MAX_CHARS ? `${l.slice(0, REPORT_LOG_LINE_MAX_CHARS)}…` : l,
          ),
      );
    });
  });
}

/** Build the report from systemd's variables. */
export async function buildReport(options: ReportOptions, env: NodeJS.ProcessEnv): Promise<CrashReport> {
  const unit = options.unit ?? unitName(options.service);
  const at = new Date().toISOString();
  return {
    id: `${unit}:${env.INVOCATION_ID || at}`,
    service: options.service,
    unit,
    host: hostname(),
    result: env.SERVICE_RESULT ?? '',
    exit_code: env.EXIT_CODE ?? '',
    exit_status: env.EXIT_STATUS ?? '',
    at,
    scope: options.scope,
    log_lines: await lastLogLines(unit, options.scope, env),
  };
}

function resultWords(result: string, locale: Locale): string {
  const known = (SERVICE_RESULTS as readonly string[]).includes(result);
  return formatText(
    (known ? `ops.crash.result.${result}` : 'ops.crash.result.other') as TextKey,
    { result },
    locale,
  );
}

/** The mail of a report, in the recipient's locale (`AGENTMAIL_LOCALE`). */
export function reportMail(report: CrashReport, locale: Locale): { subject: string; body: string } {
  const t = (key: TextKey, params: Record<string, string> = {}) => formatText(key, params, locale);
  const scopeFlag = report.scope === 'user' ? '--user ' : '';
  const lines = [
    t('ops.crash.intro', { unit: report.unit, host: report.host, at: report.at }),
    t('ops.crash.result', { result: report.result, meaning: resultWords(report.result, locale) }),
    t('ops.crash.exit', { exit_code: report.exit_code || '-', exit_status: report.exit_status || '-' }),
    t('ops.crash.restart'),
    '',
    report.log_lines.length === 0
      ? t('ops.crash.no_log')
      : t('ops.crash.log_header', { n: String(report.log_lines.length) }),
    ...report.log_lines.map((l) => `  ${l}`),
    '',
    t('ops.crash.fix', {
      status: `systemctl ${scopeFlag}status ${report.unit}`,
      journal: `journalctl ${scopeFlag}-u ${report.unit} -e`,
    }),
  ];
  return {
    subject: t('ops.crash.subject', { unit: report.unit, host: report.host, result: report.result }),
    body: lines.join('\n'),
  };
}

/** Relay key of a report (G-32: a retried send is a duplicate, not a second mail); ≤160 bytes. */
export function reportRelayKey(report: CrashReport): string {
  return `service-failure:${report.id}`.slice(0, 160);
}

/** Agent name the Gateway's own reports are sent as (its key: `service install gateway --issue-key`). */
export const GATEWAY_REPORT_AGENT = 'gateway';

/**
 * Mail a report as the service's agent: a bridge's with its own key, the Gateway's with the key of
 * the agent {@link GATEWAY_REPORT_AGENT} (people do not write to people, G-31) — a free relay to a
 * person with a relay key, so a retried send is a duplicate (G-32). A bridge that crashed before
 * it ever registered is registered first (idempotent, its own name). The recipient is
 * `AGENTMAIL_REPORT_TO` (default `admin`).
 * @throws CliError `AM_CLI_NO_TOKEN` without a key; the client's error when the Gateway does not
 *   take it (the caller spools).
 */
export async function sendReport(
  report: CrashReport,
  env: NodeJS.ProcessEnv,
  platform: string,
): Promise<{ to: string; duplicate: boolean }> {
  const to = env.AGENTMAIL_REPORT_TO || 'admin';
  const mail = reportMail(report, resolveLocale(env.AGENTMAIL_LOCALE));
  // The env's key, else the unit's credential (SPEC B-21; `service report` adds the key file's).
  const key = readAgentKey(env);
  if (!key)
    throw new CliError(
      'NO_TOKEN',
      `no agent key to send the report of ${report.unit} with (AGENTMAIL_AGENT_KEY)`,
      {
        suggestion: `agentmail service install ${report.service} --issue-key --force`,
      },
    );
  const client = new GatewayClient({
    baseUrl: (env.AGENTMAIL_GATEWAY_URL ?? '').replace(/\/+$/, ''),
    key,
    timeoutMs: REPORT_STEP_TIMEOUT_MS,
  });
  const body = {
    to: `${to}@.`,
    subject: mail.subject,
    body: mail.body,
    relay: 'summary' as const,
    relay_key: reportRelayKey(report),
  };
  const res = await client.send(body).catch(async (err: unknown) => {
    if ((err as { body?: { code?: unknown } }).body?.code !== 'AM_GW_NOT_REGISTERED') throw err;
    const name = env.AGENTMAIL_AGENT_NAME || (report.service === 'gateway' ? GATEWAY_REPORT_AGENT : platform);
    await client.register({ name, platform });
    return client.send(body);
  });
  return { to, duplicate: res.status === 'duplicate_relay' };
}

function spoolDir(stateDir: string): string {
  return join(stateDir, SPOOL_DIR);
}

function spoolFile(stateDir: string, report: CrashReport): string {
  return join(
    spoolDir(stateDir),
    `${report.at.replace(/[^0-9]/g, '')}-${report.id.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`,
  );
}

/** Write a report into the spool (0600, atomically). */
export async function spoolReport(stateDir: string, report: CrashReport): Promise<string> {
  await mkdir(spoolDir(stateDir), { recursive: true, mode: 0o700 });
  const file = spoolFile(stateDir, report);
  await writeFileAtomic(file, `${JSON.stringify(report)}\n`, 0o600);
  return file;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `service report`: a failure is mailed, or spooled when the Gateway does not take it. */
export async function reportFailure(options: ReportOptions, env: NodeJS.ProcessEnv): Promise<ReportOutcome> {
  const result = env.SERVICE_RESULT ?? '';
  if (!isFailure(result)) return { status: 'not_a_failure', result };
  const report = await buildReport(options, env);
  try {
    const sent = await sendReport(report, env, platformOf(report.service, env));
    return { status: 'sent', id: report.id, ...sent };
  } catch (err) {
    return {
      status: 'spooled',
      id: report.id,
      file: await spoolReport(options.stateDir, report),
      error: errorText(err),
    };
  }
}

/** Spooled reports, oldest first (unreadable or foreign files are skipped). */
export async function spooledReports(
  stateDir: string,
): Promise<Array<{ file: string; report: CrashReport }>> {
  let names: string[];
  try {
    names = (await readdir(spoolDir(stateDir))).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    const file = join(spoolDir(stateDir), name);
    try {
      const parsed = CrashReport.safeParse(JSON.parse(await readFile(file, 'utf8')));
      if (parsed.success) out.push({ file, report: parsed.data });
    } catch {
      // A half-written temp file or something else: not ours to send.
    }
  }
  return out;
}

/**
 * `service flush`: send every spooled report, oldest first, each removed once sent. Waits up to
 * `waitMs` for a Gateway that is still starting (only when something is spooled, and only while
 * the failure is transient); stops at the first report the Gateway does not take and keeps the
 * rest for the next start.
 */
export async function flushSpool(
  stateDir: string,
  env: NodeJS.ProcessEnv,
  waitMs: number = FLUSH_WAIT_MS,
): Promise<ReportOutcome[]> {
  const spooled = await spooledReports(stateDir);
  const outcomes: ReportOutcome[] = [];
  const deadline = Date.now() + waitMs;
  for (const { file, report } of spooled) {
    for (;;) {
      try {
        const sent = await sendReport(report, env, platformOf(report.service, env));
        await unlink(file);
        outcomes.push({ status: 'sent', id: report.id, ...sent });
        break;
      } catch (err) {
        // A refusal (a revoked key, an unknown recipient) will not pass by waiting: keep it for later.
        if (!isTransient(err) || Date.now() >= deadline) {
          outcomes.push({ status: 'spooled', id: report.id, file, error: errorText(err) });
          return outcomes;
        }
        await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(0, deadline - Date.now()))));
      }
    }
  }
  return outcomes;
}

/**
 * Wait until `url` answers 2xx (each request bounded by 5 s), up to `waitMs`: `opencode serve`
 * boots the instance (and so loads the plugin) on the first request naming a directory.
 * @returns whether it answered in time.
 */
export async function bootUrl(url: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(REPORT_STEP_TIMEOUT_MS) });
      await res.body?.cancel();
      if (res.ok) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return false;
}
