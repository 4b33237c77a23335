/**
 * `agentmail service report|flush` (SPEC B-19): the hooks the units run. `report` mails a failure
 * report (or spools it), `flush` sends the spooled ones once the Gateway answers.
 */
import { resolve } from 'node:path';
import { readAgentKey } from '@agentmail/shared-policy/client';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { bootUrl, FLUSH_WAIT_MS, flushSpool, type ReportOutcome, reportFailure } from './crash-report.js';
import { CliError } from './errors.js';
import { printJson, say } from './output.js';
import {
  AGENT_KEY_SETTING,
  readServiceSettings,
  STATE_DIR_VARIABLE,
  serviceLayout,
} from './service-files.js';
import { serviceNamesHelp } from './service-hosts.js';
import { serviceArg } from './service-scope.js';

/**
 * The environment of an `OnFailure=` unit seen as the failed unit's own ExecStopPost: systemd
 * (>= 251) passes `MONITOR_SERVICE_RESULT`, `MONITOR_EXIT_CODE`, `MONITOR_EXIT_STATUS` and
 * `MONITOR_INVOCATION_ID` (the same invocation id, so a crash reported twice is one mail).
 */
export function monitorEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { SERVICE_RESULT: _r, EXIT_CODE: _c, EXIT_STATUS: _s, INVOCATION_ID: _i, ...rest } = env;
  const pick = (name: string) =>
    env[`MONITOR_${name}`] === undefined ? {} : { [name]: env[`MONITOR_${name}`] };
  return {
    ...rest,
    ...pick('SERVICE_RESULT'),
    ...pick('EXIT_CODE'),
    ...pick('EXIT_STATUS'),
    ...pick('INVOCATION_ID'),
  };
}

function reportLine(env: NodeJS.ProcessEnv, o: ReportOutcome): string {
  switch (o.status) {
    case 'not_a_failure':
      return say(env, 'ops.service.report_not_failure', { result: o.result || '-' });
    case 'sent':
      return say(env, o.duplicate ? 'ops.service.report_duplicate' : 'ops.service.report_sent', {
        id: o.id,
        to: o.to,
      });
    case 'spooled':
      return say(env, 'ops.service.report_spooled', { id: o.id, file: o.file, error: o.error });
  }
}

/** Register `service report` and `service flush` under `service`. */
export function registerServiceHooks(service: Command, ctx: CliContext): void {
  registerReportHook(service, ctx);
  registerFlushHook(service, ctx);
}

/** `service report`: the unit's ExecStopPost / OnFailure hook (SPEC B-19). */
function registerReportHook(service: Command, ctx: CliContext): void {
  const env = ctx.io.env;
  service
    .command('report')
    .description(
      'ExecStopPost / OnFailure hook: mail a failure report (SERVICE_RESULT other than success), else spool it',
    )
    .argument('<service>', serviceNamesHelp(env))
    .option('--state-dir <dir>', `the service's state directory (spool; default $${STATE_DIR_VARIABLE})`)
    .option('--unit <name>', 'the unit name (systemd %n)')
    .option('--monitor', "read the failed unit's MONITOR_* variables (an OnFailure= unit, systemd >= 251)")
    .option('--user', 'a user unit (journalctl --user)')
    .option('--system', 'a system unit')
    .action(
      async (
        name: string,
        opts: { stateDir?: string; unit?: string; monitor?: boolean; system?: boolean },
        cmd: Command,
      ) => {
        const service = serviceArg(name, env);
        const stateDir = opts.stateDir ?? env[STATE_DIR_VARIABLE];
        if (stateDir === undefined || stateDir === '')
          throw new CliError('USAGE', `report needs --state-dir (or ${STATE_DIR_VARIABLE} in the env file)`, {
            suggestion: `agentmail service install ${service} --force   (writes both into the unit and env file)`,
          });
        const unitEnv = opts.monitor ? monitorEnv(env) : env;
        // The key: the unit's credential when systemd passes it to the hook, else the key file.
        const key =
          readAgentKey(unitEnv) ??
          readServiceSettings(serviceLayout(service, opts.system ? 'system' : 'user', env)).get(
            AGENT_KEY_SETTING,
          );
        const hookEnv = key === undefined ? unitEnv : { ...unitEnv, [AGENT_KEY_SETTING]: key };
        const outcome = await reportFailure(
          {
            service,
            unit: opts.unit ?? (opts.monitor ? env.MONITOR_UNIT : undefined),
            stateDir: resolve(stateDir),
            scope: opts.system ? 'system' : 'user',
          },
          hookEnv,
        );
        if (ctx.globals(cmd).json) return printJson(ctx.io, outcome);
        ctx.io.out(reportLine(env, outcome));
      },
    );
}

