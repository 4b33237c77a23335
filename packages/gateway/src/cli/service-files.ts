/**
 * Rendering of the systemd units and env files of `agentmail service install` (SPEC §8, B-19):
 * the templates of `deploy/systemd/` filled with this machine's absolute paths. Pure apart from
 * reading the templates: every path comes in through {@link RenderInput}.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { bridgeDataDir } from '@agentmail/shared-policy';
import { AGENT_KEY_CREDENTIAL } from '@agentmail/shared-policy/client';
import { CliError } from './errors.js';
import { bridgeFacts, bridgeFactsIn } from './service-hosts.js';
import {
  type BridgeFacts,
  bridgeDataDirVariable,
  GATEWAY_FACTS,
  type ServiceName,
  unitName,
} from './service-platforms.js';

export { findCheckout } from './checkout.js';

/** user: `systemctl --user` (the default); system: the Gateway only, `/etc/systemd/system`. */
export type ServiceScope = 'user' | 'system';

/** Mode of an env file: it may hold a provider's API key a person added. */
export const ENV_FILE_MODE = 0o600;
/** Mode of a key file (the agent key, loaded as systemd's credential). */
export const KEY_FILE_MODE = 0o600;
/** The setting that carries the agent key: written to the key file, never to the env file (SPEC B-21). */
export const AGENT_KEY_SETTING = 'AGENTMAIL_AGENT_KEY';
/** Mode of a unit file. */
export const UNIT_FILE_MODE = 0o644;
/** The report unit template started by every service's `OnFailure=` (B-19). */
export const REPORT_UNIT = 'agentmail-report@.service';
/** Env-file variable naming the service's state directory (for the report unit, which has no flag). */
export const STATE_DIR_VARIABLE = 'AGENTMAIL_SERVICE_STATE_DIR';
/** systemd release that knows `RestartSteps=`/`RestartMaxDelaySec=` (exponential backoff). */
export const SYSTEMD_BACKOFF_VERSION = 254;

/** Where one service's files live. */
export interface ServiceLayout {
  readonly service: ServiceName;
  readonly scope: ServiceScope;
  /** Directory of the unit file (`~/.config/systemd/user`, `/etc/systemd/system`), under `root`. */
  readonly unitDir: string;
  /** The unit file. */
  readonly unitFile: string;
  /** Config directory of this service alone (0700). */
  readonly configDir: string;
  /** The env file (`EnvironmentFile=`, 0600). */
  readonly envFile: string;
  /**
   * The agent key (0600), loaded by the unit as systemd's credential `agentmail-agent-key`
   * (`LoadCredential=`): in no process's environment (SPEC B-21).
   */
  readonly keyFile: string;
  /** State directory of this service alone: data, bridge lock, spooled crash reports. */
  readonly stateDir: string;
  /** Root the files are written under (`/` on a real machine; a temp dir in tests). */
  readonly root: string;
  /** The report unit template of this scope (`agentmail-report@.service`, one for every service). */
  readonly reportUnitFile: string;
  /** The directory holding every service's config directory (`~/.config/agentmail`, `/etc/agentmail`). */
  readonly configBase: string;
}

function xdg(env: NodeJS.ProcessEnv, name: 'XDG_CONFIG_HOME' | 'XDG_DATA_HOME', fallback: string): string {
  const value = env[name];
  return value !== undefined && isAbsolute(value) ? value : join(env.HOME || homedir(), fallback);
}

/**
 * The layout of a service: per service its own config and state directory (SPEC §8). User
 * units: `$XDG_CONFIG_HOME/systemd/user/agentmail-<s>.service`, `$XDG_CONFIG_HOME/agentmail/<s>/service.env`,
 * state `$XDG_DATA_HOME/agentmail/<platform>` (the bridge's own default data dir; the Gateway's is
 * `…/agentmail/gateway`). System (Gateway only): `/etc/systemd/system`, `/etc/agentmail/gateway`,
 * `/var/lib/agentmail`; `root` prefixes the files written, never the paths inside them.
 */
