/**
 * `agentmail doctor`: one command that checks the installation and says what is wrong, each line
 * ok / warn / fail with its fix (SPEC §8): the Gateway and the token, then every service installed
 * with `agentmail service install` — its unit, env file and state dir, and for a bridge its key,
 * registration, presence, host, plugin and mode enforcement (what its heartbeats told the Gateway).
 */
import { join } from 'node:path';
import { resolveLocale } from '@agentmail/shared-policy';
import { type Command, Option } from 'commander';
import type { CliContext } from './context.js';
import { bridgeChecks } from './doctor-bridge.js';
import { askEnforcement, gatewayChecks, gatewayReportKeyCheck, nodeCheck } from './doctor-gateway.js';
import { type DoctorCheck, Report } from './doctor-report.js';
import { installedLayouts, unitChecks, writable } from './doctor-units.js';
import { CliError } from './errors.js';
import { printJson } from './output.js';
import { findCheckout } from './service-files.js';
import { descriptorProblems } from './service-hosts.js';

export type { DoctorCheck } from './doctor-report.js';

/** Options of `agentmail doctor`. */
export interface DoctorOptions {
  /** Also look for a system Gateway under this root. @default '/' */
  root?: string;
}

/** Run every check. Never throws for a failed check: each is a line. */
export async function runDoctor(
  ctx: CliContext,
  cmd: Command,
  options: DoctorOptions = {},
): Promise<DoctorCheck[]> {
  const env = ctx.io.env;
  const r = new Report(resolveLocale(env.AGENTMAIL_LOCALE));
  nodeCheck(r);
  const gateway = await gatewayChecks(r, ctx, cmd);
  // What each agent's last heartbeat said about mode enforcement (SPEC P-8), as the person sees it.
  const enforcement = await askEnforcement(gateway);
  const layouts = installedLayouts(env, options.root ?? '/');
  if (layouts.length === 0)
    r.add(
      'services',
      'installed',
      'warn',
      'ops.doctor.none_installed',
      {},
      'agentmail service install gateway; agentmail service install pi --issue-key',
    );
  const checkout = findCheckout(env);
  // A broken host.json is one failed line; the other services are still checked.
  for (const problem of descriptorProblems(env))
    r.add(
      'services',
      'host_descriptor',
      'fail',
      'ops.doctor.descriptor_bad',
      { error: problem.message },
      problem.suggestion ?? 'docs/BRIDGE-CONTRACT.md "Adding a host"',
    );
  for (const layout of layouts) {
    const unit = await unitChecks(r, layout, env, checkout);
    const { settings } = unit;
    if (layout.service === 'gateway') {
      await writable(
        r,
        'gateway',
        layout.scope === 'system' ? join(layout.root, layout.stateDir) : layout.stateDir,
      );
      await gatewayReportKeyCheck(r, layout, settings);
    } else await bridgeChecks(r, layout, unit, env, checkout, enforcement);
  }
  return r.checks;
}

/** Register `agentmail doctor`. */
export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(
      'check the Gateway, your token and every installed service; each line ok, warn or fail with its fix',
    )
    .addOption(new Option('--root <dir>', 'look for system files under this directory').hideHelp())
    .action(async (opts: DoctorOptions, cmd: Command) => {
      const checks = await runDoctor(ctx, cmd, opts);
      const failed = checks.filter((c) => c.status === 'fail').length;
      if (ctx.globals(cmd).json) printJson(ctx.io, { ok: failed === 0, checks });
      else
        ctx.io.out(
          checks
            .flatMap((c) => [
              `${c.status.padEnd(4)}  ${c.area.padEnd(8)} ${c.message}`,
              ...(c.fix ? [`${' '.repeat(15)}fix: ${c.fix}`] : []),
            ])
            .join('\n'),
        );
      if (failed > 0) throw new CliError('DOCTOR_FAILED', `${failed} check(s) failed; the fix is under each`);
    });
}
