/**
 * `agentmail service install|uninstall|report|flush` (SPEC §8, B-19): a systemd unit and env file
 * per service, rendered with this machine's paths; the plugin put where its host expects it; the
 * crash report hooks the units run.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { parseAddress } from '@agentmail/protocol';
import { formatText, resolveLocale, type TextKey, type TextParams } from '@agentmail/shared-policy';
import { readAgentKey } from '@agentmail/shared-policy/client';
import { type Command, Option } from 'commander';
import { issueKeyOnce } from './admin.js';
import { writeFileAtomic } from './atomic-file.js';
import { readConfigFile, writeConfigFile } from './config.js';
import type { CliContext } from './context.js';
import {
  bootUrl,
  FLUSH_WAIT_MS,
  flushSpool,
  GATEWAY_REPORT_AGENT,
  type ReportOutcome,
  reportFailure,
} from './crash-report.js';
import { CliError } from './errors.js';
import { printJson } from './output.js';
import {
  AGENT_KEY_SETTING,
  dataDirSetting,
  ENV_FILE_MODE,
  findCheckout,
  KEY_FILE_MODE,
  onPath,
  parseEnvFile,
  type RenderedService,
  readServiceSettings,
  renderService,
  type ServiceLayout,
  type ServiceScope,
  STATE_DIR_VARIABLE,
  serviceLayout,
  systemdVersion,
  UNIT_FILE_MODE,
} from './service-files.js';
import {
  BRIDGES,
  type BridgeFacts,
  isServiceName,
  SERVICE_NAMES,
  type ServiceName,
  unitName,
} from './service-platforms.js';
import {
  addPluginEntry,
  checkPluginList,
  opencodeConfigFile,
  removePluginEntry,
  runDshPluginAdd,
  zcodeConfigFile,
} from './service-plugins.js';

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

/** What happened to one file. */
export interface FileOutcome {
  path: string;
  status: 'written' | 'unchanged' | 'replaced';
  mode: string;
}

/** The result of `service install`. */
export interface InstallResult {
  service: ServiceName;
  scope: ServiceScope;
  files: FileOutcome[];
  plugin: string | undefined;
  warnings: string[];
  commands: string[];
  /** Gateway on a fresh data dir: the admin token (shown once) and whether it was saved for the CLI. */
  admin?: { token: string; savedIn: string | undefined };
}

/**
 * A name as the Gateway takes it in an address (`name@.`).
 * @throws CliError `AM_CLI_USAGE` naming the option.
 */
