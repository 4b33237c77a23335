import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { API_PREFIX } from '@agentmail/protocol';
import { z } from 'zod';
import { CliError } from './errors.js';

/** Gateway URL used when neither flag, environment nor config file names one. */
export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8787';

/** Environment variable holding the Gateway URL (shared naming scheme, SPEC §8). */
export const ENV_GATEWAY_URL = 'AGENTMAIL_GATEWAY_URL';
/** Environment variable holding the user token. */
export const ENV_TOKEN = 'AGENTMAIL_TOKEN';
/** Environment variable naming the config file. */
export const ENV_CONFIG = 'AGENTMAIL_CONFIG';

/** File mode of the config file: it holds a token, so owner read/write only. */
export const CONFIG_FILE_MODE = 0o600;

/** Contents of the config file written by `agentmail login`. */
export const CliConfigFile = z.strictObject({
  url: z.string().url().optional(),
  token: z.string().min(1).optional(),
});
export type CliConfigFile = z.infer<typeof CliConfigFile>;

/** The CLI's connection settings after merging flags, environment and file. */
export interface ResolvedConfig {
  /** Gateway base URL, without trailing slash. */
  url: string;
  /** User token, when one is configured. */
  token: string | undefined;
  /** Path of the config file consulted (it may not exist). */
  configPath: string;
  /** The config file exists (a missing one is said so in the errors, with how to create it). */
  configExists: boolean;
  /** Where {@link url} came from, in words an error can print ("--url", "the config file …"). */
  urlFrom: string;
  /** Where {@link token} came from, in the same words; undefined without a token. */
  tokenFrom: string | undefined;
}

/** Flags that override the environment and the config file. */
export interface ConfigFlags {
  url?: string | undefined;
  token?: string | undefined;
  config?: string | undefined;
}

/**
 * Path of the config file: `--config`, else `$AGENTMAIL_CONFIG`, else
 * `$XDG_CONFIG_HOME/agentmail/config.json`, else `~/.config/agentmail/config.json`.
 */
export function configPath(flags: ConfigFlags, env: NodeJS.ProcessEnv): string {
  if (flags.config !== undefined && flags.config !== '') return flags.config;
  const fromEnv = env[ENV_CONFIG];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'agentmail', 'config.json');
}

/**
 * Read the config file; a missing file is an empty config.
 * @throws CliError `AM_CLI_CONFIG_INVALID` when the file is not valid JSON of {@link CliConfigFile}.
 */
export async function readConfigFile(path: string): Promise<CliConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError('CONFIG_INVALID', `cannot read config file ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError('CONFIG_INVALID', `config file ${path} is not valid JSON: ${(err as Error).message}`, {
      suggestion: 'rewrite it with `agentmail login --url <url> --token <token>`',
      cause: err,
    });
  }
  const parsed = CliConfigFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field =
      issue === undefined || issue.path.length === 0 ? 'the file' : `field "${issue.path.join('.')}"`;
    throw new CliError('CONFIG_INVALID', `config file ${path}: ${field}: ${issue?.message ?? 'invalid'}`, {
      suggestion:
        'the file holds {"url": "http://host:port", "token": "…"}; rewrite it with `agentmail login`',
    });
  }
  return parsed.data;
}

/**
 * Write the config file with mode 0600 (directory 0700), atomically (temp file + rename).
 * @throws Error from the file system when the directory cannot be created or written.
 */
export async function writeConfigFile(path: string, config: CliConfigFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: CONFIG_FILE_MODE });
  // writeFile's mode only applies when it creates the file: a temp file left by a crashed run
  // keeps its old mode, so set it explicitly.
  await chmod(temp, CONFIG_FILE_MODE);
  await rename(temp, path);
}

function withoutApiPrefix(url: string): string {
  return url.endsWith(API_PREFIX) ? url.slice(0, -API_PREFIX.length) : url;
}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

/** The first set value of flag, environment variable and config file, with where it came from. */
function firstOf(
  flag: [string, string | undefined],
  env: [string, string | undefined],
  file: [string, string | undefined],
): { value: string; from: string } | undefined {
  for (const [from, value] of [flag, env, file]) if (isSet(value)) return { value, from };
  return undefined;
}

/**
 * Merge the connection settings: flags win over the environment (`AGENTMAIL_GATEWAY_URL`,
 * `AGENTMAIL_TOKEN`), which wins over the config file, which wins over the default URL.
 * @throws CliError `AM_CLI_CONFIG_INVALID` for an unreadable config file or a URL that does not parse.
 */
export async function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv): Promise<ResolvedConfig> {
  const path = configPath(flags, env);
  const file = await readConfigFile(path);
  const configExists = existsSync(path);
  const inFile = `the config file ${path}`;
  const url = firstOf(['--url', flags.url], [ENV_GATEWAY_URL, env[ENV_GATEWAY_URL]], [inFile, file.url]) ?? {
    value: DEFAULT_GATEWAY_URL,
    from: `the default: no --url, no ${ENV_GATEWAY_URL}, ${configExists ? `no url in ${path}` : missingConfigWords(path, flags, env)}`,
  };
  const fixAt = url.from === inFile ? `${path} (agentmail login --url <url> --token <token>)` : url.from;
  let parsed: URL;
  try {
    parsed = new URL(url.value);
  } catch {
    throw new CliError('CONFIG_INVALID', `Gateway URL "${url.value}" (from ${url.from}) is not a URL`, {
      suggestion: `write it as http://host:port in ${fixAt}`,
    });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new CliError(
      'CONFIG_INVALID',
      `Gateway URL "${url.value}" (from ${url.from}) is not an http(s) URL`,
      {
        suggestion: `write it as http://host:port in ${fixAt}`,
      },
    );
  // The Gateway serves at the root of its host and port: a path would be dropped by some requests
  // and kept by others, so it is refused here, once, with the URL to give instead (issue 20).
  // An API URL (`…/api/v1`, as in some agent setups) means its base.
  const rest = withoutApiPrefix(parsed.pathname.replace(/\/+$/, ''));
  if (rest !== '' || parsed.search !== '' || parsed.hash !== '')
    throw new CliError(
      'CONFIG_INVALID',
      `Gateway URL "${url.value}" (from ${url.from}) has a path (${parsed.pathname}${parsed.search}${parsed.hash}): the Gateway serves at the root of its host and port, a path is not supported`,
      { suggestion: `give ${parsed.origin} in ${fixAt}` },
    );
  const token = firstOf(['--token', flags.token], [ENV_TOKEN, env[ENV_TOKEN]], [inFile, file.token]);
  return {
    url: parsed.origin,
    token: token?.value,
    configPath: path,
    configExists,
    urlFrom: url.from,
    tokenFrom: token?.from,
  };
}

/**
 * A config file that does not exist, said as such, with the command that creates it (`login`
 * writes the config file the CLI reads; `--config` when that is how it was named).
 */
export function missingConfigWords(path: string, flags: ConfigFlags, env: NodeJS.ProcessEnv): string {
  const named = isSet(flags.config) ? `--config ${path} ` : '';
  const via = named === '' && isSet(env[ENV_CONFIG]) ? ` (from ${ENV_CONFIG})` : '';
  return `and the config file ${path}${via} does not exist (agentmail ${named}login --url <url> --token <token> creates it)`;
}
