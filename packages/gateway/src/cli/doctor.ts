/**
 * `agentmail doctor`: one command that checks the installation and says what is wrong, each line
 * ok / warn / fail with its fix (SPEC §8): the Gateway and the token, then every service installed
 * with `agentmail service install` — its unit, env file and state dir, and for a bridge its key,
 * registration, presence, host, plugin and mode enforcement (what its heartbeats told the Gateway).
 */
import { execFile } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentView, Contact } from '@agentmail/protocol';
import {
  formatText,
  type Locale,
  resolveLocale,
  type TextKey,
  type TextParams,
} from '@agentmail/shared-policy';
import { AGENT_KEY_FILE_VARIABLE, GatewayClient } from '@agentmail/shared-policy/client';
import { type Command, Option } from 'commander';
import { keyAgentName } from './agent-identity.js';
import { apiFor, type CliContext } from './context.js';
import { spooledReports } from './crash-report.js';
import { CliError, isCliError } from './errors.js';
import type { HumanApi } from './http.js';
import { printJson, shortTime } from './output.js';
import {
  AGENT_KEY_SETTING,
  findCheckout,
  parseEnvFile,
  readServiceSettings,
  type ServiceLayout,
  type ServiceScope,
  serviceLayout,
} from './service-files.js';
import {
  BRIDGES,
  type BridgeFacts,
  bridgeDataDirVariable,
  GATEWAY_FACTS,
  SERVICE_NAMES,
  type ServiceName,
  unitName,
} from './service-platforms.js';
import { hasPluginEntry, opencodeConfigFile, zcodeConfigFile } from './service-plugins.js';

/** The Node.js release every part needs (`engines.node`). */
export const NODE_MIN = [22, 19] as const;
/** Time one external probe (`--version`, `systemd-analyze verify`, a Gateway call) may take, in ms. */
export const PROBE_TIMEOUT_MS = 15_000;

/** One line of the doctor's answer. */
export interface DoctorCheck {
  /** What was checked: `node`, `gateway`, `token`, or a service (`pi`, …). */
  area: string;
  /** Stable id of the check within its area (`key`, `online`, `plugin`, …). */
  check: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  /** What to do (a command), for warn and fail. */
  fix?: string;
}

/** Options of `agentmail doctor`. */
export interface DoctorOptions {
  /** Also look for a system Gateway under this root. @default '/' */
  root?: string;
}

