import type { Command } from 'commander';
import { type ResolvedConfig, resolveConfig } from './config.js';
import { CliError } from './errors.js';
import { HumanApi } from './http.js';
import type { CliIo } from './output.js';

/** Options every command accepts (before or after the command name). */
export interface GlobalOptions {
  /** Gateway base URL. */
  url?: string;
  /** User token. */
  token?: string;
  /** Config file path. */
  config?: string;
  /** Machine-readable output. */
  json?: boolean;
}

/** What a command's action needs: its I/O and a way to reach the Gateway. */
export interface CliContext {
  readonly io: CliIo;
  /** The global options as given to `cmd` (merged with its parents'). */
  globals(cmd: Command): GlobalOptions;
  /** Connection settings from flags, environment and config file. */
  config(cmd: Command): Promise<ResolvedConfig>;
  /** A client of the human/admin API for `cmd`'s settings. */
  api(cmd: Command): Promise<HumanApi>;
}

/** Build the {@link CliContext} for one run of the program. */
export function createContext(io: CliIo): CliContext {
  const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();
  const config = (cmd: Command): Promise<ResolvedConfig> => {
    const g = globals(cmd);
    return resolveConfig({ url: g.url, token: g.token, config: g.config }, io.env);
  };
  return {
    io,
    globals,
    config,
    api: async (cmd) => apiFor(await config(cmd)),
  };
}

/**
 * The client for resolved settings: its errors name the Gateway URL and where the URL and the
 * token came from (flag, environment variable, config file).
 */
export function apiFor(config: ResolvedConfig, options: { timeoutMs?: number } = {}): HumanApi {
  return new HumanApi({
    baseUrl: config.url,
    token: config.token,
    ...options,
    from: {
      urlFrom: config.urlFrom,
      tokenFrom: config.tokenFrom,
      configPath: config.configPath,
      configExists: config.configExists,
    },
  });
}

/**
 * Parse a positive integer option.
 * @throws CliError `AM_CLI_USAGE` naming the option when `value` is not an integer in [min, max].
 */
export function parseIntOption(name: string, value: string, min: number, max: number): number {
  // Digits only: Number() would also take "0x2", "2e0", " 2" and "+2".
  const n = /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new CliError('USAGE', `option "${name}" must be an integer from ${min} to ${max}, got "${value}"`, {
      suggestion: `${name} <a whole number from ${min} to ${max}>, e.g. ${name} ${Math.min(max, Math.max(min, 10))}`,
    });
  }
  return n;
}
