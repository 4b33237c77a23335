/**
 * `agentmail service install` (SPEC §8): render a service's unit, env file and key file with this
 * machine's paths, refuse to overwrite an edited file without `--force`, issue its key when asked,
 * write everything (taken back when a step fails), put its plugin in place and say what to run.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, rm, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { issueKeyOnce } from './admin.js';
import { writeFileAtomic } from './atomic-file.js';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import type { HumanApi } from './http.js';
import { say } from './output.js';
import {
  ENV_FILE_MODE,
  findCheckout,
  KEY_FILE_MODE,
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
import { bridgeFactsIn, hostFilePath } from './service-hosts.js';
import { type AdminToken, initGatewayData, portWarnings } from './service-install-gateway.js';
import { installedFile, installPlugin } from './service-install-plugin.js';
import type { BridgeFacts, ServiceName } from './service-platforms.js';
import { unitName } from './service-platforms.js';
import { checkPluginList } from './service-plugins.js';
import { readIfExists, scopeOf, systemctl, wantsLink } from './service-scope.js';
import { checkOptions, hostBin, type InstallOptions, settingsFor } from './service-settings.js';
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
  admin?: AdminToken;
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
  const plan = await planInstall(ctx, cmd, service, opts);
  refuseChangedFiles(plan);
  // The host's config is checked before anything is changed (and before a key is issued).
  if (plan.facts?.plugin.kind === 'json-list-entry')
    await checkPluginList(hostFilePath(plan.facts.plugin.file, env), plan.facts.plugin.keyPath);
  const { files, plugin, warnings, admin } = await applyInstall(ctx, cmd, plan);
  const { scope, layout } = plan;
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

/** A file the install writes: its path, the text it should hold and its mode. */
interface InstallTarget {
  path: string;
  text: string;
  mode: number;
}

/** What an install has worked out before it changes anything. */
interface InstallPlan {
  service: ServiceName;
  scope: ServiceScope;
  /** The admin's client when `--issue-key` asks for a key. */
  api: HumanApi | undefined;
  layout: ServiceLayout;
  checkout: string;
  facts: BridgeFacts | undefined;
  bin: string | undefined;
  /** The settings the env file and key file held before. */
  existing: Map<string, string>;
  /** The settings to write; the key's entry is replaced once `--issue-key` issued it. */
  settings: Array<readonly [string, string]>;
  render: () => RenderedService;
  targets: InstallTarget[];
  keyTarget: InstallTarget | undefined;
  /** What each target holds now, undefined when it does not exist. */
  current: Array<string | undefined>;
  force: boolean;
}

/**
 * Check the options, gather the settings and render every file, reading only.
 * @throws CliError `AM_CLI_USAGE`, `AM_CLI_FILE_UNREADABLE`
 */
async function planInstall(
  ctx: CliContext,
  cmd: Command,
  service: ServiceName,
  opts: InstallOptions,
): Promise<InstallPlan> {
  const env = ctx.io.env;
  const scope = scopeOf(service, opts);
  checkOptions(service, opts, env);
  // An admin token is needed to issue a key: known before anything is checked or written.
  const api = opts.issueKey ? await ctx.api(cmd) : undefined;
  const layout = serviceLayout(service, scope, env, opts.root ? resolve(opts.root) : '/');
  const checkout = findCheckout(env);
  const node = opts.node ? resolve(opts.node) : process.execPath;
  // The env file's settings and the key from the key file (or one an older install left in the env file).
  await readIfExists(layout.envFile); // an env file that cannot be read is an error, not "none"
  const existing = readServiceSettings(layout);
  const facts = service === 'gateway' ? undefined : bridgeFactsIn(checkout, service);
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
  return {
    service,
    scope,
    api,
    layout,
    checkout,
    facts,
    bin,
    existing,
    settings,
    render,
    targets,
    keyTarget,
    current,
    force: opts.force === true,
  };
}

/**
 * A file that differs from what would be written is kept unless `--force`.
 * @throws CliError `AM_CLI_SERVICE_FILE_CHANGED` naming the files; nothing was changed
 */
function refuseChangedFiles(plan: InstallPlan): void {
  const { targets, current, service, scope } = plan;
  const changed = targets.filter((t, i) => current[i] !== undefined && current[i] !== t.text);
  if (changed.length > 0 && !plan.force)
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
}

/** Steps that take back what an install did, run newest first when a later step fails. */
type Undo = Array<() => Promise<unknown>>;

/**
 * Make the directories, issue the key, write the files, put the plugin in place and (a user
 * Gateway) create its data; every step is undone when a later one fails.
 * @throws CliError `AM_CLI_SERVICE_SETUP_FAILED` naming the path (nothing is left behind)
 */
async function applyInstall(
  ctx: CliContext,
  cmd: Command,
  plan: InstallPlan,
): Promise<Pick<InstallResult, 'files' | 'plugin' | 'warnings'> & { admin: AdminToken | undefined }> {
  const env = ctx.io.env;
  const { service, scope, layout, checkout, facts, settings } = plan;
  // Every step below is undone when a later one fails: a failed install leaves nothing behind.
  const undo: Undo = [];
  try {
    // Directories first: a path that cannot be a directory fails here, before any file is written.
    for (const dir of [layout.unitDir, layout.configDir, ...(scope === 'user' ? [layout.stateDir] : [])])
      await prepareDir(dir, undo);
    const warnings = plan.api === undefined ? [] : await issueServiceKey(env, plan, plan.api, undo);
    const files = await writeTargets(plan, undo);
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
    if (service === 'gateway')
      warnings.push(...(await portWarnings(ctx, cmd, layout, plan.existing, settings)));
    const plugin =
      facts === undefined
        ? undefined
        : await installPlugin(facts, checkout, env, plan.bin, undo, installedFile(layout));
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
}

/**
 * `--issue-key`: issue the key now that every check passed, and render the key file with it.
 * @returns the warning when the agent has other active keys
 */
async function issueServiceKey(
  env: NodeJS.ProcessEnv,
  plan: InstallPlan,
  api: HumanApi,
  undo: Undo,
): Promise<string[]> {
  const { settings, keyTarget } = plan;
  const agentName = settings.find(([k]) => k === 'AGENTMAIL_AGENT_NAME')?.[1] ?? plan.service;
  // --issue-key asks for a new key by name: "another" when the agent has one (a reinstall,
  // the key of another host), said in a warning so no live key goes unnoticed.
  const issued = await issueKeyOnce(api, agentName, { another: true });
  undo.push(() => api.revokeAgentKey(issued.key_id));
  const warnings = issued.another
    ? [
        say(env, 'ops.service.other_keys', {
          agent: agentName,
          count: issued.active_keys - 1,
          key_id: issued.key_id,
        }),
      ]
    : [];
  const at = settings.findIndex(([k]) => k === 'AGENTMAIL_AGENT_KEY');
  settings[at] = ['AGENTMAIL_AGENT_KEY', issued.key];
  if (keyTarget !== undefined) keyTarget.text = plan.render().keyFile ?? keyTarget.text;
  return warnings;
}

/** Write each target that changed (atomically); an unchanged one only gets its mode back. */
async function writeTargets(plan: InstallPlan, undo: Undo): Promise<FileOutcome[]> {
  const files: FileOutcome[] = [];
  for (const [i, t] of plan.targets.entries()) {
    const before = plan.current[i];
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
  return files;
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
