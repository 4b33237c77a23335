/**
 * pi's read-only tools in the workspace sandbox (SPEC P-1, P-12): `read`, `ls`, `find` and `grep`
 * with every file access inside bubblewrap under the turn's policy, so a place the sandbox hides
 * (pi's agent directory with the model keys, the bridge's data directory, the user's secrets)
 * reads as empty or missing, whatever path or symlink the model names.
 *
 * `read`, `ls` and `find` are pi's own definitions on other operations (pi 1.6
 * `create*ToolDefinition(cwd, { operations })`): pi keeps the parameters, the output and its
 * bounds. pi's `grep` has no such seam (it spawns ripgrep itself), so its definition keeps pi's
 * name, parameters and output shape and runs ripgrep in the sandbox. Each call starts bubblewrap
 * once (a start costs 5–20 ms): the operations of one call share one run (a fresh set per call).
 */
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { type Sandbox, sandboxRun } from '@agentmail/bridge-kit';
import type { Locale } from '@agentmail/shared-policy';
import type {
  FindOperations,
  LsOperations,
  ReadOperations,
  ToolDefinition,
} from '@earendil-works/pi-coding-agent';
import { Minimatch } from 'minimatch';
import type { PiSdkModule } from './pi-sdk.js';
import { sandboxedGrep } from './sandbox-grep.js';
import { NOT_FOUND_EXIT, runRecords } from './sandbox-records.js';

/** Bytes pi's image detection looks at (its `IMAGE_TYPE_SNIFF_BYTES`). */
const IMAGE_SNIFF_BYTES = 4100;
/** What `cat` may say on stderr that is kept for the read's error, in characters. */
const STDERR_MAX_CHARS = 4_000;

/**
 * pi's `read`, `ls`, `find` and `grep` for one turn in `cwd`, every file access inside `sandbox`
 * (the kit's `turnSandbox` over `piSandboxPolicy`). Registered with `defaultActive: false`:
 * each is active exactly when pi's own would be (pi offers `read` by default, `ls`, `find` and
 * `grep` only when the session's tool set names them), not because an extension registered it.
 * `agentDir` is where pi keeps its own ripgrep (`bin/rg`), looked for before `rg` on `PATH`.
 */
export function piSandboxedReadTools(
  sdk: PiSdkModule,
  sandbox: Sandbox,
  cwd: string,
  options: { agentDir: string; locale: Locale },
): ToolDefinition[] {
  const read = sdk.createReadToolDefinition(cwd);
  const confinedRead: typeof read = {
    ...read,
    defaultActive: false,
    execute: async (id, params, signal, onUpdate, ctx) => {
      const files = new SandboxFiles(sandbox, sdk);
      try {
        return await sdk
          .createReadToolDefinition(cwd, { operations: files.operations() })
          .execute(id, params, signal, onUpdate, ctx);
      } finally {
        files.close();
      }
    },
  };
  const ls = sdk.createLsToolDefinition(cwd);
  const confinedLs: typeof ls = {
    ...ls,
    defaultActive: false,
    execute: (id, params, signal, onUpdate, ctx) =>
      sdk
        .createLsToolDefinition(cwd, { operations: listOperations(sandbox, signal) })
        .execute(id, params, signal, onUpdate, ctx),
  };
  const find = sdk.createFindToolDefinition(cwd);
  const confinedFind: typeof find = {
    ...find,
    defaultActive: false,
    execute: (id, params, signal, onUpdate, ctx) =>
      sdk
        .createFindToolDefinition(cwd, { operations: findOperations(sandbox, signal) })
        .execute(id, params, signal, onUpdate, ctx),
  };
  const grep = sdk.createGrepToolDefinition(cwd);
  const confinedGrep: typeof grep = {
    ...grep,
    defaultActive: false,
    execute: (_id, params, signal, _onUpdate, ctx) =>
      sandboxedGrep(sdk, sandbox, { ...options, cwd: ctx?.cwd || cwd }, params, signal),
  };
  return [confinedRead, confinedLs, confinedFind, confinedGrep] as unknown as ToolDefinition[];
}

/**
 * The files one `read` call looks at, each read once by `cat` in the sandbox: pi's `access`,
 * image detection and streaming of that path all come from the same run (pi asks in that order).
 * Chunks are handed to pi as they arrive (pi keeps only the lines it shows); `close()` ends what
 * is still running.
 */
class SandboxFiles {
  readonly #runs = new Map<string, SandboxFile>();
  constructor(
    readonly sandbox: Sandbox,
    readonly sdk: PiSdkModule,
  ) {}