export function serviceLayout(
  service: ServiceName,
  scope: ServiceScope,
  env: NodeJS.ProcessEnv,
  root = '/',
): ServiceLayout {
  const under = (p: string) => (root === '/' ? p : join(root, p));
  if (scope === 'system') {
    const unitDir = under('/etc/systemd/system');
    const configDir = under(GATEWAY_FACTS.systemConfigDir);
    return {
      service,
      scope,
      root,
      unitDir,
      unitFile: join(unitDir, unitName(service)),
      reportUnitFile: join(unitDir, REPORT_UNIT),
      configDir,
      configBase: dirname(GATEWAY_FACTS.systemConfigDir),
      envFile: join(configDir, 'service.env'),
      keyFile: join(configDir, 'agent-key'),
      stateDir: GATEWAY_FACTS.systemStateDir,
    };
  }
  const config = xdg(env, 'XDG_CONFIG_HOME', '.config');
  const data = xdg(env, 'XDG_DATA_HOME', '.local/share');
  const unitDir = join(config, 'systemd', 'user');
  const configDir = join(config, 'agentmail', service);
  // The bridge's own default data dir (the one rule, shared-policy `bridgeDataDir`); the env file
  // names it explicitly anyway.
  const stateDir =
    service === 'gateway'
      ? join(data, 'agentmail', 'gateway')
      : bridgeDataDir(bridgeFacts(service, env).platform, { XDG_DATA_HOME: data }, '/');
  return {
    service,
    scope,
    root,
    unitDir: under(unitDir),
    unitFile: under(join(unitDir, unitName(service))),
    reportUnitFile: under(join(unitDir, REPORT_UNIT)),
    configDir: under(configDir),
    configBase: join(config, 'agentmail'),
    envFile: under(join(configDir, 'service.env')),
    keyFile: under(join(configDir, 'agent-key')),
    stateDir,
  };
}

