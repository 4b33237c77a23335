/**
 * The shared part of e2e stacks: one real Gateway as a child process (`agentmail serve` on a temp
 * data dir and a random loopback port) and its admin. A test file starts one testbed and starts
 * its stacks on it, each with its own agent, person, working directory, scripted
 * model and proxy (`startStack({ testbed })`), so the Gateway (and its migrations) starts once per
 * file instead of once per test; `startStack()` without one makes a testbed of its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersonApi } from '@agentmail/shared-policy/client';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { harnessClient, personApi } from './api.js';
import { gatewayCliPath } from './gateway-build.js';
import { cleanEnv, ManagedProcess } from './processes.js';

/** Time the Gateway child may take to print its listening line, in ms. @default 30_000 */
export const GATEWAY_START_TIMEOUT_MS = 30_000;

/** Options of {@link startTestbed}. */
export interface TestbedOptions {
  /** Extra arguments for `agentmail serve`. */
  gatewayArgs?: readonly string[];
  /** @default GATEWAY_START_TIMEOUT_MS */
  startTimeoutMs?: number;
}

/** Starts `agentmail serve` on the testbed's directories; resolves once it listens, with its URL. */
async function serveGateway(
  rootDir: string,
  port: string,
  options: TestbedOptions,
): Promise<{ gateway: ManagedProcess; url: string }> {
  const mainJs = await gatewayCliPath();
  const gateway = ManagedProcess.spawn(
    'gateway',
    process.execPath,
    [
      mainJs,
      'serve',
      '--json',
      '--data-dir',
      join(rootDir, 'gateway-data'),
      '--host',
      '127.0.0.1',
      '--port',
      port,
      '--log-level',
      'warn',
      '--requests-per-minute',
      '0',
      // Every answer and event is checked against the protocol schemas (a mismatch is a 500).
      '--check-responses',
      ...(options.gatewayArgs ?? []),
    ],
    { env: cleanEnv({ HOME: join(rootDir, 'home') }), cwd: rootDir },
  );
  try {
    const line = await gateway.waitForLine(
      /"event":"listening"/,
      options.startTimeoutMs ?? GATEWAY_START_TIMEOUT_MS,
    );
    const listening = JSON.parse(line) as { url: string };
    return { gateway, url: listening.url.replace('://localhost', '://127.0.0.1') };
  } catch (error) {
    await gateway.stop().catch(() => {});
    throw error;
  }
}

/**
 * A running Gateway and its admin; see {@link startTestbed}. Stacks on it: `startStack({ testbed })`.
 * Hands out names that no other stack on it uses ({@link Testbed.uniqueName}). {@link close} stops
 * the Gateway and removes its directory; close the stacks on it first.
 */
export class Testbed {
  /** Gateway origin for direct calls (the same across {@link restartGateway}). */
  readonly gatewayUrl: string;
  readonly adminToken: string;
  /** Temp directory of this testbed: the Gateway's data in `gateway-data/`, stacks below it. */
  readonly rootDir: string;
  readonly #options: TestbedOptions;
  readonly #names = new Set<string>();
  #gateway: ManagedProcess;
  #closed: Promise<void> | undefined;

  private constructor(init: {
    gatewayUrl: string;
    adminToken: string;
    gateway: ManagedProcess;
    rootDir: string;
    options: TestbedOptions;
  }) {
    this.gatewayUrl = init.gatewayUrl;
    this.adminToken = init.adminToken;
    this.#gateway = init.gateway;
    this.rootDir = init.rootDir;
    this.#options = init.options;
  }

  /** The Gateway child process (a new one after {@link restartGateway}). */
  get gateway(): ManagedProcess {
    return this.#gateway;
  }

