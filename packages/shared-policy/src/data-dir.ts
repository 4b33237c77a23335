/**
 * Where each bridge keeps its state (SPEC §8: a separate state directory per platform). Pure (no
 * `node:` import): the kit reads it at start, the CLI's `service install` and `doctor` use the same
 * rule, so the two cannot drift.
 */
import { AgentMailError, ERROR_CODES } from './errors.js';

/** Where a setting comes from: environment-style names (`AGENTMAIL_*`) to values. */
export type SettingSource = Readonly<Record<string, string | undefined>>;

/** The variable naming a platform's data directory: `AGENTMAIL_<PLATFORM>_DATA_DIR`. */
export function dataDirVariable(platform: string): string {
  return `AGENTMAIL_${platform.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_DATA_DIR`;
}

/**
 * The data directory of a platform's bridge: `AGENTMAIL_<PLATFORM>_DATA_DIR` when set (absolute),
 * else `$XDG_DATA_HOME/agentmail/<platform>` (when `XDG_DATA_HOME` is absolute), else
 * `$HOME/.local/share/agentmail/<platform>` — the same rule for every bridge.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` for a relative `AGENTMAIL_<PLATFORM>_DATA_DIR`.
 */
export function bridgeDataDir(platform: string, source: SettingSource, home: string): string {
  const name = dataDirVariable(platform);
  const raw = source[name];
  if (raw) {
    if (!raw.startsWith('/'))
      throw new AgentMailError(
        ERROR_CODES.BRIDGE_CONFIG_INVALID,
        `${name} must be an absolute path (got "${raw}")`,
      );
    return raw.replace(/\/+$/, '') || '/';
  }
  const xdg = source.XDG_DATA_HOME;
  const base = xdg?.startsWith('/') ? xdg.replace(/\/+$/, '') : `${home.replace(/\/+$/, '')}/.local/share`;
  return `${base}/agentmail/${platform}`;
}
