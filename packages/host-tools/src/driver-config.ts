/**
 * Settings every driver of a host with a plugin directory reads the same way: absolute paths from
 * the environment, and the plugin directory (its manifest, its built scripts). Every bad value is
 * `AM_BRIDGE_CONFIG_INVALID` naming the variable and the fix.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';

/** The configuration error of a driver (`AM_BRIDGE_CONFIG_INVALID`). */
export function configInvalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

/**
 * The absolute path in variable `name`, normalised; undefined when unset or empty.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` when it is relative.
 */
export function absolutePathSetting(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  if (!isAbsolute(raw)) throw configInvalid(`${name} must be an absolute path (got "${raw}")`);
  return resolve(raw);
}

/** What {@link checkPluginDir} checks. */
export interface PluginDirCheck {
  /** The variable that set the directory, for the message. */
  variable: string;
  /** The manifest inside it, e.g. `.zcode-plugin/plugin.json`. */
  manifest: string;
  /** Where the plugin lives in the repository, e.g. `packages/bridge-zcode/plugin`. */
  sourceDir: string;
  /** The package whose build writes `dist/`, e.g. `@agentmail/bridge-zcode`. */
  packageName: string;
}

/**
 * Check that `dir` is the AgentMail plugin and is built (`dist/hook.js`, `dist/mcp.js`).
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` saying which file is missing and the fix.
 */
export function checkPluginDir(dir: string, check: PluginDirCheck): void {
  if (!existsSync(join(dir, check.manifest)))
    throw configInvalid(
      `${check.variable}: ${dir} is not the AgentMail plugin (no ${check.manifest}); point it at ${check.sourceDir}`,
    );
  if (!existsSync(join(dir, 'dist', 'hook.js')) || !existsSync(join(dir, 'dist', 'mcp.js')))
    throw configInvalid(
      `the plugin at ${dir} is not built (no dist/hook.js, dist/mcp.js); run \`pnpm --filter ${check.packageName} build\``,
    );
}
