/**
 * The DSH turn side of the kit ({@link TurnAdapter}): open a DSH agent for the mail session
 * (`ctx.agents.create` / `resume`, or the live agent), run one `followup` and read the outcome
 * from DSH's own durable signal — the last `turn/end` of the interval after `whenIdle()` (B-7,
 * SPEC §7 DSH). Mail agents stay live between mails (a resumed mail starts at once) up to
 * {@link MAX_LIVE_MAIL_AGENTS}; the least recently used idle ones are disposed beyond that.
 */

import { randomUUID } from 'node:crypto';
import type { AttemptOutcome, TurnAdapter } from '@agentmail/bridge-kit';
import { messageOf } from '@agentmail/shared-policy';
import type { Context } from '@deepseek-ai/cordis';
import {
  type Agent,
  type AgentHandle,
  installModelSelection,
  type ModelSelection,
} from '@deepseek-ai/dsh-agent';
import type {} from '@deepseek-ai/dsh-agent-default-model';
import type {} from '@deepseek-ai/dsh-agent-presets';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { SessionId } from '@deepseek-ai/dsh-session';
import type {} from '@deepseek-ai/dsh-session-persistence';
import type {} from '@deepseek-ai/dsh-session-title';
import { MAIL_SESSION_PREFIX } from './constants.js';
import { GUARDED_TOOLS, PLATFORM } from './host.js';
import { summarizeTurn } from './outcome.js';

/** Most mail agents kept live between mails; older idle ones are disposed (their sessions stay on disk). @default 16 */
export const MAX_LIVE_MAIL_AGENTS = 16;

/** What the DSH turns need from the plugin. */
export interface DshTurnHost {
  /** The plugin's context (services: agents, sessions, agentDefaultModel; optional: agentPresets, sessionTitle, sessionPersistence, llm). */
  ctx: Context;
  /** Install the mail seams on an agent's scope; returns their disposer. */
  installSeams(agentCtx: Context, agentId: string): () => void;
  /** Preset id for new mail sessions where a roster exists (undefined: the roster's default). */
  agentPreset?: string;
  /** The last `agent/error` of an agent since `since` (set by the seams), for a turn without `turn/end`. */
  lastAgentError(agentId: string): string | undefined;
  clearAgentError(agentId: string): void;
}

interface Live {
  handle?: AgentHandle;
  agent: Agent;
  busy: boolean;
}

/** The DSH {@link TurnAdapter}, plus the bridge's view of live mail agents. */
export class DshTurns implements TurnAdapter {
  readonly platform = PLATFORM;
  readonly guardedTools = GUARDED_TOOLS;
  readonly #host: DshTurnHost;
  /** Mail agents this bridge opened (owned handles), most recently used last. */
  readonly #live = new Map<string, Live>();

  constructor(host: DshTurnHost) {
    this.#host = host;
  }

  /** DSH session ids of the live mail agents (for tests and the snapshot). */
  liveIds(): string[] {
    return [...this.#live.keys()];
  }

  async findSession(ref: { platformSessionId: string }): Promise<{ cwd?: string } | undefined> {
    const id = ref.platformSessionId;
    const live = this.#host.ctx.agents.get(SessionId(id));
    if (live) return live.session.header.cwd ? { cwd: live.session.header.cwd } : {};
    const persistence = this.#host.ctx.get('sessionPersistence');
    if (persistence === undefined)
      throw new Error('dsh has no session persistence: a session cannot be resumed');
    const header = (await persistence.list()).find((h) => h.id === id);
    if (header === undefined) return undefined;
    return header.cwd ? { cwd: header.cwd } : {};
  }

  async catalogue(): Promise<readonly string[] | undefined> {
    const llm = this.#host.ctx.get('llm');
    if (llm === undefined) return undefined;
    const keys: string[] = [];
    for (const provider of llm.listProviders())
      for (const model of await llm.listModels(provider.id)) keys.push(`${provider.id}/${model.id}`);
    return keys;
  }

  async disposeSession(ref: { platformSessionId: string }): Promise<void> {
    const live = this.#live.get(ref.platformSessionId);
    this.#live.delete(ref.platformSessionId);
    await live?.handle?.dispose();
  }

  /** Dispose every live mail agent (bridge stop; the plugin's unload would do it too). */
  async disposeAll(): Promise<void> {
    const all = [...this.#live.values()];
    this.#live.clear();
    await Promise.allSettled(all.map((l) => l.handle?.dispose()));
  }

  async runAttempt(
    attempt: Parameters<TurnAdapter['runAttempt']>[0],
    ctx: Parameters<TurnAdapter['runAttempt']>[1],
  ): Promise<AttemptOutcome> {
    const selection = this.#selection(attempt.model);
    const wanted = `${selection.provider}/${selection.model}`;
    let live: Live;
    let sessionId: string;
    try {
      if (attempt.kind === 'new') {
        sessionId = `${MAIL_SESSION_PREFIX}${randomUUID()}`;
        live = await this.#create(sessionId, ctx.cwd, selection);
        const name = this.#pinTitle(live.agent, ctx.mail.subject);
        await ctx.sessionCreated({ platformSessionId: sessionId, ...(name ? { name } : {}) });
      } else {
        sessionId = attempt.session?.platformSessionId ?? '';
        live = await this.#resume(sessionId);
      }
    } catch (err) {
      return {
        ok: false,
        cause: `dsh could not ${attempt.kind === 'new' ? 'create' : 'resume'} the session: ${messageOf(err)}`,
        model: wanted,
      };
    }
    live.busy = true;
    let uninstall: (() => void) | undefined;
    const agent = live.agent;
    // A person's live session adopted by mail: the seams are ours for this turn only.
    if (live.handle === undefined) uninstall = this.#host.installSeams(agent.ctx, sessionId);
    const onAbort = (): void =>
      agent.cancel({ kind: 'hook', reason: `agentmail: ${String(ctx.signal.reason ?? 'stopped')}` });
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await agent.whenIdle();
      if (ctx.signal.aborted)
        return { ok: false, cause: 'the turn was stopped before it started', model: wanted };
      this.#host.clearAgentError(sessionId);
      const firstSeq = agent.session.seq;
      agent.followup(
        createUserMessage({ content: [{ type: 'text', text: ctx.prompt }], source: { kind: 'user' } }),
      );
      await agent.whenIdle();
      await this.#host.ctx.sessions.flush(agent.session).catch(() => undefined);
      const summary = summarizeTurn(agent.session.events, firstSeq);
      const used = agent.session.requestHeader()?.config;
      const title = this.#host.ctx.get('sessionTitle')?.get(agent.session);
      const agentError = this.#host.lastAgentError(sessionId);
      return {
        ok: summary.ok,
        ...(summary.ok
          ? {}
          : { cause: summary.reason === 'none' && agentError ? agentError : summary.cause }),
        finalParts: summary.finalParts,
        model: used ? `${used.provider}/${used.model}` : wanted,
        platformSessionId: sessionId,
        ...(summary.lastEntryId ? { lastEntryId: summary.lastEntryId } : {}),
        ...(title?.source.kind === 'user' ? { sessionName: title.title } : {}),
      };
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      uninstall?.();
      live.busy = false;
      await this.#trim();
    }
  }

  /** The model of an attempt: the kit's choice (B-8), else DSH's own default selection. */
  #selection(model: { provider: string; model: string } | undefined): ModelSelection {
    if (model) return { provider: model.provider, model: model.model };
    return this.#host.ctx.agentDefaultModel.currentSelection();
  }