  #file(path: string): SandboxFile {
    let file = this.#runs.get(path);
    if (!file) {
      file = new SandboxFile(this.sandbox, path);
      this.#runs.set(path, file);
    }
    return file;
  }

  /** pi's read operations on this call's runs. */
  operations(): ReadOperations {
    return {
      access: (path) => this.#file(path).ready(),
      detectImageMimeType: async (path) =>
        detectImage(this.sdk, await this.#file(path).head(IMAGE_SNIFF_BYTES)),
      createReadStream: (path) => this.#file(path).chunks(),
      readFile: (path) => this.#file(path).whole(),
    };
  }

  close(): void {
    for (const file of this.#runs.values()) file.stop();
  }
}

/**
 * One file read by `cat` inside the sandbox; its chunks buffered until pi takes them. They arrive
 * by callback, one event each, and pi takes each before the next (its line selection is
 * synchronous), so the buffer holds a chunk or two of a text file, not the file.
 */
class SandboxFile {
  readonly #stop = new AbortController();
  readonly #changed = new EventEmitter();
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  #ended = false;
  #error: Error | undefined;

  constructor(sandbox: Sandbox, path: string) {
    let said = '';
    sandboxRun(sandbox, ['/bin/cat', '--', path], {
      onStdout: (d) => {
        this.#chunks.push(d);
        this.#bytes += d.length;
        this.#changed.emit('change');
      },
      onStderr: (d) => {
        if (said.length < STDERR_MAX_CHARS) said += d.toString('utf8');
      },
      signal: this.#stop.signal,
    })
      .then(
        ({ exitCode }) => {
          // The sandbox's own words: `cat: …: No such file or directory` for a hidden place.
          if (exitCode !== 0 && !this.#stop.signal.aborted)
            this.#error = new Error(said.trim() || `cat exited with code ${exitCode}`);
        },
        (err: unknown) => {
          this.#error = err instanceof Error ? err : new Error(String(err));
        },
      )
      .finally(() => {
        this.#ended = true;
        this.#changed.emit('change');
      });
  }

  async #until(enough: () => boolean): Promise<void> {
    while (!enough() && !this.#ended) await once(this.#changed, 'change');
  }

  /** Resolves once the file gave a byte or ended; rejects with `cat`'s words when it could not read it. */
  async ready(): Promise<void> {
    await this.#until(() => this.#bytes > 0);
    if (this.#bytes === 0 && this.#error) throw this.#error;
  }

  /** The first `bytes` of the file (fewer when it is shorter), without taking them. */
  async head(bytes: number): Promise<Buffer> {
    await this.#until(() => this.#bytes >= bytes);
    return Buffer.concat(this.#chunks).subarray(0, bytes);
  }

  /** Every chunk, in order, as it arrives; throws what ended the read early. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const chunk = this.#chunks.shift();
        if (chunk) yield chunk;
        else if (this.#ended) break;
        else await once(this.#changed, 'change');
      }
      if (this.#error) throw this.#error;
    } finally {
      this.stop();
    }
  }

  /** The whole file (an image pi sends on; pi reads it whole too). */
  async whole(): Promise<Buffer> {
    await this.#until(() => false);
    if (this.#error) throw this.#error;
    return Buffer.concat(this.#chunks);
  }

  /** Ends the run when it is still going. */
  stop(): void {
    if (!this.#ended) this.#stop.abort();
  }
}

/**
 * The first bytes of the images pi detects (JPEG, PNG, GIF, RIFF/WebP, BMP): a head starting
 * otherwise is no image to pi, and skips the temporary file below (about 4 ms of a read).
 */
const IMAGE_FIRST_BYTES = new Set([0xff, 0x89, 0x47, 0x52, 0x42]);

/**
 * pi's own image detection on the head of a file read in the sandbox. pi exports it only for a
 * path, so the head (at most 4,100 bytes, already read through the sandbox) is put in a private
 * temporary file for it.
 */
async function detectImage(sdk: PiSdkModule, head: Buffer): Promise<string | null | undefined> {
  if (head.length === 0 || !IMAGE_FIRST_BYTES.has(head[0] ?? -1)) return null;
  const dir = await mkdtemp(join(tmpdir(), 'agentmail-pi-read-'));
  try {
    const file = join(dir, 'head');
    await writeFile(file, head, { mode: 0o600 });
    return await sdk.detectSupportedImageMimeTypeFromFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One directory as `find` sees it inside the sandbox: its own type and its entries' (symlinks followed). */
interface Listing {
  /** `find -printf %Y` of the directory itself; undefined when it is not there. */
  type?: string;
  entries: Map<string, string>;
  /** Why it could not be read whole (what `find` said). */
  error?: string;
}

/**
 * pi's `ls` operations for one call: the directory is listed once, by `find` in the sandbox, with
 * every entry's type (following symlinks as pi's `stat` does); `exists`, `stat` and `readdir`
 * answer from that listing.
 */
function listOperations(sandbox: Sandbox, signal: AbortSignal | undefined): LsOperations {
  const listings = new Map<string, Promise<Listing>>();
  const listingOf = (dir: string): Promise<Listing> => {
    let listing = listings.get(dir);
    if (!listing) {
      listing = listDirectory(sandbox, dir, signal);
      listings.set(dir, listing);
    }
    return listing;
  };
  const typeOf = async (path: string): Promise<string | undefined> => {
    const own = listings.get(path);
    if (own) return (await own).type;
    return (await listingOf(dirname(path))).entries.get(basename(path));
  };
  return {
    exists: async (path) => (await listingOf(path)).type !== undefined,
    stat: async (path) => {
      const type = await typeOf(path);
      // N: a dangling symlink, L: a loop, ?: an error: pi skips what it cannot stat.
      if (type === undefined || 'NL?'.includes(type)) throw new Error(`cannot stat ${path}`);
      return { isDirectory: () => type === 'd' };
    },
    readdir: async (path) => {
      const listing = await listingOf(path);
      if (listing.error !== undefined) throw new Error(listing.error);
      return [...listing.entries.keys()];
    },
  };
}

async function listDirectory(
  sandbox: Sandbox,
  dir: string,
  signal: AbortSignal | undefined,
): Promise<Listing> {
  const listing: Listing = { entries: new Map() };
  // -H: the directory itself is followed when it is a symlink, as pi's stat does; %Y follows each
  // entry. The path is absolute (pi resolves it), so find never takes it for an option.
  const run = await runRecords(
    sandbox,
    ['/usr/bin/find', '-H', resolve(dir), '-maxdepth', '1', '-printf', '%d\\t%Y\\t%f\\0'],
    '\0',
    (record) => {
      const [depth, type, ...name] = record.split('\t');
      if (type === undefined) return undefined;
      if (depth === '0') listing.type = type;
      else if (depth === '1') listing.entries.set(name.join('\t'), type);
      return undefined;
    },
    signal,
  );
  if (run.exitCode !== 0 && listing.type !== undefined)
    listing.error = run.stderr || `find exited with code ${run.exitCode}`;
  return listing;
}

/**
 * pi's `find` operations for one call: one walk by `find` in the sandbox (symlinks not followed,
 * the ignored directories pruned), each path matched as pi's own find does with fd — `*` matches
 * dotfiles, a pattern without `/` matches the name at any depth, an all-lowercase pattern ignores
 * case, directories end with `/` — until the limit. A missing search path is reported by the walk
 * itself (pi's `Path not found`), so `exists` does not cost a second start.
 */
function findOperations(sandbox: Sandbox, signal: AbortSignal | undefined): FindOperations {
  return {
    exists: () => true,
    glob: (pattern, root, { ignore, limit }) => globInSandbox(sandbox, pattern, root, ignore, limit, signal),
  };
}

async function globInSandbox(
  sandbox: Sandbox,
  rawPattern: string,
  root: string,
  ignore: readonly string[],
  limit: number,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  // fd's full paths never hold "./" (pi drops it); 'src/**' must not match 'src' itself (fd's does not).
  const pattern = rawPattern.replace(/^(?:\.\/)+/, '').replace(/\/\*\*$/, '/**/*');
  const inPath = pattern.includes('/');
  const matcher = new Minimatch(pattern, {
    dot: true,
    noext: true,
    matchBase: !inPath,
    nocase: pattern === pattern.toLowerCase(),
  });
  const ignored = ignore.map((g) => new Minimatch(g, { dot: true }));
  // `**/name/**` (pi passes node_modules and .git) is pruned by the walk: never descended into.
  const pruned = ignore.flatMap((g) => /^\*\*\/([^/*?[\]{}!]+)\/\*\*$/.exec(g)?.[1] ?? []);
  const prune =
    pruned.length === 0
      ? []
      : ['(', ...pruned.flatMap((n, i) => [...(i ? ['-o'] : []), '-name', n]), ')', '-prune', '-o'];
  const results: string[] = [];
  // -H: a search path that is a symlink is followed (fd does), nothing below it; the path is
  // absolute (pi resolves it), so find never takes it for an option.
  const run = await runRecords(
    sandbox,
    [
      '/bin/sh',
      '-c',
      `test -e "$1" || exit ${NOT_FOUND_EXIT}; exec /usr/bin/find -H "$@"`,
      'sh',
      resolve(root),
      '-mindepth',
      '1',
      ...prune,
      '-printf',
      '%y\\t%P\\0',
    ],
    '\0',
    (record) => {
      const tab = record.indexOf('\t');
      const type = record.slice(0, tab);
      const path = record.slice(tab + 1);
      if (ignored.some((m) => m.match(path))) return undefined;
      if (!matcher.match(isAbsolute(pattern) ? join(root, path) : path)) return undefined;
      results.push(type === 'd' ? `${path}/` : path);
      return results.length >= limit ? 'stop' : undefined;
    },
    signal,
  );
  if (run.exitCode === NOT_FOUND_EXIT) throw new Error(`Path not found: ${root}`);
  if (run.exitCode !== 0 && !run.stopped && results.length === 0)
    throw new Error(run.stderr || `find exited with code ${run.exitCode}`);
  return results;
}