function run(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; out: string; missing: boolean }> {
  return new Promise((resolve) => {
    execFile(bin, [...args], { env, timeout: PROBE_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({
        ok: err === null,
        out: `${stdout}${stderr}`.trim(),
        missing: (err as NodeJS.ErrnoException | null)?.code === 'ENOENT',
      }),
    );
  });
}

class Report {
  readonly checks: DoctorCheck[] = [];
  constructor(readonly locale: Locale) {}
  t(key: TextKey, params: TextParams = {}): string {
    return formatText(key, params, this.locale);
  }
  add(
    area: string,
    check: string,
    status: DoctorCheck['status'],
    key: TextKey,
    params: TextParams = {},
    fix?: string,
  ): void {
    this.checks.push({
      area,
      check,
      status,
      message: this.t(key, params),
      ...(fix === undefined ? {} : { fix }),
    });
  }
}

function nodeCheck(r: Report): void {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  r.add(
    'node',
    'version',
    ok ? 'ok' : 'fail',
    ok ? 'ops.doctor.node_ok' : 'ops.doctor.node_old',
    {
      version: process.versions.node,
      min: NODE_MIN.join('.'),
    },
    ok ? undefined : 'source scripts/env.sh (in the checkout), or install Node.js 22.19 or newer',
  );
}

/**
 * The person's Gateway as the first checks found it: the client when the token works, else why
 * not (`error` undefined: no token), with the URL and where it came from for later lines.
 */
interface GatewayAnswer {
  api: HumanApi | undefined;
  url: string;
  from: string;
  error?: string;
}

async function gatewayChecks(r: Report, ctx: CliContext, cmd: Command): Promise<GatewayAnswer> {
  const config = await ctx.config(cmd);
  const api = apiFor(config, { timeoutMs: PROBE_TIMEOUT_MS });
  const where = { url: config.url, from: config.urlFrom };
  try {
    const health = await api.health();
    const version = typeof health.version === 'string' ? health.version : r.t('ops.doctor.unknown');
    r.add('gateway', 'reachable', 'ok', 'ops.doctor.gateway_ok', {
      url: config.url,
      from: config.urlFrom,
      version,
    });
  } catch (err) {
    const error = isCliError(err) ? err.message : String(err);
    r.add(
      'gateway',
      'reachable',
      'fail',
      'ops.doctor.gateway_down',
      { url: config.url, from: config.urlFrom, error },
      'systemctl --user start agentmail-gateway.service (or agentmail serve); a remote Gateway: agentmail login --url <url> --token <token>',
    );
    return { api: undefined, ...where, error };
  }
  if (config.token === undefined) {
    r.add(
      'token',
      'valid',
      'warn',
      'ops.doctor.token_none',
      {},
      'agentmail login --url <url> --token <token>',
    );
    return { api: undefined, ...where };
  }
  try {
    await api.inbox({ status: 'unread', limit: 1 });
    r.add('token', 'valid', 'ok', 'ops.doctor.token_ok');
    return { api, ...where };
  } catch (err) {
    const error = isCliError(err) ? err.message : String(err);
    r.add(
      'token',
      'valid',
      'fail',
      'ops.doctor.token_bad',
      { from: config.tokenFrom ?? '', error },
      'agentmail login --url <url> --token <token>   (a lost admin token: agentmail admin reset-token --data-dir <dir>)',
    );
    return { api: undefined, ...where, error };
  }
}

/** What an agent's last heartbeat told the Gateway about mode enforcement (SPEC P-8). */
type HeartbeatMode = Pick<AgentView, 'mode_enforcement' | 'mode_enforcement_reason'>;

/**
 * The Gateway's answer on every agent's mode enforcement (`GET /me/agents`, as the person sees
 * it), or the line to print for each bridge when it could not be asked.
 */
type EnforcementAnswer =
  | { asked: true; agents: ReadonlyMap<string, HeartbeatMode> }
  | { asked: false; key: TextKey; params: TextParams; fix: string };

async function askEnforcement(gw: GatewayAnswer): Promise<EnforcementAnswer> {
  const where = { url: gw.url, from: gw.from };
  const unasked = (error: string): EnforcementAnswer => ({
    asked: false,
    key: 'ops.doctor.enforcement_unasked',
    params: { ...where, error },
    fix: 'agentmail doctor, once the Gateway answers',
  });
  if (gw.api === undefined)
    return gw.error === undefined
      ? {
          asked: false,
          key: 'ops.doctor.enforcement_no_token',
          params: where,
          fix: 'agentmail login --url <url> --token <token>',
        }
      : unasked(gw.error);
  try {
    const { agents } = await gw.api.agents();
    return { asked: true, agents: new Map(agents.map((a) => [a.name, a] as const)) };
  } catch (err) {
    return unasked(isCliError(err) ? err.message : String(err));
  }
}

/** The installed services: those with a unit or an env file in their layout. */
function installedLayouts(env: NodeJS.ProcessEnv, root: string): ServiceLayout[] {
  const out: ServiceLayout[] = [];
  const scopes: Array<[ServiceName, ServiceScope]> = [
    ...SERVICE_NAMES.map((s) => [s, 'user'] as [ServiceName, ServiceScope]),
    ['gateway', 'system'],
  ];
  for (const [service, scope] of scopes) {
    const layout = serviceLayout(service, scope, env, root);
    if (existsSync(layout.unitFile) || existsSync(layout.envFile)) out.push(layout);
  }
  return out;
}

/** What `systemd-analyze verify` had to say of a unit, and in which mode it ran. */
export interface UnitVerification {
  /** `no_analyze`: systemd-analyze is not installed; `unverified`: it could not run in either mode. */
  result: 'ok' | 'invalid' | 'no_analyze' | 'unverified';
  /** `user`: `--user`, as the unit runs; `system`: a system unit, or a user unit without a user manager here. */
  mode: 'user' | 'system';
  /** A user unit checked in system mode because there is no user manager (no login session). */
  fellBack: boolean;
  /** What systemd-analyze printed. */
  out: string;
}

/** systemd-analyze could not set up a user manager: no login session (no or a stale XDG_RUNTIME_DIR). */
const NO_USER_MANAGER =
  /RuntimeDirectory|XDG_RUNTIME_DIR|Failed to initialize manager|Failed to create directory '[^']*\/systemd\/'/;

