/**
 * Putting a bridge's plugin where its host looks for it (the generic steps of the host
 * descriptors): an entry in a JSON config list, or a command of the host.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { CliError } from './errors.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

async function readJsonObject(file: string): Promise<{ [key: string]: Json } | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('FILE_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const value = JSON.parse(text) as Json;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  } catch {
    // Reported below, with the fix.
  }
  throw new CliError(
    'SERVICE_SETUP_FAILED',
    `${file} is not a JSON object (comments are not supported here)`,
    {
      suggestion: 'fix the file (or remove its comments), then run the install again; nothing was changed',
    },
  );
}

/** An entry of a plugin list names `value` (opencode also takes `[path, options]`). */
function names(entry: Json, value: string): boolean {
  return entry === value || (Array.isArray(entry) && entry[0] === value);
}

function listAt(
  root: { [key: string]: Json },
  path: readonly string[],
  file: string,
  create: boolean,
): Json[] | undefined {
  let node: { [key: string]: Json } = root;
  for (const [i, key] of path.entries()) {
    const last = i === path.length - 1;
    const next = node[key];
    if (next === undefined) {
      if (!create) return undefined;
      node[key] = last ? [] : {};
    } else if (
      last ? !Array.isArray(next) : typeof next !== 'object' || next === null || Array.isArray(next)
    ) {
      throw new CliError(
        'SERVICE_SETUP_FAILED',
        `${file}: "${path.slice(0, i + 1).join('.')}" is not ${last ? 'a list' : 'an object'}`,
        {
          suggestion: 'fix the file, then run the install again; nothing was changed',
        },
      );
    }
    node = node[key] as { [key: string]: Json };
  }
  return node as unknown as Json[];
}

function writeJson(file: string, value: Json): Promise<void> {
  return writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, 0o600);
}

/**
 * Add `value` to the list at `path` of the JSON file (created when missing); an entry already
 * naming it is left as it is.
 * @returns whether the file was changed.
 * @throws CliError `AM_CLI_SERVICE_SETUP_FAILED` when the file is not JSON of that shape.
 */
export async function addPluginEntry(file: string, path: readonly string[], value: string): Promise<boolean> {
  const root = (await readJsonObject(file)) ?? {};
  const list = listAt(root, path, file, true) ?? [];
  if (list.some((e) => names(e, value))) return false;
  list.push(value);
  await writeJson(file, root);
  return true;
}

/**
 * Check, without writing, that {@link addPluginEntry} can add to the list at `path` of the file
 * (a missing file is fine), so an install refuses before it changes anything.
 * @throws CliError `AM_CLI_SERVICE_SETUP_FAILED` / `AM_CLI_FILE_UNREADABLE` as addPluginEntry would.
 */
export async function checkPluginList(file: string, path: readonly string[]): Promise<void> {
  listAt((await readJsonObject(file)) ?? {}, path, file, true);
}

/** Remove the entries naming `value` from the list at `path`; @returns whether the file changed. */
export async function removePluginEntry(
  file: string,
  path: readonly string[],
  value: string,
): Promise<boolean> {
  const root = await readJsonObject(file);
  if (root === undefined) return false;
  const list = listAt(root, path, file, false);
  if (list === undefined || !list.some((e) => names(e, value))) return false;
  const kept = list.filter((e) => !names(e, value));
  list.splice(0, list.length, ...kept);
  await writeJson(file, root);
  return true;
}

/** True when the list at `path` of the JSON file names `value` (a missing or bad file: false). */
export async function hasPluginEntry(file: string, path: readonly string[], value: string): Promise<boolean> {
  try {
    const root = await readJsonObject(file);
    return root !== undefined && (listAt(root, path, file, false) ?? []).some((e) => names(e, value));
  } catch {
    return false;
  }
}

/**
 * Run the host executable with a descriptor's `host-command` args (`{package}` replaced by
 * `packageDir`), the bridge README's install; it must be idempotent in the host.
 * @returns the command line as run, for the install's output
 * @throws CliError `AM_CLI_SERVICE_SETUP_FAILED` with the host's own words and `failureHint` when it fails.
 */
export function runHostCommand(
  bin: string,
  step: { readonly args: readonly string[]; readonly failureHint: string },
  packageDir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const args = step.args.map((a) => a.replaceAll('{package}', packageDir));
  const shown = `${basename(bin)} ${args.join(' ')}`;
  return new Promise((resolve, reject) => {
    execFile(bin, args, { env, timeout: 300_000 }, (err, _out, stderr) => {
      if (!err) return resolve(shown);
      reject(
        new CliError(
          'SERVICE_SETUP_FAILED',
          `${shown} failed: ${stderr.trim().split('\n').slice(-3).join(' / ') || err.message}`,
          {
            suggestion: `${step.failureHint}; nothing was kept (the install took back its files), run it again once it works`,
            cause: err,
          },
        ),
      );
    });
  });
}
