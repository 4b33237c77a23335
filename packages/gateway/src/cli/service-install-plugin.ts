/**
 * Putting a bridge's plugin where its host expects it (`service install`), and the record of the
 * host-config entries the install added, so `service uninstall` takes out only those.
 */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { say } from './output.js';
import type { ServiceLayout } from './service-files.js';
import { hostFilePath } from './service-hosts.js';
import type { BridgeFacts } from './service-platforms.js';
import { addPluginEntry, removePluginEntry, runHostCommand } from './service-plugins.js';
import { readIfExists } from './service-scope.js';

/** A host-config entry the install added (and so uninstall may take out). */
export interface AddedEntry {
  file: string;
  list: string[];
  value: string;
}

/**
 * The record of what install added to a host's config, in the service's config dir: uninstall
 * removes only these, never an entry the person had put there before.
 */
export function installedFile(layout: ServiceLayout): string {
  return join(layout.configDir, 'installed.json');
}

export async function readAdded(record: string): Promise<AddedEntry[]> {
  const text = await readIfExists(record);
  if (text === undefined) return [];
  try {
    const value = JSON.parse(text) as { added?: AddedEntry[] };
    return Array.isArray(value.added) ? value.added : [];
  } catch {
    return [];
  }
}

async function recordAdded(
  record: string,
  entry: AddedEntry,
  undo: Array<() => Promise<unknown>>,
): Promise<void> {
  const before = await readIfExists(record);
  const added = (await readAdded(record)).filter((e) => !(e.file === entry.file && e.value === entry.value));
  await writeFileAtomic(record, `${JSON.stringify({ added: [...added, entry] }, null, 2)}\n`, 0o600);
  undo.push(() => (before === undefined ? unlink(record) : writeFileAtomic(record, before, 0o600)));
}

/**
 * Put the bridge's plugin in place (a host-config entry, an env variable, a host command),
 * recording what it added and how to take it back.
 * @returns the line that says what was done, undefined when the bridge loads its own
 */
export async function installPlugin(
  facts: BridgeFacts,
  checkout: string,
  env: NodeJS.ProcessEnv,
  bin: string | undefined,
  undo: Array<() => Promise<unknown>>,
  record: string,
): Promise<string | undefined> {
  const step = facts.plugin;
  switch (step.kind) {
    case 'none':
      return undefined;
    case 'env-dir':
      return say(env, 'ops.service.plugin_env', { path: join(checkout, step.dir), variable: step.variable });
    case 'json-list-entry': {
      const file = hostFilePath(step.file, env);
      const value = join(checkout, step.value);
      const list = [...step.keyPath];
      const added = await addPluginEntry(file, list, value);
      if (added) {
        undo.push(() => removePluginEntry(file, list, value));
        await recordAdded(record, { file, list, value }, undo);
      }
      return say(env, added ? 'ops.service.plugin_added' : 'ops.service.plugin_present', {
        path: value,
        list: list.join('.'),
        file,
      });
    }
    case 'host-command': {
      if (bin === undefined) throw new Error(`${facts.service}: no executable`);
      return runHostCommand(bin, step, join(checkout, facts.packageDir), env);
    }
  }
}