function checkName(option: string, name: string): string {
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

function scopeOf(service: ServiceName, opts: { user?: boolean; system?: boolean }): ServiceScope {
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

function serviceArg(name: string): ServiceName {
  if (isServiceName(name)) return name;
  throw new CliError('USAGE', `unknown service "${name}"`, {
    suggestion: `one of: ${SERVICE_NAMES.join(', ')}`,
  });
}

/** `systemctl` with the scope's flag. */
function systemctl(scope: ServiceScope): string {
  return scope === 'user' ? 'systemctl --user' : 'sudo systemctl';
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('FILE_UNREADABLE', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

function hostBin(
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
const KEY_TO_ISSUE = 'amk_to-be-issued';

/** What an agent key looks like (`amk_` + base64url, as the Gateway issues them). */
const AGENT_KEY_SHAPE = /^amk_[A-Za-z0-9_-]+$/;

/**
 * Options that mean nothing for this service are refused, not silently ignored.
 * @throws CliError `AM_CLI_USAGE` naming the option.
 */
function checkOptions(service: ServiceName, opts: InstallOptions): void {
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
  const takesBin =
    service !== 'gateway' &&
    (BRIDGES[service].exec.kind === 'host' || BRIDGES[service].hostBinVariable !== undefined);
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
async function settingsFor(
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
  const facts = BRIDGES[service];
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
  if (facts.plugin.kind === 'plugin-dir-env' || facts.plugin.kind === 'zcode-config')
    settings.push([facts.plugin.variable, join(checkout, facts.plugin.pluginDir)], ['AGENTMAIL_NODE', node]);
  if (service === 'opencode') settings.push(['OPENCODE_DISABLE_AUTOUPDATE', '1']);
  return settings;
}

/**
 * Install a service: render, refuse a changed file without `force` (nothing written then), write
 * (unit 0644, env file 0600, their directories 0700), put the plugin in place.
 * @throws CliError `AM_CLI_SERVICE_FILE_CHANGED` (a file differs and no --force), `AM_CLI_USAGE`,
 *   `AM_CLI_SERVICE_SETUP_FAILED` (a plugin step failed).
 */
export async function installService(
  ctx: CliContext,
  cmd: Command,
  service: ServiceName,
  opts: InstallOptions,
): Promise<InstallResult> {
  const env = ctx.io.env;
  const scope = scopeOf(service, opts);
  checkOptions(service, opts);
  // An admin token is needed to issue a key: known before anything is checked or written.
  const api = opts.issueKey ? await ctx.api(cmd) : undefined;
  const layout = serviceLayout(service, scope, env, opts.root ? resolve(opts.root) : '/');
  const checkout = findCheckout(env);
  const node = opts.node ? resolve(opts.node) : process.execPath;
  // The env file's settings and the key from the key file (or one an older install left in the env file).
  await readIfExists(layout.envFile); // an env file that cannot be read is an error, not "none"
  const existing = readServiceSettings(layout);
  const facts = service === 'gateway' ? undefined : BRIDGES[service];
  const bin = facts === undefined ? undefined : hostBin(facts, opts, existing, checkout, env);
  const settings = await settingsFor(ctx, cmd, service, layout, opts, existing, checkout, node, bin);
  settings.push([STATE_DIR_VARIABLE, layout.stateDir]);
  // Settings a person added to the env file (AGENTMAIL_REPLY_MODEL, a provider's API key, …) are kept.
  for (const [k, v] of existing) if (!settings.some(([name]) => name === k)) settings.push([k, v]);
  const render = (): RenderedService =>
    renderService({ layout, checkout, node, systemdVersion: systemdVersion(), hostBin: bin, settings });
  const rendered = render();
  const envTarget = { path: layout.envFile, text: rendered.envFile, mode: ENV_FILE_MODE };
  // The agent key lives in its own file, loaded by the unit as systemd's credential (B-21).
  const keyTarget =
    rendered.keyFile === undefined
      ? undefined
      : { path: layout.keyFile, text: rendered.keyFile, mode: KEY_FILE_MODE };
  const targets = [
    { path: layout.unitFile, text: rendered.unit, mode: UNIT_FILE_MODE },
    envTarget,
    ...(keyTarget === undefined ? [] : [keyTarget]),
    // Shared by every service of the scope; its content depends only on this Node and checkout.
    { path: layout.reportUnitFile, text: rendered.reportUnit, mode: UNIT_FILE_MODE },
  ];
  const current = await Promise.all(targets.map((t) => readIfExists(t.path)));
  const changed = targets.filter((t, i) => current[i] !== undefined && current[i] !== t.text);
  if (changed.length > 0 && !opts.force)
    throw new CliError(
      'SERVICE_FILE_CHANGED',
      `${changed.map((t) => t.path).join(' and ')} ${changed.length === 1 ? 'differs' : 'differ'} from what would be written; nothing was changed`,
      {
        detail:
          changed.length === 1
            ? 'it was edited, or written with other options'
            : 'they were edited, or written with other options',
        suggestion: `keep your edits, or replace ${changed.length === 1 ? 'it' : 'them'}: agentmail service install ${service}${scope === 'system' ? ' --system' : ''} --force`,
      },
    );
  // The host's config is checked before anything is changed (and before a key is issued).
  if (facts?.plugin.kind === 'opencode-config') await checkPluginList(opencodeConfigFile(env), ['plugin']);
  if (facts?.plugin.kind === 'zcode-config') await checkPluginList(zcodeConfigFile(env), ['plugins', 'dirs']);
  // Every step below is undone when a later one fails: a failed install leaves nothing behind.
  const undo: Array<() => Promise<unknown>> = [];
  const keyWarnings: string[] = [];
  const done = await (async () => {
    try {
      // Directories first: a path that cannot be a directory fails here, before any file is written.
      for (const dir of [layout.unitDir, layout.configDir, ...(scope === 'user' ? [layout.stateDir] : [])])
        await prepareDir(dir, undo);
      if (api !== undefined) {
        const agentName = settings.find(([k]) => k === 'AGENTMAIL_AGENT_NAME')?.[1] ?? service;
        // --issue-key asks for a new key by name: "another" when the agent has one (a reinstall,
        // the key of another host), said in a warning so no live key goes unnoticed.
        const issued = await issueKeyOnce(api, agentName, { another: true });
        undo.push(() => api.revokeAgentKey(issued.key_id));
        if (issued.another)
          keyWarnings.push(
            say(env, 'ops.service.other_keys', {
              agent: agentName,
              count: issued.active_keys - 1,
              key_id: issued.key_id,
            }),
          );
        const at = settings.findIndex(([k]) => k === 'AGENTMAIL_AGENT_KEY');
        settings[at] = ['AGENTMAIL_AGENT_KEY', issued.key];
        if (keyTarget !== undefined) keyTarget.text = render().keyFile ?? keyTarget.text;
      }
      const files: FileOutcome[] = [];
      for (const [i, t] of targets.entries()) {
        const before = current[i];
        if (before === t.text) {
          // Unchanged, but make sure the mode is right (an env file must stay 0600).
          await chmod(t.path, t.mode);
          files.push({ path: t.path, status: 'unchanged', mode: t.mode.toString(8) });
          continue;
        }
        await writeFileAtomic(t.path, t.text, t.mode);
        undo.push(() => (before === undefined ? unlink(t.path) : writeFileAtomic(t.path, before, t.mode)));
        files.push({
          path: t.path,
          status: before === undefined ? 'written' : 'replaced',
          mode: t.mode.toString(8),
        });
      }
      const warnings: string[] = [...keyWarnings];
      // The Gateway serves the web mailbox at the address it advertises: without its build, 503.
      const built =
        facts === undefined
          ? [
              { file: 'packages/gateway/dist/cli/main.js', build: 'pnpm build:cli' },
              { file: 'packages/web/dist/index.html', build: 'pnpm build:web' },
            ]
          : facts.builtFiles.map((file) => ({ file, build: facts.buildCommand }));
      for (const { file, build } of built)
        if (!existsSync(join(checkout, file)))
          warnings.push(say(env, 'ops.service.not_built', { path: join(checkout, file), build }));
      if (service === 'gateway') warnings.push(...(await portWarnings(ctx, cmd, layout, existing, settings)));
      const plugin =
        facts === undefined
          ? undefined
          : await installPlugin(facts, checkout, env, bin, undo, installedFile(layout));
      const admin =
        service === 'gateway' && scope === 'user' ? await initGatewayData(ctx, cmd, layout) : undefined;
      if (service === 'gateway' && !settings.some(([k]) => k === 'AGENTMAIL_AGENT_KEY'))
        warnings.push(say(env, 'ops.service.no_report_key'));
      return { files, plugin, warnings, admin };
    } catch (err) {
      for (const step of undo.reverse()) await step().catch(() => undefined);
      if (err instanceof CliError) throw err;
      const e = err as NodeJS.ErrnoException;
      throw new CliError('SERVICE_SETUP_FAILED', `install ${service} failed: ${e.message}`, {
        detail: 'nothing was changed: what the install had written was taken back',
        suggestion: `fix the named path (${e.path ?? 'see above'}), then run: agentmail service install ${service}`,
        cause: err,
      });
    }
  })();
  const { files, plugin, warnings, admin } = done;
  const sc = systemctl(scope);
  const unit = unitName(service);
  // Already enabled (its wants link exists): a changed unit or env file takes effect on a restart.
  const enabled = existsSync(wantsLink(layout));
  const commands = [
    `${sc} daemon-reload`,
    ...(enabled
      ? [`${sc} restart ${unit}`]
      : [`${sc} enable --now ${unit}`, ...(scope === 'user' ? ['loginctl enable-linger "$USER"'] : [])]),
    'agentmail doctor',
  ];
  return { service, scope, files, plugin, warnings, commands, ...(admin === undefined ? {} : { admin }) };
}

/**
 * A fresh Gateway data directory is created here, with the admin user, so its token is shown once
 * to the person installing (not written into the journal by the first start) and, when this user
 * has no CLI config yet, saved for the CLI (mode 0600) as `agentmail login` would.
 */
async function initGatewayData(
  ctx: CliContext,
  cmd: Command,
  layout: ServiceLayout,
): Promise<InstallResult['admin']> {
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

/** The enablement link `systemctl enable` makes for the service's unit. */
function wantsLink(layout: ServiceLayout): string {
  return join(
    layout.unitDir,
    layout.scope === 'user' ? 'default.target.wants' : 'multi-user.target.wants',
    unitName(layout.service),
  );
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
async function portWarnings(
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
  for (const bridge of SERVICE_NAMES) {
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

/** A host-config entry the install added (and so uninstall may take out). */
interface AddedEntry {
  file: string;
  list: string[];
  value: string;
}

/**
 * The record of what install added to a host's config, in the service's config dir: uninstall
 * removes only these, never an entry the person had put there before.
 */
function installedFile(layout: ServiceLayout): string {
  return join(layout.configDir, 'installed.json');
}

async function readAdded(record: string): Promise<AddedEntry[]> {
  const text = await readIfExists(record);
  if (text === undefined) return [];
  try {
    const value = JSON.parse(text) as { added?: AddedEntry[] };
    return Array.isArray(value.added) ? value.added : [];
  } catch {
    return [];
  }
}

async function recordAdded(
  record: string,
  entry: AddedEntry,
  undo: Array<() => Promise<unknown>>,
): Promise<void> {
  const before = await readIfExists(record);
  const added = (await readAdded(record)).filter((e) => !(e.file === entry.file && e.value === entry.value));
  await writeFileAtomic(record, `${JSON.stringify({ added: [...added, entry] }, null, 2)}\n`, 0o600);
  undo.push(() => (before === undefined ? unlink(record) : writeFileAtomic(record, before, 0o600)));
}

/**
 * Create a directory (0700) the install needs, recording what it created so a failure can take it back.
 * @throws CliError `AM_CLI_SERVICE_SETUP_FAILED` naming the path when it cannot be a directory.
 */
async function prepareDir(dir: string, undo: Array<() => Promise<unknown>>): Promise<void> {
  try {
    const created = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (created !== undefined) undo.push(() => rm(created, { recursive: true }));
    if (!(await stat(dir)).isDirectory())
      throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new CliError('SERVICE_SETUP_FAILED', `cannot create the directory ${dir} (${code})`, {
      detail:
        code === 'EACCES' || code === 'EPERM'
          ? 'no permission to write there'
          : 'a part of that path is a file, not a directory (is XDG_CONFIG_HOME or XDG_DATA_HOME a file?)',
      suggestion:
        'make that path a directory you can write (or point XDG_CONFIG_HOME / XDG_DATA_HOME at one), then run the install again; nothing was written',
      cause: err,
    });
  }
}

async function installPlugin(
  facts: BridgeFacts,
  checkout: string,
  env: NodeJS.ProcessEnv,
  bin: string | undefined,
  undo: Array<() => Promise<unknown>>,
  record: string,
): Promise<string | undefined> {
  const step = facts.plugin;
  switch (step.kind) {
    case 'none':
      return undefined;
    case 'plugin-dir-env':
      return say(env, 'ops.service.plugin_env', {
        path: join(checkout, step.pluginDir),
        variable: step.variable,
      });
    case 'opencode-config': {
      const file = opencodeConfigFile(env);
      const added = await addPluginEntry(file, ['plugin'], join(checkout, step.pluginPath));
      if (added) {
        undo.push(() => removePluginEntry(file, ['plugin'], join(checkout, step.pluginPath)));
        await recordAdded(record, { file, list: ['plugin'], value: join(checkout, step.pluginPath) }, undo);
      }
      return say(env, added ? 'ops.service.plugin_added' : 'ops.service.plugin_present', {
        path: join(checkout, step.pluginPath),
        list: 'plugin',
        file,
      });
    }
    case 'zcode-config': {
      const file = zcodeConfigFile(env);
      const added = await addPluginEntry(file, ['plugins', 'dirs'], join(checkout, step.pluginDir));
      if (added) {
        undo.push(() => removePluginEntry(file, ['plugins', 'dirs'], join(checkout, step.pluginDir)));
        await recordAdded(
          record,
          { file, list: ['plugins', 'dirs'], value: join(checkout, step.pluginDir) },
          undo,
        );
      }
      return say(env, added ? 'ops.service.plugin_added' : 'ops.service.plugin_present', {
        path: join(checkout, step.pluginDir),
        list: 'plugins.dirs',
        file,
      });
    }
    case 'dsh-plugin-add': {
      if (bin === undefined) throw new Error('dsh: no executable');
      await runDshPluginAdd(bin, step.profile, join(checkout, step.packageDir), env);
      return `dsh plugin --profile ${step.profile} add ${join(checkout, step.packageDir)}`;
    }
  }
}

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

/** Words of the CLI's own lines in the person's locale (`AGENTMAIL_LOCALE`). */
function say(env: NodeJS.ProcessEnv, key: TextKey, params: TextParams = {}): string {
  return formatText(key, params, resolveLocale(env.AGENTMAIL_LOCALE));
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

const scopeOptions = (c: Command) =>
  c
    .addOption(new Option('--user', 'a user service (the default)'))
    .addOption(new Option('--system', 'a system service (the Gateway only)'))
    .addOption(
      new Option('--root <dir>', 'write the files under this directory (packaging, tests)').hideHelp(),
    );

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
      .argument('<service>', SERVICE_NAMES.join(' | '))
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
    const result = await installService(ctx, cmd, serviceArg(name), opts);
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
      .argument('<service>', SERVICE_NAMES.join(' | ')),
  ).action(async (name: string, opts: { user?: boolean; system?: boolean; root?: string }, cmd: Command) => {
    const result = await uninstallService(ctx, serviceArg(name), opts);
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
  service
    .command('report')
    .description(
      'ExecStopPost / OnFailure hook: mail a failure report (SERVICE_RESULT other than success), else spool it',
    )
    .argument('<service>', SERVICE_NAMES.join(' | '))
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
        const service = serviceArg(name);
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
  service
    .command('flush')
    .description(
      "ExecStartPost hook: send the crash reports spooled while the Gateway was unreachable (with the service's env file)",
    )
    .argument('<service>', SERVICE_NAMES.join(' | '))
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
        const service = serviceArg(name);
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
