/**
 * The doctor's checks of an installed service's files: its unit (`systemd-analyze verify`, in
 * system mode when there is no user manager), the program it starts, its env file and mode, its
 * spooled crash reports and its state directory; and how to start it here.
 */
import { constants, existsSync } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_KEY_FILE_VARIABLE } from '@agentmail/shared-policy/client';
import { spooledReports } from './crash-report.js';
import { type Report, run } from './doctor-report.js';
import {
  AGENT_KEY_SETTING,
  parseEnvFile,
  readServiceSettings,
  type ServiceLayout,
  type ServiceScope,
  serviceLayout,
} from './service-files.js';
import { bridgeFactsIn, serviceNames } from './service-hosts.js';
import { GATEWAY_FACTS, type ServiceName, unitName } from './service-platforms.js';

/** The installed services: those with a unit or an env file in their layout. */
export function installedLayouts(env: NodeJS.ProcessEnv, root: string): ServiceLayout[] {
  const out: ServiceLayout[] = [];
  const scopes: Array<[ServiceName, ServiceScope]> = [
    ...serviceNames(env).map((s) => [s, 'user'] as [ServiceName, ServiceScope]),
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
export interface UnitFacts {
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
  const facts = layout.service === 'gateway' ? undefined : bridgeFactsIn(checkout, layout.service);
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

/** The unit, its program, the env file and the spooled crash reports of one service. */
export async function unitChecks(
  r: Report,
  layout: ServiceLayout,
  env: NodeJS.ProcessEnv,
  checkout: string,
): Promise<UnitFacts> {
  const flag = layout.scope === 'user' ? ' --user' : ' --system';
  const reinstall = `agentmail service install ${layout.service}${flag} --force`;
  let manager = true;
  let execStart = '';
  if (!existsSync(layout.unitFile)) {
    r.add(layout.service, 'unit', 'fail', 'ops.doctor.unit_missing', { path: layout.unitFile }, reinstall);
  } else {
    manager = await unitFileCheck(r, layout, env, reinstall);
    execStart = execStartOf(await readFile(layout.unitFile, 'utf8').catch(() => ''));
    programCheck(r, layout, execStart, reinstall, checkout);
  }
  const text = await envFileCheck(r, layout, reinstall);
  await spooledCheck(r, layout);
  const settings = parseEnvFile(text);
  // The agent key is in the key file the unit loads as its credential (B-21).
  const key = readServiceSettings(layout).get(AGENT_KEY_SETTING);
  if (key !== undefined) settings.set(AGENT_KEY_SETTING, key);
  return { settings, manager, execStart };
}

/**
 * The unit file as `systemd-analyze verify` sees it.
 * @returns whether a user manager answers here (false: verified in system mode instead)
 */
async function unitFileCheck(
  r: Report,
  layout: ServiceLayout,
  env: NodeJS.ProcessEnv,
  reinstall: string,
): Promise<boolean> {
  const area = layout.service;
  const check = await verifyUnit(layout, env);
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
  return !check.fellBack;
}

/**
 * The env file exists and only its owner can read it (it names the Gateway and the key file).
 * @returns its text, '' when there is none or it cannot be read here
 */
async function envFileCheck(r: Report, layout: ServiceLayout, reinstall: string): Promise<string> {
  const area = layout.service;
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
  return st === undefined ? '' : await readFile(layout.envFile, 'utf8').catch(() => '');
}

/** Crash reports still waiting in the service's spool are a warning with the command that sends them. */
async function spooledCheck(r: Report, layout: ServiceLayout): Promise<void> {
  const spooled = await spooledReports(
    layout.scope === 'system' ? join(layout.root, layout.stateDir) : layout.stateDir,
  );
  if (spooled.length > 0)
    r.add(
      layout.service,
      'crash_reports',
      'warn',
      'ops.doctor.spooled',
      { n: spooled.length, oldest: spooled[0]?.report.at ?? '' },
      `${layout.scope === 'system' ? 'sudo ' : ''}agentmail service flush ${layout.service}${layout.scope === 'system' ? ' --system' : ''} --state-dir ${layout.stateDir}   (reads the service's key file for its key)`,
    );
}

/**
 * How to (re)start a user unit. Without a user manager (no login session) `systemctl --user`
 * cannot work: the fix says what can — a session or lingering starts the manager — and how to run
 * the unit's own command by hand, with its env file and key file (issue 20).
 */
export function startCommand(layout: ServiceLayout, unit: UnitFacts, verb: 'start' | 'restart'): string {
  const name = unitName(layout.service);
  if (unit.manager || layout.scope === 'system')
    return `systemctl${layout.scope === 'system' ? '' : ' --user'} ${verb} ${name}`;
  const byHand =
    unit.execStart === ''
      ? ''
      : `; or run it by hand: (cd ~ && set -a && . ${layout.envFile} && set +a && ${AGENT_KEY_FILE_VARIABLE}=${layout.keyFile} exec ${unit.execStart})`;
  return `no user manager here (no login session): log in with a session, or once: loginctl enable-linger $USER; then systemctl --user ${verb} ${name}${byHand}`;
}

/** The state directory is a directory the service can write. */
export async function writable(r: Report, area: string, dir: string): Promise<void> {
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
