/**
 * The opencode bridge: one per opencode process, shared by every opencode instance (project
 * directory) that loads the plugin. It holds the Gateway connection (shared-policy
 * `BridgeRuntime`: register, heartbeat, SSE, catch-up, per-session queue — SPEC §6.1, B-12..B-15)
 * and turns each mail into an opencode turn through the in-process client (`runMailTurn` over
 * {@link OpencodeTurnPlatform}). Mail-driven sessions get the permission seam (P-1..P-8);
 * sessions a person opened keep opencode's own prompts.
 */
import { join } from 'node:path';
import { HEARTBEAT_MAX_SESSIONS, type NewMailEvent } from '@agentmail/protocol';
import { type Locale, PendingPermissions, resolveLocale } from '@agentmail/shared-policy';
import {
  type BridgeHost,
  type BridgeLogger,
  BridgeRuntime,
  ExplicitSendRecord,
  GrantStore,
  type HeartbeatSnapshot,
  type MailRun,
  type MailToolContext,
  type MailTurnReport,
  mailTools,
  runMailTurn,
} from '@agentmail/shared-policy/bridge';
import type { Hooks, PluginInput } from '@opencode-ai/plugin';
import type { OpencodeBridgeConfig } from './config.js';
import { BRIDGE_VERSION, START_RETRY_MAX_MS } from './constants.js';
import { listSessionsSnapshot, readCatalogue } from './opencode-facts.js';
import { PermissionBridge } from './permissions.js';
import { MailSessionStore } from './session-store.js';
import { opencodeMailTools } from './tools.js';
import { OpencodeTurnPlatform } from './turn-platform.js';
import { TurnTracker } from './turn-tracker.js';

/** The in-process opencode client the plugin receives. */
export type OpencodeClient = PluginInput['client'];

/** What a mail-driven opencode session carries while its turn runs. */
export interface ActiveMailSession {
  mail: NewMailEvent;
  /** Gateway session id the turn works for ('' never: mail-driven sessions always have one). */
  gatewaySessionId: string;
  toolContext: MailToolContext;
  cwd: string;
  /** The turn's signal (timeout, shutdown): a pending question ends with it. */
  signal: AbortSignal;
}

/**
 * The process-wide bridge. Created by the first plugin instance ({@link OpencodeBridge.obtain});
 * later instances only add their hooks.
 */
export class OpencodeBridge {
  readonly config: OpencodeBridgeConfig;
  readonly log: BridgeLogger;
  readonly locale: Locale;
  readonly tracker = new TurnTracker();
  readonly store: MailSessionStore;
  readonly grants: GrantStore;
  readonly pending: PendingPermissions;
  readonly sends: ExplicitSendRecord;
  readonly runtime: BridgeRuntime;
  readonly permissions: PermissionBridge;
  /** opencode session id → the mail its running turn handles (mail-driven sessions only). */
  readonly active = new Map<string, ActiveMailSession>();
  /** Directories of the opencode instances whose hooks are installed (P-8). */
  readonly instances = new Map<string, OpencodeClient>();
  #client: OpencodeClient;
  readonly #shutdown = new AbortController();
  #started: Promise<void> | undefined;

