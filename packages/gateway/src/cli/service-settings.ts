/**
 * What `service install` writes into a service's env file: the options checked (a name the
 * Gateway takes, an agent key's shape, options the service does not use refused), the host
 * executable found, and the settings, keeping what the env file held.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseAddress } from '@agentmail/protocol';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { GATEWAY_REPORT_AGENT } from './crash-report.js';
import { CliError } from './errors.js';
import { dataDirSetting, onPath, type ServiceLayout } from './service-files.js';
import { bridgeFacts, bridgeFactsIn } from './service-hosts.js';
import type { BridgeFacts, ServiceName } from './service-platforms.js';

/** Options of `service install`. */
export interface InstallOptions {
  user?: boolean;
  system?: boolean;
  force?: boolean;
  root?: string;
  port?: string;
  agentName?: string;
  agentKey?: string;
  issueKey?: boolean;
  reportTo?: string;
  bin?: string;
  node?: string;
}

/**
 * A name as the Gateway takes it in an address (`name@.`).
 * @throws CliError `AM_CLI_USAGE` naming the option.
 */
export function checkName(option: string, name: string): string {
  try {
    parseAddress(`${name}@.`);
    return name;
  } catch (err) {
    throw new CliError(
      'USAGE',
      `${option} "${name}" is not a name the Gateway takes: ${(err as Error).message}`,
      {
        suggestion: 'a name without "@", "/" or spaces, e.g. pi or pi-laptop',
      },
    );
  }
}

export function hostBin(
  facts: BridgeFacts,
  opts: InstallOptions,
  existing: Map<string, string>,
  checkout: string,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (facts.exec.kind !== 'host' && facts.hostBinVariable === undefined) return undefined;
  const given = opts.bin ?? (facts.hostBinVariable ? existing.get(facts.hostBinVariable) : undefined);
  if (given !== undefined && given !== '') {
    const abs = resolve(given);
    if (!existsSync(abs))
      throw new CliError('USAGE', `--bin ${abs}: no such file`, {
        suggestion: `give the absolute path of the ${facts.service} executable`,
      });
    return abs;
  }
  if (facts.pinnedHostBin !== undefined && existsSync(join(checkout, facts.pinnedHostBin)))
    return join(checkout, facts.pinnedHostBin);
  const fallback = facts.exec.kind === 'host' ? facts.exec.defaultBin : facts.service;
  const found =
    isAbsolute(fallback) || fallback.includes('/') ? join(checkout, fallback) : onPath(fallback, env);
  if (found !== undefined && existsSync(found)) return found;
  throw new CliError('USAGE', `cannot find the ${facts.service} executable (${fallback})`, {
    suggestion: `install it (see ${facts.readme}), or pass --bin /absolute/path/to/it`,
  });
}

/**
 * Stands for the key `--issue-key` will issue, in the rendering the checks compare: the key itself
 * is issued only once every check has passed, so a refused install leaves no key behind.
 */
export const KEY_TO_ISSUE = 'amk_to-be-issued';

/** What an agent key looks like (`amk_` + base64url, as the Gateway issues them). */
const AGENT_KEY_SHAPE = /^amk_[A-Za-z0-9_-]+$/;

/**
 * Options that mean nothing for this service are refused, not silently ignored.
 * @throws CliError `AM_CLI_USAGE` naming the option.
 */
export function checkOptions(service: ServiceName, opts: InstallOptions, env: NodeJS.ProcessEnv): void {
  if (opts.issueKey && opts.agentKey !== undefined)
    throw new CliError('USAGE', 'give --issue-key or --agent-key, not both', {
      suggestion: `--issue-key issues a new key now (admin); --agent-key uses one you have: agentmail service install ${service} --agent-key amk_…`,
    });
  if (opts.agentKey !== undefined && !AGENT_KEY_SHAPE.test(opts.agentKey))
    throw new CliError(
      'USAGE',
      '--agent-key is not an agent key (they look like amk_ followed by letters, digits, "-" and "_")',
      {
        suggestion: 'copy the key agentmail agent key <name> printed, or use --issue-key',
      },
    );
  if (service !== 'gateway' && opts.port !== undefined)
    throw new CliError('USAGE', `--port is for the gateway; the ${service} bridge does not serve a port`, {
      suggestion: `the bridge reaches the Gateway at --url (or your CLI config's url): agentmail --url http://127.0.0.1:<port> service install ${service}`,
    });
  const facts = service === 'gateway' ? undefined : bridgeFacts(service, env);
  const takesBin = facts !== undefined && (facts.exec.kind === 'host' || facts.hostBinVariable !== undefined);
  if (opts.bin !== undefined && !takesBin)
    throw new CliError(
      'USAGE',
      `--bin is not used by ${service}: it runs on Node (--node) and has no host executable`,
      {
        suggestion: `agentmail service install ${service}   (without --bin)`,
      },
    );
}

