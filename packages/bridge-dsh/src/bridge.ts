/**
 * The DSH bridge: one per DSH process (and agent name: the kit's bridge lock). The kit
 * (`createBridge`) runs the Gateway side and every mail turn; this module adds only what is DSH's:
 * the turn adapter (agents, sessions, the outcome from `turn/end`), the agent-scoped seams, the
 * heartbeat facts (sessions from persistence headers only, the model catalogue) and P-8.
 */

import {
  type Bridge,
  type BridgeLogger,
  createBridge,
  type HostSnapshot,
  type MailToolContext,
  mailTools,
  readSnapshotParts,
} from '@agentmail/bridge-kit';
import { messageOf, resolveLocale } from '@agentmail/shared-policy';
import type { Context } from '@deepseek-ai/cordis';
import { SessionId } from '@deepseek-ai/dsh-session';
import type {} from '@deepseek-ai/dsh-session-persistence';
import type {} from '@deepseek-ai/dsh-session-title';
import type {} from '@deepseek-ai/dsh-tools';
import type { DshBridgeConfig } from './config.js';
import { BRIDGE_VERSION } from './constants.js';
import { PLATFORM, SANDBOX_UNSUPPORTED } from './host.js';
import { type DshSeamEvent, installSeams, type SeamHost } from './seams.js';
import { DshTurns } from './turns.js';

/** The DSH bridge's own events (on the kit's bus). */
export type DshEvent = DshSeamEvent;

/** The bridge inside one DSH process. */
export class DshBridge {
  readonly bridge: Bridge<DshEvent>;
  readonly turns: DshTurns;
  readonly #ctx: Context;
  readonly #agentErrors = new Map<string, string>();
  /** P-8: the tools service took our pre-execute listener (checked once, at start). */
  readonly #seamVerified: boolean;

  constructor(ctx: Context, config: DshBridgeConfig, log: BridgeLogger) {
    this.#ctx = ctx;
    this.#seamVerified = verifySeam(ctx);
    const seams: SeamHost = {
      turnOf: (id) => this.bridge.activeTurns.byPlatformSession(id),
      toolContext: (id) => this.toolContext(id),
      // DSH asks with its own ask_user_question seam (intercepted in seams.ts): no ask_person.
      mailTools: mailTools(resolveLocale(config.locale), { askPerson: false }),
      emit: (e) => this.bridge.emit(e),
      onAgentError: (id, error) =>
        this.#agentErrors.set(id, `dsh reported an agent error: ${messageOf(error)}`),
    };
    this.turns = new DshTurns({
      ctx,
      installSeams: (agentCtx, id) => installSeams(agentCtx, id, seams),
      ...(config.agentPreset === undefined ? {} : { agentPreset: config.agentPreset }),
      lastAgentError: (id) => this.#agentErrors.get(id),
      clearAgentError: (id) => this.#agentErrors.delete(id),
    });
    this.bridge = createBridge<DshEvent>({
      platform: PLATFORM,
      version: BRIDGE_VERSION,
      config,
      log,
      // The plugin cannot exit dsh: a wrong key is logged and retried (it may be issued later).
      onPermanentStartError: 'retry',
      adapter: {
        snapshot: () => this.#snapshot(),
        sandbox: { unsupported: SANDBOX_UNSUPPORTED },
        turns: this.turns,
        stop: () => this.turns.disposeAll(),
      },
    });
  }

  /** The mail-tool context of a call in DSH agent `id` (a session without a mail turn gets the standalone one). */
  toolContext(id: string | undefined): MailToolContext {
    return (
      (id === undefined ? undefined : this.bridge.activeTurns.byPlatformSession(id)?.toolContext) ??
      this.bridge.standaloneToolContext()
    );
  }

  /** Connect to the Gateway (B-1, B-20), retrying with backoff while it is unreachable. */
  start(): Promise<void> {
    return this.bridge.start().catch(() => undefined);
  }

  /** Stop: abort mail turns, deny pending asks (P-7, B-15), close the stream, dispose mail agents. */
  stop(): Promise<void> {
    return this.bridge.stop();
  }

  async #snapshot(): Promise<HostSnapshot> {
    const parts = await readSnapshotParts(
      {
        sessions: () => this.#sessions(),
        models: async () => (await this.turns.catalogue())?.map((key) => ({ key })),
      },
      (e) => this.bridge.emit(e),
    );
    return {
      ...(this.#seamVerified
        ? { mode_enforcement: 'native' as const }
        : {
            mode_enforcement: 'advisory' as const,
            mode_enforcement_reason: 'the dsh tools service did not take the pre-execute listener',
          }),
      ...parts,
    };
  }

  /**
   * Top-level DSH sessions from persistence headers (no log is parsed: G-25 on a large home);
   * titles only for live sessions, whose log is in memory already.
   */
  async #sessions(): Promise<NonNullable<HostSnapshot['sessions']>> {
    const persistence = this.#ctx.get('sessionPersistence');
    if (persistence === undefined) throw new Error('dsh has no session persistence');
    const titles = this.#ctx.get('sessionTitle');
    return (await persistence.list())
      .filter((h) => h.origin !== 'subagent')
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((h) => {
        const live = this.#ctx.agents.get(SessionId(h.id));
        const title = live && titles ? titles.get(live.session)?.title : undefined;
        return { platform_id: h.id, path: h.cwd ?? '', ...(title ? { title } : {}) };
      });
  }
}

/**
 * P-8: `native` only once the seam is verified: the tools service accepts a `tools/pre-execute`
 * listener (each mail agent's own listener is installed in its setup, or the agent is not created
 * and the turn fails).
 */
function verifySeam(ctx: Context): boolean {
  try {
    if (ctx.get('tools') === undefined) return false;
    const off = ctx.on('tools/pre-execute', (_exec, next) => next());
    off();
    return true;
  } catch {
    return false;
  }
}
