/**
 * What every `service` command shares: the service and scope it acts on (`--user`, `--system`,
 * `--root`), `systemctl` with the scope's flag, the unit's enablement link, and reading a file
 * that may not be there yet.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { CliError } from './errors.js';
import type { ServiceLayout, ServiceScope } from './service-files.js';
import { descriptorProblems, isServiceName, serviceNames } from './service-hosts.js';
import { type ServiceName, unitName } from './service-platforms.js';

/**
 * The scope a command names; a bridge runs as a user service only.
 * @throws CliError `AM_CLI_USAGE`
 */
export function scopeOf(service: ServiceName, opts: { user?: boolean; system?: boolean }): ServiceScope {
  if (opts.user && opts.system)
    throw new CliError('USAGE', 'give --user or --system, not both', {
      suggestion: '--user (the default; every bridge) or --system (a system Gateway only)',
    });
  if (opts.system && service !== 'gateway')
    throw new CliError('USAGE', `the ${service} bridge runs as a user service only`, {
      detail:
        "an agent works in a person's own projects with their own host config, so it runs as that person",
      suggestion: `agentmail service install ${service}   (as the person whose agent it is; then loginctl enable-linger)`,
    });
  return opts.system ? 'system' : 'user';
}

/**
 * A service name from the command line.
 * @throws CliError `AM_CLI_USAGE` listing the services
 */
export function serviceArg(name: string, env: NodeJS.ProcessEnv): ServiceName {
  if (isServiceName(name, env)) return name;
  // A host whose descriptor is broken is not known: say why rather than "unknown".
  const broken = descriptorProblems(env)[0];
  if (broken !== undefined) throw broken;
  throw new CliError('USAGE', `unknown service "${name}"`, {
    suggestion: `one of: ${serviceNames(env).join(', ')}`,
  });
}

/** `systemctl` with the scope's flag. */
export function systemctl(scope: ServiceScope): string {
  return scope === 'user' ? 'systemctl --user' : 'sudo systemctl';
}

/**
 * A file's text, undefined when it does not exist.
 * @throws CliError `AM_CLI_FILE_UNREADABLE` when it exists but cannot be read
 */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('FILE_UNREADABLE', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** The enablement link `systemctl enable` makes for the service's unit. */
export function wantsLink(layout: ServiceLayout): string {
  return join(
    layout.unitDir,
    layout.scope === 'user' ? 'default.target.wants' : 'multi-user.target.wants',
    unitName(layout.service),
  );
}

/** `--user`, `--system` and the hidden `--root` of install and uninstall. */
export const scopeOptions = (c: Command) =>
  c
    .addOption(new Option('--user', 'a user service (the default)'))
    .addOption(new Option('--system', 'a system service (the Gateway only)'))
    .addOption(
      new Option('--root <dir>', 'write the files under this directory (packaging, tests)').hideHelp(),
    );