/** The major version of this machine's systemd (`systemd-analyze --version`), or undefined. */
export function systemdVersion(): number | undefined {
  try {
    // Only prints the version: it starts no manager and talks to none.
    const out = execFileSync('systemd-analyze', ['--version'], { encoding: 'utf8', timeout: 5_000 });
    const m = /^systemd (\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The absolute path of `name` on `PATH`, or undefined. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Everything a unit and its env file are made of. */
export interface RenderInput {
  readonly layout: ServiceLayout;
  /** The AgentMail checkout (absolute). */
  readonly checkout: string;
  /** Node.js ≥ 22.19 for our entries (absolute; default this process's). */
  readonly node: string;
  /** Major systemd version, for the backoff keys (unknown: none). */
  readonly systemdVersion: number | undefined;
  /** The host executable (opencode, dsh, claude, zcode), absolute. */
  readonly hostBin?: string | undefined;
  /** Env file settings, in order (written as `KEY=value`). */
  readonly settings: ReadonlyArray<readonly [string, string]>;
}

/**
 * A rendered service: the unit file, the env file, the key file (when the settings hold a key) and
 * the scope's report unit, as text.
 */
export interface RenderedService {
  readonly unit: string;
  readonly envFile: string;
  readonly keyFile?: string;
  readonly reportUnit: string;
}

/** Characters systemd reads literally in an unquoted `KEY=value` and `ExecStart=` word. */
const PLAIN = /^[A-Za-z0-9_./:@+,=%-]*$/;

/**
 * One env-file line. Values are written bare when plain, else double-quoted.
 * @throws CliError `AM_CLI_USAGE` for a value with a line break, quote, backslash or `$`.
 */
export function envLine(key: string, value: string): string {
  if (PLAIN.test(value)) return `${key}=${value}`;
  if (/[\n\r"\\$`]/.test(value))
    throw new CliError('USAGE', `the value of ${key} has a line break, quote, backslash or "$"`, {
      suggestion: 'give it without those characters',
    });
  return `${key}="${value}"`;
}

/**
 * The settings of an installed service as its unit gets them: its env file's, plus
 * `AGENTMAIL_AGENT_KEY` from its key file (which wins over a key an older install left in the env
 * file). Files that cannot be read count as empty.
 */
export function readServiceSettings(layout: Pick<ServiceLayout, 'envFile' | 'keyFile'>): Map<string, string> {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  const settings = parseEnvFile(read(layout.envFile));
  const key = read(layout.keyFile).trim();
  if (key !== '') settings.set(AGENT_KEY_SETTING, key);
  return settings;
}

/** Parse an env file written by {@link envFileText} (or by hand: `KEY=value`, `#` comments). */
export function parseEnvFile(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m?.[1]) continue;
    const raw = (m[2] ?? '').trim();
    out.set(m[1], raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw);
  }
  return out;
}

/** The env file: a header saying what it is, then one line per setting. */
export function envFileText(service: ServiceName, settings: RenderInput['settings']): string {
  return [
    `# AgentMail ${service}: settings of ${unitName(service)} (EnvironmentFile=), written by`,
    `# \`agentmail service install ${service}\`. Mode 0600. The agent key is not here: it is in the`,
    `# key file beside it, which the unit loads as systemd's credential (LoadCredential=). Change a value`,
    `# here, then: systemctl --user restart ${unitName(service)} (--system for a system unit).`,
    ...settings.map(([k, v]) => envLine(k, v)),
    '',
  ].join('\n');
}

/** An `ExecStart=` word: plain, else quoted (systemd's own quoting). */
function execWord(word: string): string {
  if (PLAIN.test(word)) return word;
  if (/["\\\n$%]/.test(word))
    throw new CliError('USAGE', `the path ${JSON.stringify(word)} has a quote, backslash, "$" or "%"`, {
      suggestion: 'install AgentMail and the host under a path without those characters',
    });
  return `"${word}"`;
}

function readTemplate(checkout: string, name: string): string {
  return readFileSync(join(checkout, 'deploy', 'systemd', name), 'utf8');
}

function fill(template: string, values: Readonly<Record<string, string>>): string {
  const text = template.replace(/@([A-Z_]+)@/g, (whole, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`template placeholder ${whole} has no value`);
    return value;
  });
  // An empty @RESTART_BACKOFF@ leaves an empty line; keep the file tidy.
  return text.replace(/\n{3,}/g, '\n\n');
}

function bridgeExecStart(facts: BridgeFacts, input: RenderInput): string {
  if (facts.exec.kind === 'node-entry')
    return [input.node, join(input.checkout, facts.exec.entry)].map(execWord).join(' ');
  if (input.hostBin === undefined) throw new Error(`${facts.service}: no host executable`);
  return [input.hostBin, ...facts.exec.args].map(execWord).join(' ');
}

/**
 * Render a service's unit and env file. The unit runs our entries with {@link RenderInput.node},
 * puts Node's directory first on `PATH` (a host's `#!/usr/bin/env node` shim gets it too), reads
 * the env file, hooks the crash report (ExecStopPost) and its flush (ExecStartPost).
 */
export function renderService(input: RenderInput): RenderedService {
  const { layout, checkout, node } = input;
  const cli = join(checkout, GATEWAY_FACTS.cli);
  const path = [dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
  const backoff =
    (input.systemdVersion ?? 0) >= SYSTEMD_BACKOFF_VERSION
      ? '# Growing backoff between restarts (systemd >= 254): from 5 s up to 5 min in 6 steps.\nRestartSteps=6\nRestartMaxDelaySec=5min'
      : '';
  const key = input.settings.find(([k]) => k === AGENT_KEY_SETTING)?.[1];
  const settings = input.settings.filter(([k]) => k !== AGENT_KEY_SETTING);
  const keyFile = key === undefined || key === '' ? undefined : `${key}\n`;
  const keyed = keyFile === undefined ? {} : { keyFile };
  const common = {
    REPO: checkout,
    NODE: execWord(node),
    CLI: execWord(cli),
    ENV_FILE: layout.envFile.slice(layout.root === '/' ? 0 : layout.root.length),
    PATH: path,
    STATE_DIR: layout.stateDir,
    SCOPE_FLAG: layout.scope === 'system' ? ' --system' : ' --user',
    RESTART_BACKOFF: backoff,
    LOAD_CREDENTIAL:
      keyFile === undefined
        ? ''
        : `\n# The agent key as systemd's credential ($CREDENTIALS_DIRECTORY/${AGENT_KEY_CREDENTIAL}): in no\n# process's environment, so no child of the service inherits it (SPEC B-21).\nLoadCredential=${AGENT_KEY_CREDENTIAL}:${layout.keyFile.slice(layout.root === '/' ? 0 : layout.root.length)}`,
  };
  // The report unit finds the state dir here (it has no flag); the caller may place it itself.
  const envFile = envFileText(
    layout.service,
    settings.some(([k]) => k === STATE_DIR_VARIABLE)
      ? settings
      : [...settings, [STATE_DIR_VARIABLE, layout.stateDir]],
  );
  const reportUnit = fill(readTemplate(checkout, `${REPORT_UNIT}.in`), {
    ...common,
    CONFIG_BASE: layout.configBase,
  });
  if (layout.service === 'gateway') {
    const template = readTemplate(
      checkout,
      layout.scope === 'system' ? 'agentmail-gateway.system.service.in' : 'agentmail-gateway.service.in',
    );
    return {
      unit: fill(template, {
        ...common,
        TIMEOUT_STOP_SEC: `${GATEWAY_FACTS.timeoutStopSec}s`,
        MEMORY_MAX: GATEWAY_FACTS.memoryMax,
      }),
      envFile,
      ...keyed,
      reportUnit,
    };
  }
  const facts = bridgeFactsIn(checkout, layout.service);
  const unit = fill(readTemplate(checkout, 'agentmail-bridge.service.in'), {
    ...common,
    PLATFORM: facts.service,
    DESCRIPTION: facts.description,
    README: facts.readme,
    EXEC_START: bridgeExecStart(facts, input),
    // opencode serve loads the plugin only on the first request naming a directory: boot it.
    BOOT_FLAG: facts.bootUrl === undefined ? '' : ` --boot-url ${facts.bootUrl}`,
    STOP_BUDGET: `${facts.stopBudgetWords}: ${facts.stopBudgetMs / 1000} s`,
    TIMEOUT_STOP_SEC: `${facts.timeoutStopSec}s`,
    MEMORY_MAX: facts.memoryMax,
  });
  return { unit, envFile, ...keyed, reportUnit };
}

/** The data-dir setting of a bridge's env file (`AGENTMAIL_PI_DATA_DIR=…`). */
export function dataDirSetting(facts: BridgeFacts, layout: ServiceLayout): readonly [string, string] {
  return [bridgeDataDirVariable(facts), layout.stateDir];
}
