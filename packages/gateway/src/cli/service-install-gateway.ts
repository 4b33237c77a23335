/**
 * What `service install gateway` adds: a fresh data directory with its admin token (shown once,
 * saved for the CLI when it has no config yet), and warnings for files still naming an old port.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { readConfigFile, writeConfigFile } from './config.js';
import type { CliContext } from './context.js';
import { say } from './output.js';
import { parseEnvFile, type ServiceLayout, serviceLayout } from './service-files.js';
import { serviceNames } from './service-hosts.js';
import { unitName } from './service-platforms.js';
import { readIfExists } from './service-scope.js';

/** A new Gateway's admin token, and the CLI config it was saved in (undefined: not saved). */
export interface AdminToken {
  token: string;
  savedIn: string | undefined;
}

/**
 * A fresh Gateway data directory is created here, with the admin user, so its token is shown once
 * to the person installing (not written into the journal by the first start) and, when this user
 * has no CLI config yet, saved for the CLI (mode 0600) as `agentmail login` would.
 */
export async function initGatewayData(
  ctx: CliContext,
  cmd: Command,
  layout: ServiceLayout,
): Promise<AdminToken | undefined> {
  const [{ SQLITE_FILE_NAME }, { initDataDir }] = await Promise.all([
    import('../db/database.js'),
    import('../init.js'),
  ]);
  if (existsSync(join(layout.stateDir, SQLITE_FILE_NAME))) return undefined;
  const { adminToken } = await initDataDir(layout.stateDir);
  if (adminToken === undefined) return undefined;
  const config = await ctx.config(cmd);
  const port = parseEnvFile((await readIfExists(layout.envFile)) ?? '').get('AGENTMAIL_PORT') ?? '8787';
  if (existsSync(config.configPath) || config.token !== undefined)
    return { token: adminToken, savedIn: undefined };
  await writeConfigFile(config.configPath, { url: `http://127.0.0.1:${port}`, token: adminToken });
  return { token: adminToken, savedIn: config.configPath };
}

/** `http://127.0.0.1:<port>` or `localhost`: the port, else undefined (a remote Gateway is not ours). */
function loopbackPort(url: string | undefined): string | undefined {
  try {
    const u = new URL(url ?? '');
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return undefined;
    return u.port || (u.protocol === 'https:' ? '443' : '80');
  } catch {
    return undefined;
  }
}

/**
 * A Gateway on a new port: the CLI config and the installed bridges still name the old one.
 * @returns one warning per file to update, with the command that does it.
 */
export async function portWarnings(
  ctx: CliContext,
  cmd: Command,
  layout: ServiceLayout,
  existing: Map<string, string>,
  settings: Array<readonly [string, string]>,
): Promise<string[]> {
  const env = ctx.io.env;
  const port = settings.find(([k]) => k === 'AGENTMAIL_PORT')?.[1] ?? '8787';
  const url = `http://127.0.0.1:${port}`;
  const out: string[] = [];
  const config = await ctx.config(cmd);
  const file = existsSync(config.configPath)
    ? await readConfigFile(config.configPath).catch(() => ({ url: undefined }))
    : {};
  const cliPort = loopbackPort(file.url);
  if (cliPort !== undefined && cliPort !== port)
    out.push(say(env, 'ops.service.port_cli', { file: config.configPath, old: file.url ?? '', url }));
  if (layout.scope !== 'user' || existing.get('AGENTMAIL_PORT') === port) return out;
  for (const bridge of serviceNames(env)) {
    if (bridge === 'gateway') continue;
    const envFile = serviceLayout(bridge, 'user', env, layout.root).envFile;
    const old = parseEnvFile((await readIfExists(envFile).catch(() => undefined)) ?? '').get(
      'AGENTMAIL_GATEWAY_URL',
    );
    const oldPort = loopbackPort(old);
    if (oldPort !== undefined && oldPort !== port)
      out.push(
        say(env, 'ops.service.port_bridge', {
          service: bridge,
          file: envFile,
          old: old ?? '',
          url,
          unit: unitName(bridge),
        }),
      );
  }
  return out;
}
