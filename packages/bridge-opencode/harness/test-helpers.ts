/**
 * Helpers for the real-binary tests of bridge-opencode on the testkit stack: the opencode server
 * the bridge runs in (`stack.bridge`), an HTTP client for it that plays the person in opencode's
 * own UI, the bridge's JSON log lines and its data directory.
 */
import { join } from 'node:path';
import type { ManagedProcess, Stack } from '@agentmail/testkit';
import type { OpencodeClient } from '@opencode-ai/sdk';
import { opencodeClient } from './serve.js';

/**
 * The `http://127.0.0.1:<port>` opencode serve printed (`opencode server listening on …`).
 * @throws Error when the process printed no such line.
 */
export function opencodeUrl(proc: ManagedProcess): string {
  for (const line of proc.lines()) {
    const url = /opencode server listening on (http:\/\/\S+)/.exec(line)?.[1];
    if (url !== undefined) return url;
  }
  throw new Error(`opencode printed no "listening" line:\n${proc.tail()}`);
}

/**
 * A v1 SDK client over HTTP for the running bridge's opencode server and `directory` (default the
 * stack's workdir): what opencode's own UI does for a person.
 * @throws Error when no bridge runs.
 */
export function personOpencode(stack: Stack, directory: string = stack.workdir): OpencodeClient {
  const proc = stack.bridge;
  if (proc === undefined) throw new Error('no bridge runs: call stack.startBridge first');
  return opencodeClient(opencodeUrl(proc), directory);
}

/**
 * The bridge's data directory under the harness sandbox (`$XDG_DATA_HOME/agentmail/opencode`,
 * see src/config.ts): bindings/, grants.json, fallback workspaces.
 */
export function bridgeDataDir(stack: Stack): string {
  return join(stack.bridgeStateDir, 'opencode', 'xdg-data', 'agentmail', 'opencode');
}