/**
 * Verify a unit file with `systemd-analyze verify` (it parses units and checks the commands exist;
 * it never starts systemd). A user unit is verified with `--user`; without a user manager (no login
 * session: ssh without lingering, a container) that cannot run, so the unit is verified in system
 * mode instead — the same parser and checks, only the search path differs, and a rendered unit
 * names its files by absolute path — and the answer says so (issue 20).
 */
export async function verifyUnit(layout: ServiceLayout, env: NodeJS.ProcessEnv): Promise<UnitVerification> {
  const verify = (mode: 'user' | 'system') =>
    run(
      'systemd-analyze',
      ['verify', '--man=no', ...(mode === 'user' ? ['--user'] : []), layout.unitFile],
      env,
    );
  const session = env.XDG_RUNTIME_DIR !== undefined && env.XDG_RUNTIME_DIR !== '';
  let mode: 'user' | 'system' = layout.scope === 'user' && session ? 'user' : 'system';
  let v = await verify(mode);
  if (v.missing) return { result: 'no_analyze', mode, fellBack: false, out: '' };
  if (mode === 'user' && NO_USER_MANAGER.test(v.out)) {
    mode = 'system';
    v = await verify(mode);
  }
  const fellBack = layout.scope === 'user' && mode === 'system';
  if (NO_USER_MANAGER.test(v.out)) return { result: 'unverified', mode, fellBack, out: v.out };
  return { result: v.ok && v.out === '' ? 'ok' : 'invalid', mode, fellBack, out: v.out };
}

/** The `ExecStart=` line of a unit file (the command as written, systemd's quotes kept), or `''`. */
export function execStartOf(unitText: string): string {
  return /^ExecStart=[-@:+!]*(.*)$/m.exec(unitText)?.[1]?.trim() ?? '';
}