  constructor(config: OpencodeBridgeConfig, client: OpencodeClient, log: BridgeLogger) {
    this.config = config;
    this.log = log;
    this.locale = resolveLocale(config.locale);
    this.#client = client;
    this.store = new MailSessionStore(join(config.dataDir, 'sessions.json'));
    this.grants = new GrantStore({ file: join(config.dataDir, 'grants.json') });
    this.pending = new PendingPermissions({ signal: this.#shutdown.signal, log });
    this.sends = new ExplicitSendRecord();
    this.permissions = new PermissionBridge(this);
    const host: BridgeHost = {
      heartbeat: () => this.#heartbeat(),
      runMail: (run) => this.#runMail(run),
      onPermissionDecision: (event) => {
        this.pending.resolve(event);
      },
      onShutdown: () => {
        this.pending.close();
      },
    };
    this.runtime = new BridgeRuntime(
      {
        gatewayUrl: config.gatewayUrl,
        agentKey: config.agentKey,
        agentName: config.agentName,
        platform: 'opencode',
        version: BRIDGE_VERSION,
        concurrency: config.concurrency,
        heartbeatMs: config.heartbeatMs,
        turnTimeoutMs: config.turnTimeoutMs,
        locale: config.locale,
        // SPEC G-22: the plugin loads in every opencode process (global config); only the one
        // holding the bridge lock of this agent and data directory receives mail, the others
        // keep the mail tools and wait in standby (one log line) to take over.
        lockDir: config.dataDir,
      },
      host,
      this.#announcingConnection(log),
    );
  }

  /**
   * The runtime's logger, plus one "AgentMail connected" line (copied to opencode's own log) when
   * the event stream first opens — the moment mail can arrive, before the start-up catch-up, which
   * may wait on a person's decision for a backlog mail.
   */
  #announcingConnection(log: BridgeLogger): BridgeLogger {
    let announced = false;
    return {
      info: (obj, msg) => {
        log.info(obj, msg);
        if (msg === 'sse open' && !announced) {
          announced = true;
          log.info({ agent: this.config.agentName, gateway: this.config.gatewayUrl }, 'AgentMail connected');
        }
      },
      warn: (obj, msg) => log.warn(obj, msg),
      error: (obj, msg) => log.error(obj, msg),
    };
  }

  /** The in-process client (of the first instance; calls name their directory explicitly). */
  get client(): OpencodeClient {
    return this.#client;
  }

  /** Aborted when the bridge stops. */
  get shutdownSignal(): AbortSignal {
    return this.#shutdown.signal;
  }

  /**
   * The hooks of one opencode instance: the mail tools for every session, the permission seam for
   * mail-driven sessions, and the event feed of the turn tracker.
   */
  hooks(input: PluginInput): Hooks {
    this.instances.set(input.directory, input.client);
    const tools = opencodeMailTools(mailTools(this.locale), (ctx) => this.toolContext(ctx.sessionID));
    return {
      tool: tools,
      event: async ({ event }) => {
        const e = event as unknown as { type: string; properties: Record<string, unknown> };
        this.tracker.onEvent(e);
        if (e.type === 'permission.asked') await this.permissions.onAsked(e.properties);
      },
      'tool.execute.before': (input, output) => this.permissions.beforeTool(input, output),
      'tool.execute.after': async (input) => {
        this.permissions.afterTool(input);
      },
    };
  }

  /** The shared-policy context of a tool run in `sessionId` (a person's session gets no mail). */
  toolContext(sessionId: string): MailToolContext {
    const active = this.active.get(sessionId);
    if (active) return active.toolContext;
    return {
      client: this.runtime.client,
      identity: { name: this.config.agentName, platform: 'opencode' },
      locale: this.locale,
      reconnect: ({ url, key }) => this.runtime.reconnect(url, key),
    };
  }

  /**
   * Connect to the Gateway (B-1, B-20), retrying with backoff while it is unreachable: the plugin
   * cannot exit opencode, so it keeps trying and logs each failure.
   */
  start(): Promise<void> {
    this.#started ??= (async () => {
      let delayMs = 1_000;
      while (!this.#shutdown.signal.aborted) {
        try {
          await this.runtime.start();
          this.log.info({ agent: this.config.agentName }, 'AgentMail catch-up done');
          return;
        } catch (err) {
          this.log.error({ err: String(err), retry_ms: delayMs }, 'AgentMail start failed; retrying');
          await new Promise((resolve) => setTimeout(resolve, delayMs).unref?.());
          delayMs = Math.min(delayMs * 2, START_RETRY_MAX_MS);
        }
      }
    })();
    return this.#started;
  }

  /** Stop: deny pending questions (P-7), abort running mail turns, close the stream (B-15). */
  async stop(): Promise<void> {
    if (this.#shutdown.signal.aborted) return;
    this.#shutdown.abort();
    await this.runtime.stop();
  }

  async #heartbeat(): Promise<HeartbeatSnapshot> {
    const [sessions, models] = await Promise.all([
      // G-37: only sessions a person opened are offered for adoption, not the bridge's own.
      Promise.all([
        listSessionsSnapshot(this.#client, [...this.instances.keys()], Number.MAX_SAFE_INTEGER),
        this.store.ownSessionIds(),
      ])
        .then(([list, own]) => list.filter((s) => !own.has(s.platform_id)).slice(0, HEARTBEAT_MAX_SESSIONS))
        .catch((err: unknown) => {
          this.log.warn({ err: String(err) }, 'opencode sessions unreadable: snapshot omitted (G-25)');
          return undefined;
        }),
      readCatalogue(this.#client).catch((err: unknown) => {
        this.log.warn({ err: String(err) }, 'opencode model catalogue unreadable: omitted (G-25)');
        return undefined;
      }),
    ]);
    return {
      // P-8: the hooks object of at least one instance was handed to opencode.
      ...(this.instances.size > 0
        ? { mode_enforcement: 'native' as const }
        : {
            mode_enforcement: 'advisory' as const,
            mode_enforcement_reason: 'no opencode instance loaded the plugin',
          }),
      ...(sessions === undefined ? {} : { sessions }),
      ...(models === undefined ? {} : { models }),
    };
  }

  #runMail(run: MailRun): Promise<MailTurnReport> {
    const platform = new OpencodeTurnPlatform(this, run.mail);
    return runMailTurn(
      {
        mail: run.mail,
        backlog: run.backlog,
        attempt: run.attempt,
        agentName: this.config.agentName,
        allowedModels: run.allowedModels,
        ...(this.config.hostDefault ? { hostDefault: this.config.hostDefault } : {}),
        client: run.client,
        fallbackRoot: join(this.config.dataDir, 'workspaces'),
        explicitSends: this.sends,
        locale: this.locale,
        signal: run.signal,
        turnTimeoutMs: run.turnTimeoutMs,
        log: this.log,
        onReconnect: (url, key) => this.runtime.reconnect(url, key),
      },
      platform,
    );
  }
}
