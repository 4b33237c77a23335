/**
 * The opencode bridge: one per opencode process, shared by every opencode instance (project
 * directory) that loads the plugin. The kit (`createBridge`) runs the Gateway side and every
 * mail turn; this module adds only what is opencode's: the in-process client, the loaded
 * instances (P-8), the bus-event tracker (B-7), the permission seam and the heartbeat facts.
 */
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Bridge,
  type BridgeLogger,
  createBridge,
  type HostSnapshot,
  type MailToolContext,
  mailTools,
  readSnapshotParts,
  SessionBindings,
} from '@agentmail/bridge-kit';
import type { Hooks, PluginInput } from '@opencode-ai/plugin';
import type { OpencodeBridgeConfig } from './config.js';
import { BRIDGE_VERSION } from './constants.js';
import { PLATFORM, SANDBOX_UNSUPPORTED } from './host.js';
import { listSessionsSnapshot, type OpencodeClient, readCatalogue } from './opencode-facts.js';
import { type OpencodeEvent, PermissionSeam } from './permissions.js';
import { opencodeMailTools } from './tools.js';
import { TurnTracker } from './turn-tracker.js';
import { opencodeTurns } from './turns.js';

export type { OpencodeClient };

/**
 * Bindings written by bridge-opencode 0.1.0 (`<dataDir>/sessions.json`, one map) move into the
 * kit's binding store once, so sessions keep resuming and stay out of the adoption offer (G-37).
 */
async function migrateSessionsJson(dataDir: string, bindings: SessionBindings): Promise<void> {
  const file = join(dataDir, 'sessions.json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return;
  }
  for (const [sessionId, value] of Object.entries((parsed ?? {}) as Record<string, unknown>)) {
    const r = value as { opencodeSessionId?: unknown; setAside?: unknown } | null;
    if (!r) continue;
    for (const aside of Array.isArray(r.setAside) ? r.setAside : [])
      if (typeof aside === 'string') {
        await bindings.bind(sessionId, { platformSessionId: aside });
        await bindings.setAside(sessionId);
      }
    if (typeof r.opencodeSessionId === 'string' && r.opencodeSessionId !== '')
      await bindings.bind(sessionId, { platformSessionId: r.opencodeSessionId });
  }
  await rename(file, `${file}.migrated`);
}

/**
 * The process-wide bridge. Created by the first plugin instance; later instances only add their
 * hooks ({@link OpencodeBridge.hooks}).
 */
export class OpencodeBridge {
  readonly bridge: Bridge<OpencodeEvent>;
  readonly #client: OpencodeClient;
  readonly #dataDir: string;
  readonly #tracker = new TurnTracker();
  readonly #seam: PermissionSeam;
  /** Directories of the opencode instances whose hooks are installed (P-8). */
  readonly #instances = new Set<string>();
  #migrated: Promise<void> | undefined;

  constructor(config: OpencodeBridgeConfig, client: OpencodeClient, log: BridgeLogger) {
    this.#client = client;
    this.#dataDir = config.dataDir;
    this.bridge = createBridge<OpencodeEvent>({
      platform: PLATFORM,
      version: BRIDGE_VERSION,
      config,
      log,
      // The plugin cannot exit opencode: a wrong key is logged and retried (it may be issued later).
      onPermanentStartError: 'retry',
      adapter: {
        snapshot: () => this.#snapshot(),
        sandbox: { unsupported: SANDBOX_UNSUPPORTED },
        turns: opencodeTurns({
          client,
          tracker: this.#tracker,
          hasInstance: (directory) => this.#instances.has(directory),
          emit: (e) => this.bridge.emit(e),
        }),
      },
    });
    this.#seam = new PermissionSeam({
      client,
      turnOf: (sessionId) => this.bridge.activeTurns.byPlatformSession(sessionId),
      emit: (e) => this.bridge.emit(e),
    });
  }

  /**
   * The hooks of one opencode instance: the mail tools for every session, the permission seam for
   * mail-driven sessions, and the event feed of the turn tracker.
   */
  hooks(input: PluginInput): Hooks {
    this.#instances.add(input.directory);
    const tools = opencodeMailTools(mailTools(this.bridge.standaloneToolContext().locale), (ctx) =>
      this.toolContext(ctx.sessionID),
    );
    return {
      tool: tools,
      event: async ({ event }) => {
        const e = event as unknown as { type: string; properties: Record<string, unknown> };
        this.#tracker.onEvent(e);
        if (e.type === 'permission.asked') await this.#seam.onAsked(e.properties);
      },
      'tool.execute.before': (input, output) => this.#seam.beforeTool(input, output),
      'tool.execute.after': async (input) => {
        this.#seam.afterTool(input);
      },
    };
  }

  /** The mail-tool context of a tool run in `sessionId` (a person's session gets no mail). */
  toolContext(sessionId: string): MailToolContext {
    return (
      this.bridge.activeTurns.byPlatformSession(sessionId)?.toolContext ?? this.bridge.standaloneToolContext()
    );
  }

  /** Connect to the Gateway (B-1, B-20), retrying with backoff while it is unreachable. */
  async start(): Promise<void> {
    // Before the kit starts: its binding store reads the migrated files (one file per session).
    this.#migrated ??= migrateSessionsJson(this.#dataDir, new SessionBindings(this.#dataDir)).catch(
      () => undefined,
    );
    await this.#migrated;
    await this.bridge.start().catch(() => undefined);
  }

  /** Stop: deny pending questions (P-7), abort running mail turns, close the stream (B-15). */
  stop(): Promise<void> {
    return this.bridge.stop();
  }

  async #snapshot(): Promise<HostSnapshot> {
    const parts = await readSnapshotParts(
      {
        sessions: () => listSessionsSnapshot(this.#client, [...this.#instances], Number.MAX_SAFE_INTEGER),
        models: () => readCatalogue(this.#client),
      },
      (e) => this.bridge.emit(e),
    );
    return {
      // P-8: the hooks object of at least one instance was handed to opencode.
      ...(this.#instances.size > 0
        ? { mode_enforcement: 'native' as const }
        : {
            mode_enforcement: 'advisory' as const,
            mode_enforcement_reason: 'no opencode instance loaded the plugin',
          }),
      ...parts,
    };
  }
}