/** The words of an `ExecStart=` command, systemd's double quotes taken off. */
export function execStartWords(execStart: string): string[] {
  return [...execStart.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** What the unit checks found out that later fixes depend on. */
interface UnitFacts {
  settings: Map<string, string>;
  /** A user manager answers here; false when the unit had to be verified in system mode (issue 20). */
  manager: boolean;
  /** The unit's `ExecStart=` command, `''` without a unit file. */
  execStart: string;
}

/**
 * The program files the unit's `ExecStart=` names (absolute paths) must exist: a bridge that is not
 * built yet cannot start (issue 20); the fix is the build command `service install` printed.
 */
function programCheck(
  r: Report,
  layout: ServiceLayout,
  execStart: string,
  reinstall: string,
  checkout: string,
): void {
  const area = layout.service;
  const facts = layout.service === 'gateway' ? undefined : BRIDGES[layout.service];
  const built =
    facts === undefined
      ? [{ file: GATEWAY_FACTS.cli, build: GATEWAY_FACTS.buildCommand }]
      : facts.builtFiles.map((file) => ({ file, build: facts.buildCommand }));
  const files = execStartWords(execStart).filter((w) => w.startsWith('/'));
  const missing = files.find((f) => !existsSync(f));
  if (missing === undefined) {
    r.add(area, 'program', 'ok', 'ops.doctor.program_ok', { path: files.join(' ') });
    return;
  }
  // A file of the package a build makes (packages/<name>/…): that package's build command.
  const build = built.find((b) =>
    missing.startsWith(`${join(checkout, b.file.split('/').slice(0, 2).join('/'))}/`),
  )?.build;
  r.add(
    area,
    'program',
    'fail',
    'ops.doctor.program_missing',
    { path: missing },
    build === undefined ? reinstall : `${build}   (in the checkout ${checkout})`,
  );
}

async function unitChecks(
  r: Report,
  layout: ServiceLayout,
  env: NodeJS.ProcessEnv,
  checkout: string,
): Promise<UnitFacts> {
  const area = layout.service;
  const flag = layout.scope === 'user' ? ' --user' : ' --system';
  const reinstall = `agentmail service install ${layout.service}${flag} --force`;
  let manager = true;
  let execStart = '';
  if (!existsSync(layout.unitFile)) {
    r.add(area, 'unit', 'fail', 'ops.doctor.unit_missing', { path: layout.unitFile }, reinstall);
  } else {
    const check = await verifyUnit(layout, env);
    manager = !check.fellBack;
    if (check.result === 'no_analyze')
      r.add(
        area,
        'unit',
        'warn',
        'ops.doctor.unit_no_analyze',
        { path: layout.unitFile },
        'apt-get install systemd   (for systemd-analyze)',
      );
    else if (check.result === 'unverified')
      r.add(
        area,
        'unit',
        'warn',
        'ops.doctor.unit_unverified',
        { path: layout.unitFile, error: check.out.split('\n')[0] ?? '' },
        'run agentmail doctor in your login session',
      );
    else if (check.result === 'ok')
      r.add(area, 'unit', 'ok', check.fellBack ? 'ops.doctor.unit_ok_system' : 'ops.doctor.unit_ok', {
        path: layout.unitFile,
      });
    else
      r.add(
        area,
        'unit',
        'fail',
        'ops.doctor.unit_invalid',
        { path: layout.unitFile, error: check.out.split('\n')[0] ?? '' },
        reinstall,
      );
    execStart = execStartOf(await readFile(layout.unitFile, 'utf8').catch(() => ''));
    programCheck(r, layout, execStart, reinstall, checkout);
  }
  let text = '';
  const st = await stat(layout.envFile).catch(() => undefined);
  if (st === undefined)
    r.add(area, 'env_file', 'fail', 'ops.doctor.env_missing', { path: layout.envFile }, reinstall);
  else if ((st.mode & 0o077) !== 0)
    r.add(
      area,
      'env_file',
      'fail',
      'ops.doctor.env_mode',
      { path: layout.envFile, mode: (st.mode & 0o777).toString(8) },
      `chmod 600 ${layout.envFile}`,
    );
  else r.add(area, 'env_file', 'ok', 'ops.doctor.env_ok', { path: layout.envFile });
  // A system unit's env file is root's: its mode is checked, its settings are not readable here.
  if (st !== undefined) text = await readFile(layout.envFile, 'utf8').catch(() => '');
  const spooled = await spooledReports(
    layout.scope === 'system' ? join(layout.root, layout.stateDir) : layout.stateDir,
  );
  if (spooled.length > 0)
    r.add(
      area,
      'crash_reports',
      'warn',
      'ops.doctor.spooled',
      { n: spooled.length, oldest: spooled[0]?.report.at ?? '' },
      `${layout.scope === 'system' ? 'sudo ' : ''}agentmail service flush ${layout.service}${layout.scope === 'system' ? ' --system' : ''} --state-dir ${layout.stateDir}   (reads the service's key file for its key)`,
    );
  const settings = parseEnvFile(text);
  // The agent key is in the key file the unit loads as its credential (B-21).
  const key = readServiceSettings(layout).get(AGENT_KEY_SETTING);
  if (key !== undefined) settings.set(AGENT_KEY_SETTING, key);
  return { settings, manager, execStart };
}

/**
 * How to (re)start a user unit. Without a user manager (no login session) `systemctl --user`
 * cannot work: the fix says what can — a session or lingering starts the manager — and how to run
 * the unit's own command by hand, with its env file and key file (issue 20).
 */
function startCommand(layout: ServiceLayout, unit: UnitFacts, verb: 'start' | 'restart'): string {
  const name = unitName(layout.service);
  if (unit.manager || layout.scope === 'system')
    return `systemctl${layout.scope === 'system' ? '' : ' --user'} ${verb} ${name}`;
  const byHand =
    unit.execStart === ''
      ? ''
      : `; or run it by hand: (cd ~ && set -a && . ${layout.envFile} && set +a && ${AGENT_KEY_FILE_VARIABLE}=${layout.keyFile} exec ${unit.execStart})`;
  return `no user manager here (no login session): log in with a session, or once: loginctl enable-linger $USER; then systemctl --user ${verb} ${name}${byHand}`;
}

async function writable(r: Report, area: string, dir: string): Promise<void> {
  const st = await stat(dir).catch(() => undefined);
  if (st !== undefined && !st.isDirectory()) {
    // access(W_OK) passes for a writable regular file: the state dir must be a directory.
    r.add(
      area,
      'state_dir',
      'fail',
      'ops.doctor.dir_not_dir',
      { path: dir },
      `mv ${dir} ${dir}.not-a-dir && mkdir -p ${dir} && chmod 700 ${dir}   (as the service's user)`,
    );
    return;
  }
  try {
    await access(dir, constants.W_OK);
    r.add(area, 'state_dir', 'ok', 'ops.doctor.dir_ok', { path: dir });
  } catch {
    r.add(
      area,
      'state_dir',
      'fail',
      'ops.doctor.dir_bad',
      { path: dir },
      `mkdir -p ${dir} && chmod 700 ${dir}   (as the service's user)`,
    );
  }
}

/**
 * The Gateway's own crash reports are mailed with the agent key in its env file: a missing or
 * refused key means its reports stay spooled, unseen.
 */
async function gatewayReportKeyCheck(
  r: Report,
  layout: ServiceLayout,
  settings: Map<string, string>,
): Promise<void> {
  const flag = layout.scope === 'system' ? ' --system' : '';
  const fix = `agentmail service install gateway${flag} --issue-key --force   (as an admin, with the Gateway running)`;
  // A system unit's env file is root's: unreadable here, nothing to say about its key.
  if (layout.scope === 'system' && settings.size === 0) return;
  const key = settings.get('AGENTMAIL_AGENT_KEY') ?? '';
  const url = (settings.get('AGENTMAIL_GATEWAY_URL') ?? '').replace(/\/+$/, '');
  if (key === '' || !/^https?:\/\//.test(url)) {
    r.add(
      'gateway',
      'report_key',
      'warn',
      'ops.doctor.report_key_missing',
      { path: key === '' ? layout.keyFile : layout.envFile },
      fix,
    );
    return;
  }
  try {
    await new GatewayClient({ baseUrl: url, key, timeoutMs: PROBE_TIMEOUT_MS }).contacts();
    r.add('gateway', 'report_key', 'ok', 'ops.doctor.report_key_ok', { path: layout.keyFile });
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (status === 401 || status === 403)
      r.add('gateway', 'report_key', 'fail', 'ops.doctor.report_key_refused', { path: layout.keyFile }, fix);
    else
      r.add(
        'gateway',
        'report_key',
        'warn',
        'ops.doctor.key_unchecked',
        { url, error: (err as Error).message },
        'agentmail doctor, once the Gateway answers',
      );
  }
}

async function hostCheck(
  r: Report,
  facts: BridgeFacts,
  settings: Map<string, string>,
  checkout: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const area = facts.service;
  let version: string | undefined;
  if (facts.hostPackage !== undefined) {
    try {
      version = (
        JSON.parse(await readFile(join(checkout, facts.hostPackage), 'utf8')) as { version?: string }
      ).version;
    } catch {
      version = undefined;
    }
  } else {
    const bin = facts.hostBinVariable ? settings.get(facts.hostBinVariable) : undefined;
    if (bin === undefined || !existsSync(bin)) {
      r.add(
        area,
        'host',
        'fail',
        'ops.doctor.host_missing',
        { host: facts.service, path: bin ?? '-' },
        `install it (see ${facts.readme}), then agentmail service install ${facts.service} --bin <path> --force`,
      );
      return;
    }
    const res = await run(bin, ['--version'], env);
    version = /\d+\.\d+\.\d+[\w.-]*/.exec(res.out)?.[0];
    if (version === undefined) {
      r.add(
        area,
        'host',
        'fail',
        'ops.doctor.host_no_version',
        { host: facts.service, path: bin },
        `is ${bin} really ${facts.service}? agentmail service install ${facts.service} --bin /absolute/path/to/${facts.service} --force`,
      );
      return;
    }
  }
  if (version === undefined) {
    r.add(
      area,
      'host',
      'fail',
      'ops.doctor.host_missing',
      { host: facts.service, path: facts.hostPackage ?? '-' },
      'pnpm install (in the checkout)',
    );
  } else if (facts.supportedHostVersion !== undefined && version !== facts.supportedHostVersion) {
    r.add(
      area,
      'host',
      'warn',
      'ops.doctor.host_version',
      { host: facts.service, version, supported: facts.supportedHostVersion },
      `install ${facts.service} ${facts.supportedHostVersion} (see ${facts.readme})`,
    );
  } else {
    r.add(area, 'host', 'ok', 'ops.doctor.host_ok', { host: facts.service, version });
  }
}

async function pluginCheck(
  r: Report,
  facts: BridgeFacts,
  settings: Map<string, string>,
  checkout: string,
  env: NodeJS.ProcessEnv,
  online: boolean,
  enforcement: string | null | undefined,
  start: string,
  restart: string,
): Promise<void> {
  const area = facts.service;
  const step = facts.plugin;
  const reinstall = `agentmail service install ${facts.service} --force, then ${restart}`;
  let where: string | undefined;
  let present = true;
  switch (step.kind) {
    case 'none':
      r.add(area, 'plugin', 'ok', 'ops.doctor.plugin_builtin');
      return;
    case 'opencode-config':
      where = opencodeConfigFile(env);
      present = await hasPluginEntry(where, ['plugin'], join(checkout, step.pluginPath));
      break;
    case 'zcode-config':
      where = zcodeConfigFile(env);
      present = await hasPluginEntry(where, ['plugins', 'dirs'], join(checkout, step.pluginDir));
      break;
    case 'plugin-dir-env':
      where = settings.get(step.variable) ?? join(checkout, step.pluginDir);
      present = existsSync(join(where, 'dist', 'hook.js'));
      break;
    case 'dsh-plugin-add': {
      where = join(env.HOME ?? '', '.dsh', 'profiles', step.profile, 'package.json');
      present = await readFile(where, 'utf8').then(
        (t) => t.includes('@agentmail/bridge-dsh'),
        () => false,
      );
      break;
    }
  }
  if (!present)
    r.add(
      area,
      'plugin',
      'fail',
      'ops.doctor.plugin_missing',
      { host: facts.service, path: where },
      reinstall,
    );
  else if (!online)
    r.add(
      area,
      'plugin',
      'warn',
      'ops.doctor.plugin_configured',
      { host: facts.service, path: where },
      start,
    );
  // A driver (its own process connects, the plugin runs inside the host) is online even when its
  // host did not load the plugin: only native mode enforcement (the plugin's gate) proves it.
  else if (facts.exec.kind === 'node-entry' && enforcement !== 'native')
    r.add(
      area,
      'plugin',
      'warn',
      'ops.doctor.plugin_unproven',
      { host: facts.service, path: where, mode: enforcement ?? r.t('ops.doctor.unknown') },
      `journalctl --user -u ${unitName(facts.service)} -o cat | grep '"event":"enforcement"'   (the reason; see ${facts.readme})`,
    );
  // The plugin is what connects to the Gateway: an online agent proves its host loaded it.
  else r.add(area, 'plugin', 'ok', 'ops.doctor.plugin_loaded', { host: facts.service, path: where });
}

/** The name a key is bound to (see {@link keyAgentName}); undefined when that cannot be learnt. */
const boundName = (client: GatewayClient): Promise<string | undefined> =>
  keyAgentName(client).catch(() => undefined);

async function bridgeChecks(
  r: Report,
  layout: ServiceLayout,
  unitFacts: UnitFacts,
  env: NodeJS.ProcessEnv,
  checkout: string,
  enforcement: EnforcementAnswer,
): Promise<void> {
  if (layout.service === 'gateway') return;
  const { settings } = unitFacts;
  const start = startCommand(layout, unitFacts, 'start');
  const restart = startCommand(layout, unitFacts, 'restart');
  const facts = BRIDGES[layout.service];
  const area = facts.service;
  const unit = unitName(facts.service);
  const name = settings.get('AGENTMAIL_AGENT_NAME') || facts.defaultAgentName;
  const key = settings.get('AGENTMAIL_AGENT_KEY') || settings.get('AGENTMAIL_AGENT_SECRET') || '';
  const url = (settings.get('AGENTMAIL_GATEWAY_URL') ?? '').replace(/\/+$/, '');
  const fixKey = `agentmail service install ${facts.service} --issue-key --force   (or --agent-key <key from: agentmail agent key ${name}>), then ${restart}`;
  await writable(r, area, settings.get(bridgeDataDirVariable(facts)) ?? layout.stateDir);
  await hostCheck(r, facts, settings, checkout, env);
  let contacts: Contact[] | undefined;
  if (key === '' || !/^https?:\/\//.test(url)) {
    r.add(
      area,
      'key',
      'fail',
      'ops.doctor.key_missing',
      { path: key === '' ? layout.keyFile : layout.envFile },
      fixKey,
    );
  } else {
    const client = new GatewayClient({ baseUrl: url, key, timeoutMs: PROBE_TIMEOUT_MS });
    try {
      contacts = (await client.contacts()).contacts;
      r.add(area, 'key', 'ok', 'ops.doctor.key_ok', { url });
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      if (status === 401 || status === 403)
        r.add(area, 'key', 'fail', 'ops.doctor.key_refused', { path: layout.keyFile, url }, fixKey);
      else
        r.add(
          area,
          'key',
          'fail',
          'ops.doctor.key_unchecked',
          { url, error: (err as Error).message },
          'agentmail doctor, once the Gateway answers',
        );
    }
    const self = contacts?.find((c) => c.kind === 'agent' && c.name === name);
    if (contacts !== undefined && self === undefined) {
      const bound = await boundName(client);
      if (bound !== undefined && bound !== name)
        r.add(
          area,
          'registered',
          'fail',
          'ops.doctor.key_other_name',
          { name, bound },
          `agentmail service install ${facts.service} --agent-name ${bound} --force   (the key's name; or a key for ${name}: --issue-key), then ${restart}`,
        );
      else
        r.add(
          area,
          'registered',
          'fail',
          'ops.doctor.not_registered',
          { name },
          `${start}; its log: journalctl --user -u ${unit} -e`,
        );
    } else if (self !== undefined) {
      // Registering is idempotent for a registered name; a key bound to another name is refused with that name.
      try {
        await client.register({ name, platform: self.platform });
        r.add(area, 'registered', 'ok', 'ops.doctor.registered', { name, platform: self.platform });
      } catch (err) {
        const bound = (err as { body?: { bound_name?: unknown } }).body?.bound_name;
        r.add(
          area,
          'registered',
          'fail',
          'ops.doctor.key_other_name',
          { name, bound: typeof bound === 'string' ? bound : '?' },
          fixKey,
        );
      }
      if (self.online)
        r.add(area, 'online', 'ok', 'ops.doctor.online', { name, last_seen: shortTime(self.last_seen) });
      else
        r.add(
          area,
          'online',
          'fail',
          self.last_seen === null ? 'ops.doctor.never_online' : 'ops.doctor.offline',
          {
            name,
            last_seen: shortTime(self.last_seen),
          },
          `${restart}; why it stopped: journalctl --user -u ${unit} -e`,
        );
    }
  }
  const online = contacts?.find((c) => c.name === name)?.online === true;
  const said = enforcement.asked ? enforcement.agents.get(name) : undefined;
  await pluginCheck(r, facts, settings, checkout, env, online, said?.mode_enforcement, start, restart);
  if (!enforcement.asked)
    r.add(area, 'mode_enforcement', 'warn', enforcement.key, enforcement.params, enforcement.fix);
  else if (said?.mode_enforcement === 'native')
    r.add(area, 'mode_enforcement', 'ok', 'ops.doctor.enforcement_native');
  else if (said?.mode_enforcement === 'advisory')
    r.add(
      area,
      'mode_enforcement',
      'warn',
      'ops.doctor.enforcement_advisory',
      { reason: said.mode_enforcement_reason ?? '-' },
      `see ${facts.readme}`,
    );
  else
    r.add(
      area,
      'mode_enforcement',
      'warn',
      'ops.doctor.enforcement_unknown',
      { name },
      `${start}; its log: journalctl --user -u ${unit} -e`,
    );
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
