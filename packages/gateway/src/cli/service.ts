/**
 * `agentmail service install|uninstall|report|flush` (SPEC §8, B-19): a systemd unit and env file
 * per service, rendered with this machine's paths; the plugin put where its host expects it; the
 * crash report hooks the units run.
 */
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { printJson, say } from './output.js';
import { registerServiceHooks } from './service-hooks.js';
import { serviceNamesHelp } from './service-hosts.js';
import { installService } from './service-install.js';
import { unitName } from './service-platforms.js';
import { scopeOptions, serviceArg } from './service-scope.js';
import type { InstallOptions } from './service-settings.js';
import { uninstallService } from './service-uninstall.js';

/** Register `service install|uninstall|report|flush`. */
export function registerServiceCommands(program: Command, ctx: CliContext): void {
  const env = ctx.io.env;
  const service = program
    .command('service')
    .description('run the Gateway and the bridges as systemd services (install, uninstall)');
  scopeOptions(
    service
      .command('install')
      .description(
        "write the systemd unit and env file of a service with this machine's paths, and put its plugin in place",
      )
      .argument('<service>', serviceNamesHelp(env))
      .option('--force', 'replace a unit or env file that differs (edited, or other options)')
      .option('--port <port>', 'gateway: the port it serves (default 8787)')
      .option(
        '--agent-name <name>',
        'the agent name (bridge: default the platform; gateway: its crash-report agent)',
      )
      .option('--agent-key <key>', 'its agent key amk_… (from agentmail agent key <name>)')
      .option('--issue-key', 'issue a new agent key now (needs an admin token; not with --agent-key)')
      .option('--report-to <user>', 'who gets crash reports by mail (default admin)')
      .option('--bin <path>', 'the host executable (opencode, dsh, claude, zcode)')
      .option('--node <path>', 'Node.js >= 22.19 for the unit (default: the one running this command)'),
  ).action(async (name: string, opts: InstallOptions, cmd: Command) => {
    const result = await installService(ctx, cmd, serviceArg(name, env), opts);
    if (ctx.globals(cmd).json) return printJson(ctx.io, result);
    const lines = result.files.map((f) => `${f.status.padEnd(9)} ${f.path} (mode ${f.mode})`);
    if (result.plugin) lines.push(`plugin    ${result.plugin}`);
    if (result.admin) {
      lines.push(say(env, 'ops.service.admin_token', { token: result.admin.token }));
      lines.push(
        result.admin.savedIn
          ? say(env, 'ops.service.admin_saved', { path: result.admin.savedIn })
          : say(env, 'ops.service.admin_login'),
      );
    }
    for (const w of result.warnings) lines.push(`warning: ${w}`);
    lines.push('', say(env, 'ops.service.enable'), ...result.commands.map((c) => `  ${c}`));
    ctx.io.out(lines.join('\n'));
  });
  scopeOptions(
    service
      .command('uninstall')
      .description('remove the unit, env file and plugin entry of a service (its data is kept)')
      .argument('<service>', serviceNamesHelp(env)),
  ).action(async (name: string, opts: { user?: boolean; system?: boolean; root?: string }, cmd: Command) => {
    const result = await uninstallService(ctx, serviceArg(name, env), opts);
    if (ctx.globals(cmd).json) return printJson(ctx.io, result);
    const unit = unitName(result.service);
    ctx.io.out(
      [
        ...(result.removed.length === 0
          ? [say(env, 'ops.service.nothing_installed')]
          : result.removed.map((p) => `removed ${p}`)),
        ...result.kept.map((p) => say(env, 'ops.service.kept', { path: p })),
        ...(result.agentName === undefined
          ? []
          : [say(env, 'ops.service.key_still_active', { name: result.agentName })]),
        '',
        // Said after the removal, as it is: a process that runs on until stopped, or may.
        result.removed.length === 0
          ? say(env, 'ops.service.then')
          : result.activity === 'running'
            ? say(env, 'ops.service.still_running', { unit })
            : result.activity === 'unknown'
              ? say(env, 'ops.service.maybe_running', { unit })
              : say(env, 'ops.service.then'),
        ...result.commands.map((c) => `  ${c}`),
      ].join('\n'),
    );
  });
  registerServiceHooks(service, ctx);
}
