/**
 * `agentmail service uninstall`: the unit, its enablement link, the env and key files and the
 * plugin entries the install added are removed; the state directory (data, sessions) is kept.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, readdir, rm, rmdir, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CliContext } from './context.js';
import { readServiceSettings, type ServiceScope, serviceLayout } from './service-files.js';
import { installedFile, readAdded } from './service-install-plugin.js';
import { type ServiceName, unitName } from './service-platforms.js';
import { removePluginEntry } from './service-plugins.js';
import { readIfExists, scopeOf, systemctl, wantsLink } from './service-scope.js';

/**
 * Whether a unit runs, as `systemctl is-active` says: `running` (active, activating, reloading,
 * deactivating), `stopped` (inactive, failed, unknown to systemd), `unknown` when systemctl cannot
 * answer (no user manager: no login session; no systemctl). `AGENTMAIL_SYSTEMCTL` names another
 * systemctl (tests). Never throws.
 */
export function unitActivity(
  scope: ServiceScope,
  unit: string,
  env: NodeJS.ProcessEnv,
): Promise<'running' | 'stopped' | 'unknown'> {
  const bin = env.AGENTMAIL_SYSTEMCTL || 'systemctl';
  const args = [...(scope === 'user' ? ['--user'] : []), 'is-active', unit];
  return new Promise((done) => {
    execFile(bin, args, { env, timeout: 15_000, encoding: 'utf8' }, (_err, stdout) => {
      // is-active prints one state per unit; nothing on stdout means it could not ask the manager.
      const state = stdout.trim().split('\n')[0] ?? '';
      if (/^(active|activating|reloading|refreshing|deactivating)$/.test(state)) done('running');
      else if (/^(inactive|failed|unknown)$/.test(state)) done('stopped');
      else done('unknown');
    });
  });
}

/** The result of `service uninstall`. */
export interface UninstallResult {
  service: ServiceName;
  scope: ServiceScope;
  removed: string[];
  kept: string[];
  /** Whether the unit ran when its files were removed (`systemctl is-active`; `unknown`: no user manager). */
  activity: 'running' | 'stopped' | 'unknown';
  /** What to run next: the stop (when it runs or may run), then `daemon-reload`. */
  commands: string[];
  /** The agent whose key stays active (the env file named it): revoke it with `agentmail agent key revoke`. */
  agentName?: string;
}

/**
 * Uninstall a service: stop hints first (printed), then remove the unit, its enablement link, the
 * env file and the plugin entry; the state directory (data, sessions) is kept.
 */
export async function uninstallService(
  ctx: CliContext,
  service: ServiceName,
  opts: { user?: boolean; system?: boolean; root?: string },
): Promise<UninstallResult> {
  const env = ctx.io.env;
  const scope = scopeOf(service, opts);
  const layout = serviceLayout(service, scope, env, opts.root ? resolve(opts.root) : '/');
  const removed: string[] = [];
  await readIfExists(layout.envFile); // an env file that cannot be read is an error, not "none"
  const envSettings = readServiceSettings(layout);
  // Only a key the env file held stays active on the Gateway (a Gateway without a report key has none).
  const agentName = envSettings.get('AGENTMAIL_AGENT_KEY')
    ? envSettings.get('AGENTMAIL_AGENT_NAME')
    : undefined;
  const wants = wantsLink(layout);
  const installed = existsSync(layout.unitFile);
  // Asked before the files go; systemd keeps a removed unit loaded until daemon-reload either way.
  const activity = installed ? await unitActivity(scope, unitName(service), env) : 'stopped';
  for (const path of [wants, layout.unitFile, layout.envFile, layout.keyFile]) {
    try {
      await lstat(path);
      await unlink(path);
      removed.push(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  // The shared report unit goes with the last service of the scope.
  const others = (await readdir(layout.unitDir).catch(() => [] as string[])).filter((n) =>
    /^agentmail-[a-z]+\.service$/.test(n),
  );
  if (others.length === 0 && (await lstat(layout.reportUnitFile).catch(() => undefined))) {
    await unlink(layout.reportUnitFile);
    removed.push(layout.reportUnitFile);
  }
  // Only the host-config entries this install added (the record), never one the person had there.
  const record = installedFile(layout);
  for (const e of await readAdded(record))
    if (await removePluginEntry(e.file, e.list, e.value)) removed.push(`${e.value} from ${e.file}`);
  await rm(record, { force: true });
  await rmdir(layout.configDir).catch(() => undefined); // only when empty
  const sc = systemctl(scope);
  return {
    service,
    scope,
    removed,
    kept: [layout.stateDir],
    activity,
    commands: [...(activity === 'stopped' ? [] : [`${sc} stop ${unitName(service)}`]), `${sc} daemon-reload`],
    ...(agentName === undefined || agentName === '' ? {} : { agentName }),
  };
}