  /** @internal Used by {@link startTestbed}. */
  static async start(options: TestbedOptions = {}): Promise<Testbed> {
    const rootDir = await mkdtemp(join(tmpdir(), 'agentmail-stack-'));
    let gateway: ManagedProcess | undefined;
    try {
      for (const dir of ['gateway-data', 'home']) await mkdir(join(rootDir, dir), { recursive: true });
      const served = await serveGateway(rootDir, '0', options);
      gateway = served.gateway;
      const tokenLine = await gateway.waitForLine(
        /"event":"admin_token"/,
        options.startTimeoutMs ?? GATEWAY_START_TIMEOUT_MS,
      );
      const adminToken = (JSON.parse(tokenLine) as { admin_token: string }).admin_token;
      return new Testbed({ gatewayUrl: served.url, adminToken, gateway, rootDir, options });
    } catch (error) {
      await gateway?.stop().catch(() => {});
      await rm(rootDir, { recursive: true, force: true }).catch(() => {});
      throw error;
    }
  }

  /**
   * Stops the Gateway (SIGTERM, as a service manager does) and starts it again on the same data
   * directory and port: every open connection drops, and clients that reconnect find the same
   * URL, users, keys, web sessions and event log. Resolves once it listens again.
   * @throws {TestkitError} `AM_TESTKIT_STACK_CLOSED`; `AM_TESTKIT_PROCESS_START` /
   *   `AM_TESTKIT_WAIT_TIMEOUT` when it does not come back (e.g. the port was taken meanwhile).
   */
  async restartGateway(): Promise<void> {
    this.#assertOpen();
    await this.#gateway.stop();
    const port = new URL(this.gatewayUrl).port;
    this.#gateway = (await serveGateway(this.rootDir, port, this.#options)).gateway;
  }

  /** The admin's person API (refusals are `AM_TESTKIT_API`). */
  admin(): PersonApi {
    this.#assertOpen();
    return personApi({ url: this.gatewayUrl, token: this.adminToken });
  }

  /**
   * `base` itself when `exact` (a stack on a testbed of its own keeps the names a test gives; the
   * Gateway refuses a taken one), else `base-<6 hex>`, a name no other caller got from this testbed
   * (fixed length, so one name never contains another: requests to a shared scripted model are
   * told apart by the names in their prompts).
   */
  uniqueName(base: string, exact = false): string {
    if (exact) {
      this.#names.add(base);
      return base;
    }
    for (;;) {
      const name = `${base}-${randomBytes(3).toString('hex')}`;
      if (this.#names.has(name)) continue;
      this.#names.add(name);
      return name;
    }
  }

  /**
   * Issues a key for agent `name` (admin API) and registers it with `platform` when given, so mail
   * to it is accepted before any bridge ran.
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses.
   */
  async issueAgent(name: string, platform?: string): Promise<{ name: string; key: string }> {
    const issued = await this.admin().issueAgentKey(name);
    if (platform !== undefined)
      await harnessClient({ url: this.gatewayUrl, token: issued.key }).call('register', {
        body: { name, platform },
      });
    return { name, key: issued.key };
  }

  /** A new directory under the testbed's root (`<root>/<prefix>-<hex>`), created. */
  async makeDir(prefix: string): Promise<string> {
    const dir = join(this.rootDir, `${prefix}-${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Stops the Gateway and removes the directory. Never rejects; idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.gateway.stop().catch(() => {});
      await rm(this.rootDir, { recursive: true, force: true }).catch(() => {});
    })();
    return this.#closed;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  #assertOpen(): void {
    if (this.#closed !== undefined)
      throw new TestkitError(TESTKIT_ERROR_CODES.STACK_CLOSED, 'the testbed is closed; start a new one.');
  }
}

/**
 * Starts a testbed: builds (once, cached by source hash) and runs the Gateway CLI as a child
 * process on a temp data directory and a random loopback port.
 * @throws {TestkitError} `AM_TESTKIT_GATEWAY_BUILD`, `AM_TESTKIT_PROCESS_START` / `AM_TESTKIT_WAIT_TIMEOUT` (the Gateway did not start).
 * @example
 * const testbed = await startTestbed();
 * const stack = await startStack({ testbed, platform: 'pi' });
 */
export function startTestbed(options: TestbedOptions = {}): Promise<Testbed> {
  return Testbed.start(options);
}
