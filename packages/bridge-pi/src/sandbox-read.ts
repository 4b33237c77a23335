/**
 * pi's `read` in the workspace sandbox (SPEC P-1, P-12): every file it reads is read inside
 * bubblewrap under the turn's policy, so a place the sandbox hides (pi's agent directory with the
 * model keys, the bridge's data directory, the user's secrets) reads as empty or missing, whatever
 * path or symlink the model names. It is pi's own definition on other operations (pi 1.6
 * `createReadToolDefinition(cwd, { operations })`): pi keeps the parameters, the output and its
 * bounds. Each call starts bubblewrap once (a start costs 5–20 ms): its operations share one run.
 */
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Sandbox, sandboxRun } from '@agentmail/bridge-kit';
import type { ReadOperations, ToolDefinition } from '@earendil-works/pi-coding-agent';
import type { PiSdkModule } from './pi-sdk.js';

/** Bytes pi's image detection looks at (its `IMAGE_TYPE_SNIFF_BYTES`). */
const IMAGE_SNIFF_BYTES = 4100;
/** What `cat` may say on stderr that is kept for the read's error, in characters. */
const STDERR_MAX_CHARS = 4_000;

/**
 * pi's `read` for one turn in `cwd`, every file access inside `sandbox` (the kit's `turnSandbox`
 * over `piSandboxPolicy`). Registered with `defaultActive: false`: active exactly when pi's own
 * would be (pi offers `read` by default), not because an extension registered it.
 */
export function piSandboxedReadTools(sdk: PiSdkModule, sandbox: Sandbox, cwd: string): ToolDefinition[] {
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
  return [confinedRead] as unknown as ToolDefinition[];
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
 * pi's own image detection on the head of a file read in the sandbox. pi exports it only for a
 * path, so the head (at most 4,100 bytes, already read through the sandbox) is put in a private
 * temporary file for it.
 */
async function detectImage(sdk: PiSdkModule, head: Buffer): Promise<string | null | undefined> {
  if (head.length === 0) return null;
  const dir = await mkdtemp(join(tmpdir(), 'agentmail-pi-read-'));
  try {
    const file = join(dir, 'head');
    await writeFile(file, head, { mode: 0o600 });
    return await sdk.detectSupportedImageMimeTypeFromFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
