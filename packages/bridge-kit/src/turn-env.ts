/**
 * How a bridge keeps the agent key out of the processes the model's tools start (SPEC B-21): no
 * child environment carries it. Where the key is read from: client `readAgentKey`.
 */

import { AgentMailError, ERROR_CODES } from '@agentmail/shared-policy';
import { AGENT_KEY_FILE_VARIABLE } from '@agentmail/shared-policy/client';

/**
 * Variables that carry a credential or say where one lies: never handed to a process the model's
 * tools start. `AGENTMAIL_TOKEN` is a person's CLI token; `CREDENTIALS_DIRECTORY` is systemd's.
 */
export const CREDENTIAL_VARIABLES: readonly string[] = Object.freeze([
  'AGENTMAIL_AGENT_KEY',
  'AGENTMAIL_AGENT_SECRET',
  AGENT_KEY_FILE_VARIABLE,
  'AGENTMAIL_TOKEN',
  'CREDENTIALS_DIRECTORY',
]);

/** An agent key's shape as the Gateway issues them (`amk_` + base64url), found anywhere in a value. */
const AGENT_KEY_IN_VALUE = /amk_[A-Za-z0-9_-]{16,}/;

function invalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

/**
 * The environment of a process the model's tools can reach (a turn worker, a host CLI run, a shell):
 * `base` without any `AGENTMAIL_*` variable but those in `keep`, without the credential variables
 * ({@link CREDENTIAL_VARIABLES}) and without any variable whose value holds an agent key (one
 * copied under another name), plus `extra` (SPEC B-21).
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` when `keep` or `extra` names a credential variable.
 * @example spawn(cmd, args, { env: turnProcessEnv(process.env, { keep: ['AGENTMAIL_LOG_LEVEL'] }) })
 */
export function turnProcessEnv(
  base: Readonly<Record<string, string | undefined>>,
  options: { keep?: readonly string[]; extra?: Readonly<Record<string, string>> } = {},
): NodeJS.ProcessEnv {
  const keep = new Set(options.keep ?? []);
  for (const name of [...keep, ...Object.keys(options.extra ?? {})])
    if (CREDENTIAL_VARIABLES.includes(name))
      throw invalid(`${name} carries a credential: it is never passed to a process the model's tools start`);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || CREDENTIAL_VARIABLES.includes(name)) continue;
    if (name.startsWith('AGENTMAIL_') && !keep.has(name)) continue;
    if (AGENT_KEY_IN_VALUE.test(value)) continue;
    env[name] = value;
  }
  return { ...env, ...(options.extra ?? {}) };
}

/**
 * Removes the credential variables ({@link CREDENTIAL_VARIABLES}) and any variable whose value holds
 * an agent key from `env` in place — for a bridge running inside its host's process (an opencode
 * plugin, a pi extension), whose shell tool spawns with that process's environment. Call it once
 * the key is read. Returns the names removed. The process's initial environment
 * (`/proc/<pid>/environ`) keeps what it was started with: start the host with the key in a file
 * (`AGENTMAIL_AGENT_KEY_FILE`, or the units' `LoadCredential=`) so it has no key there either.
 */
export function dropCredentialVariables(env: NodeJS.ProcessEnv): string[] {
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env))
    if (CREDENTIAL_VARIABLES.includes(name) || (value !== undefined && AGENT_KEY_IN_VALUE.test(value))) {
      delete env[name];
      removed.push(name);
    }
  return removed;
}