  /** Compose a mail agent's scope: model selection, the preset (where a roster exists), the seams. */
  #setup(sessionId: string, selection: () => ModelSelection | undefined, preset: string | undefined) {
    return async (agentCtx: Context): Promise<void> => {
      installModelSelection(agentCtx, { current: selection(), assembled: undefined });
      const presets = this.#host.ctx.get('agentPresets');
      if (presets !== undefined) await presets.mount(agentCtx, preset);
      this.#host.installSeams(agentCtx, sessionId);
    };
  }

  async #create(sessionId: string, cwd: string, selection: ModelSelection): Promise<Live> {
    const presets = this.#host.ctx.get('agentPresets');
    // The preset id goes into the session header (resume mounts the same one); it must be resolved first.
    const preset = presets ? (await presets.resolve(this.#host.agentPreset)).id : undefined;
    const handle = await this.#host.ctx.agents.create({
      sessionId: SessionId(sessionId),
      meta: { cwd, ...(preset ? { agentPreset: preset } : {}) },
      agentOptions: { provider: selection.provider, model: selection.model },
      setup: this.#setup(sessionId, () => selection, preset),
    });
    const live: Live = { handle, agent: handle.agent, busy: false };
    this.#live.set(sessionId, live);
    return live;
  }

  async #resume(sessionId: string): Promise<Live> {
    const mine = this.#live.get(sessionId);
    if (mine) {
      this.#live.delete(sessionId);
      this.#live.set(sessionId, mine);
      return mine;
    }
    const running = this.#host.ctx.agents.get(SessionId(sessionId));
    if (running) return { agent: running, busy: false };
    let agent: Agent | undefined;
    // B-8: a resumed session keeps its model: the one its log last used, DSH's default before any.
    const logged = (): ModelSelection | undefined => {
      const config = agent?.session.requestHeader()?.config;
      return config ? { provider: config.provider, model: config.model } : undefined;
    };
    const handle = await this.#host.ctx.agents.resume({
      resumeSessionId: SessionId(sessionId),
      setup: async (agentCtx) => {
        agent = agentCtx.agent;
        const preset = agent?.session.header.agentPreset;
        const selection = logged() ?? this.#host.ctx.agentDefaultModel.currentSelection();
        await this.#setup(sessionId, () => selection, preset)(agentCtx);
      },
    });
    const live: Live = { handle, agent: handle.agent, busy: false };
    this.#live.set(sessionId, live);
    return live;
  }

  /**
   * Pin the DSH title of a new mail session to the mail's subject (a `user` title: DSH generates
   * none, so no title request and no rename echo, B-11).
   * @returns the accepted title, the naming baseline.
   */
  #pinTitle(agent: Agent, subject: string): string | undefined {
    const titles = this.#host.ctx.get('sessionTitle');
    if (titles === undefined || subject.trim() === '') return undefined;
    try {
      return titles.rename(agent.session, subject).title;
    } catch {
      return undefined;
    }
  }

  /** Dispose the least recently used idle mail agents beyond {@link MAX_LIVE_MAIL_AGENTS}. */
  async #trim(): Promise<void> {
    for (const [id, live] of this.#live) {
      if (this.#live.size <= MAX_LIVE_MAIL_AGENTS) return;
      if (live.busy || live.handle === undefined) continue;
      this.#live.delete(id);
      await live.handle.dispose().catch(() => undefined);
    }
  }
}