/** `service flush`: the unit's ExecStartPost hook, also run by hand (doctor's fix). */
function registerFlushHook(service: Command, ctx: CliContext): void {
  const env = ctx.io.env;
  service
    .command('flush')
    .description(
      "ExecStartPost hook: send the crash reports spooled while the Gateway was unreachable (with the service's env file)",
    )
    .argument('<service>', serviceNamesHelp(env))
    .option('--state-dir <dir>', "the service's state directory (spool; default: its env file's)")
    .option('--wait-ms <ms>', 'how long to wait for a Gateway that is still starting', String(FLUSH_WAIT_MS))
    .option('--boot-url <url>', 'first wait until this URL answers (opencode serve: boots its instance)')
    .option('--user', 'a user service (the default)')
    .option('--system', 'the system Gateway')
    .action(
      async (
        name: string,
        opts: { stateDir?: string; waitMs: string; bootUrl?: string; system?: boolean },
        cmd: Command,
      ) => {
        const service = serviceArg(name, env);
        const waitMs = Number(opts.waitMs);
        if (!Number.isInteger(waitMs) || waitMs < 0)
          throw new CliError('USAGE', `--wait-ms must be an integer >= 0, got "${opts.waitMs}"`, {
            suggestion: '--wait-ms <milliseconds>, e.g. --wait-ms 0 (no wait)',
          });
        // Pasted into a shell (doctor's fix), the command has none of the unit's environment: the
        // service's own env file gives it the key, URL and state dir (the same values systemd passes).
        const layout = serviceLayout(service, opts.system ? 'system' : 'user', env);
        const fromFile = readServiceSettings(layout);
        const flushEnv = { ...env, ...Object.fromEntries(fromFile) };
        const stateDir = opts.stateDir ?? flushEnv[STATE_DIR_VARIABLE] ?? layout.stateDir;
        const booted =
          opts.bootUrl === undefined ? undefined : await bootUrl(opts.bootUrl, Math.max(waitMs, 60_000));
        const outcomes = await flushSpool(resolve(stateDir), flushEnv, waitMs);
        if (ctx.globals(cmd).json)
          printJson(ctx.io, { outcomes, ...(booted === undefined ? {} : { booted }) });
        else {
          const lines =
            outcomes.length === 0
              ? [say(env, 'ops.service.none_spooled')]
              : outcomes.map((o) => reportLine(env, o));
          if (booted === false) lines.push(say(env, 'ops.service.boot_failed', { url: opts.bootUrl ?? '' }));
          ctx.io.out(lines.join('\n'));
        }
        const left = outcomes.filter((o) => o.status === 'spooled').length;
        // The unit's hook is "-"-prefixed: a non-zero exit never stops the service from starting.
        if (left > 0)
          throw new CliError('REPORTS_SPOOLED', `${left} crash report(s) are still spooled in ${stateDir}`, {
            suggestion: `start the Gateway, or give the service a working key (agentmail service install ${service}${opts.system ? ' --system' : ''} --issue-key --force), then: agentmail service flush ${service}${opts.system ? ' --system' : ''}`,
          });
      },
    );
}
