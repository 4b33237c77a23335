/**
 * Where a client finds its agent key (SPEC B-21): the variable, a file, or systemd's credential.
 * A bridge reads it once, at start; the CLI's crash reports read it the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentMailError, ERROR_CODES } from '../errors.js';

/** The systemd credential name of the agent key (`LoadCredential=agentmail-agent-key:<file>` in the units). */
export const AGENT_KEY_CREDENTIAL = 'agentmail-agent-key';

/** The variable naming a file that holds the agent key (one line; read once at start). */
export const AGENT_KEY_FILE_VARIABLE = 'AGENTMAIL_AGENT_KEY_FILE';

function invalid(message: string): AgentMailError {
  return new AgentMailError(ERROR_CODES.BRIDGE_CONFIG_INVALID, message);
}

function readKeyFile(path: string, variable: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw invalid(
      `${variable} names ${path}, which cannot be read (${code}): point it at the file that holds the agent key (mode 0600)`,
    );
  }
  const key = text.trim();
  if (key === '')
    throw invalid(`${variable} names ${path}, which is empty: write the agent key into it (one line)`);
  return key;
}

/**
 * The agent key of a bridge, from the first of: `AGENTMAIL_AGENT_KEY` (or `AGENTMAIL_AGENT_SECRET`),
 * the file `AGENTMAIL_AGENT_KEY_FILE` names, systemd's credential
 * `$CREDENTIALS_DIRECTORY/agentmail-agent-key` (SPEC B-21). Trimmed; `undefined` when none is set.
 * @throws AgentMailError `AM_BRIDGE_CONFIG_INVALID` when `AGENTMAIL_AGENT_KEY_FILE` names a file
 *   that cannot be read or is empty (naming the variable and the fix).
 */
export function readAgentKey(source: Readonly<Record<string, string | undefined>>): string | undefined {
  const direct = (source.AGENTMAIL_AGENT_KEY || source.AGENTMAIL_AGENT_SECRET || '').trim();
  if (direct !== '') return direct;
  const file = source[AGENT_KEY_FILE_VARIABLE]?.trim();
  if (file) return readKeyFile(file, AGENT_KEY_FILE_VARIABLE);
  const credentials = source.CREDENTIALS_DIRECTORY?.trim();
  if (credentials) {
    const path = join(credentials, AGENT_KEY_CREDENTIAL);
    try {
      return readFileSync(path, 'utf8').trim() || undefined;
    } catch {
      // Another credential of the unit, not ours: the key is then simply not set.
      return undefined;
    }
  }
  return undefined;
}