/** The env-file settings of a service, keeping an existing key when none is given. */
export async function settingsFor(
  ctx: CliContext,
  cmd: Command,
  service: ServiceName,
  layout: ServiceLayout,
  opts: InstallOptions,
  existing: Map<string, string>,
  checkout: string,
  node: string,
  bin: string | undefined,
): Promise<Array<readonly [string, string]>> {
  const config = await ctx.config(cmd);
  const reportTo = checkName('--report-to', opts.reportTo ?? existing.get('AGENTMAIL_REPORT_TO') ?? 'admin');
  if (service === 'gateway') {
    const port = opts.port ?? existing.get('AGENTMAIL_PORT') ?? '8787';
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
      throw new CliError('USAGE', `--port must be a port from 1 to 65535, got "${port}"`, {
        suggestion: 'agentmail service install gateway --port 8787   (or another free port)',
      });
    // The Gateway's own crash report is mailed by an agent of its own (people do not write to people).
    const agentName = checkName(
      '--agent-name',
      opts.agentName ?? existing.get('AGENTMAIL_AGENT_NAME') ?? GATEWAY_REPORT_AGENT,
    );
    const key = opts.issueKey ? KEY_TO_ISSUE : (opts.agentKey ?? existing.get('AGENTMAIL_AGENT_KEY'));
    return [
      ['AGENTMAIL_PORT', port],
      ['AGENTMAIL_GATEWAY_URL', `http://127.0.0.1:${port}`],
      ['AGENTMAIL_REPORT_TO', reportTo],
      ['AGENTMAIL_AGENT_NAME', agentName],
      ...(key === undefined || key === '' ? [] : [['AGENTMAIL_AGENT_KEY', key] as const]),
    ];
  }
  const facts = bridgeFactsIn(checkout, service);
  const agentName = checkName(
    '--agent-name',
    opts.agentName ?? existing.get('AGENTMAIL_AGENT_NAME') ?? facts.defaultAgentName,
  );
  const key = opts.issueKey ? KEY_TO_ISSUE : (opts.agentKey ?? existing.get('AGENTMAIL_AGENT_KEY'));
  if (key === undefined || key === '')
    throw new CliError('USAGE', `the ${service} bridge needs an agent key`, {
      suggestion: `agentmail service install ${service} --issue-key   (as an admin), or --agent-key <key from: agentmail agent key ${agentName}>`,
    });
  const settings: Array<readonly [string, string]> = [
    ['AGENTMAIL_GATEWAY_URL', ctx.globals(cmd).url ?? existing.get('AGENTMAIL_GATEWAY_URL') ?? config.url],
    ['AGENTMAIL_AGENT_NAME', agentName],
    ['AGENTMAIL_AGENT_KEY', key],
    dataDirSetting(facts, layout),
    ['AGENTMAIL_REPORT_TO', reportTo],
  ];
  if (facts.hostBinVariable !== undefined && bin !== undefined) settings.push([facts.hostBinVariable, bin]);
  // A driver gives its host runs the plugin dir and the unit's Node.js.
  const pluginDir =
    facts.plugin.kind === 'env-dir'
      ? { variable: facts.plugin.variable, dir: facts.plugin.dir }
      : facts.plugin.kind === 'json-list-entry' && facts.plugin.variable !== undefined
        ? { variable: facts.plugin.variable, dir: facts.plugin.value }
        : undefined;
  if (pluginDir) settings.push([pluginDir.variable, join(checkout, pluginDir.dir)], ['AGENTMAIL_NODE', node]);
  settings.push(...facts.env);
  return settings;
}
