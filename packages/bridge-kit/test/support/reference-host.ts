/**
 * The reference adapter (docs/BRIDGE-CONTRACT.md): an in-process fake coding host, written the way
 * a real bridge adapts its host, used by the kit's own tests. Its "model" is a script: each turn
 * runs steps (a guarded `bash` call decided by the turn's permission seam, then a final text).
 *
 * What a real adapter does at each seam, and what this one does instead:
 * - `snapshot()`: the host's sessions and catalogue (here: its in-memory sessions and two models);
 * - `turns.findSession`: look a session up by id (here: the map);
 * - `turns.runAttempt`: create or resume the session, prompt it with the attempt's model, wait for
 *   the host's own "turn ended" signal, report the final text and the last entry id;
 * - guarded tools: the host's tool hook calls `ctx.turn.decide(call)` and refuses on `allow: false`.
 */
import type { AttemptOutcome, BridgeAdapter, HostSnapshot, TurnAdapter } from '../../src/index.js';

/** One step of the scripted model. */
export type ReferenceStep = { tool: 'bash'; command: string } | { text: string };

/** A session of the reference host. */
export interface ReferenceSession {
  id: string;
  cwd: string;
  name: string;
  model: string;
  /** Every entry: prompts, tool results, answers. */
  entries: string[];
}

/** Knobs of {@link ReferenceHost}. */
export interface ReferenceHostOptions {
  /** The model's steps for a prompt. @default one text step echoing the first prompt line */
  script?: (prompt: string, session: ReferenceSession) => ReferenceStep[];
  /** Models that fail with a provider error. */
  failingModels?: readonly string[];
  /** The host reports no entry ids (a closed client): the kit keys the relay by the mail. */
  noEntryIds?: boolean;
  /**
   * How the host reacts to an abort: `'stop'` ends the turn at once (failed); `'late'` ends it
   * `lateMs` later with a finished answer (a host that notices late); `'ignore'` goes on as if
   * nothing happened (the turn ends when its work does).
   * @default 'stop'
   */
  onAbort?: 'stop' | 'late' | 'ignore';
  /** @default 50 */
  lateMs?: number;
  /** Before the final text, wait for this (a turn that runs until the test lets it finish). */
  hold?: () => Promise<void>;
}

/** An in-process fake host with the adapter a bridge would write for it. */
export class ReferenceHost {
  readonly sessions = new Map<string, ReferenceSession>();
  /** Each tool call and how the seam decided it. */
  readonly toolLog: Array<{ session: string; command: string; allowed: boolean; reason?: string }> = [];
  readonly #options: ReferenceHostOptions;
  #next = 0;

  constructor(options: ReferenceHostOptions = {}) {
    this.#options = options;
  }

  /** A session a person opened in the host's own UI (offered for adoption, G-37). */
  openPersonSession(cwd: string, name: string): ReferenceSession {
    const s: ReferenceSession = {
      id: `ref_person_${++this.#next}`,
      cwd,
      name,
      model: 'ref/good',
      entries: [],
    };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The adapter for `createBridge`. */
  adapter(): BridgeAdapter {
    return {
      snapshot: async (): Promise<HostSnapshot> => ({
        mode_enforcement: 'native',
        sessions: [...this.sessions.values()].map((s) => ({
          platform_id: s.id,
          path: s.cwd,
          title: s.name,
          updated_at: new Date(0).toISOString(),
        })),
        models: [
          { key: 'ref/good', name: 'Good' },
          { key: 'ref/bad', name: 'Bad' },
        ],
      }),
      turns: this.turns(),
    };
  }

  /** The turn side alone (for `runTurnJob` in a child process, or `createBridge`). */
  turns(): TurnAdapter {
    return {
      platform: 'opencode', // a platform name with guarded tool names our scripts use (`bash`)
      findSession: async (ref) => {
        const s = this.sessions.get(ref.platformSessionId);
        return s ? { cwd: s.cwd } : undefined;
      },
      catalogue: async () => ['ref/good', 'ref/bad'],
      runAttempt: async (attempt, ctx): Promise<AttemptOutcome> => {
        let session =
          attempt.kind === 'resume' ? this.sessions.get(attempt.session?.platformSessionId ?? '') : undefined;
        if (!session) {
          session = {
            id: `ref_${++this.#next}`,
            cwd: ctx.cwd,
            name: ctx.mail.subject,
            model: attempt.model?.key ?? 'ref/good',
            entries: [],
          };
          this.sessions.set(session.id, session);
          await ctx.sessionCreated({ platformSessionId: session.id, name: session.name });
        }
        const s = session;
        s.entries.push(ctx.prompt);
        if (this.#options.failingModels?.includes(s.model))
          return { ok: false, cause: `provider error: ${s.model} is overloaded (HTTP 529)`, model: s.model };
        const work = (async (): Promise<AttemptOutcome> => {
          const steps = this.#options.script?.(ctx.prompt, s) ?? [
            { text: `answer to: ${ctx.prompt.split('\n')[0]}` },
          ];
          let text = '';
          for (const step of steps) {
            if ('tool' in step) {
              const outcome = await ctx.turn.decide({
                toolName: step.tool,
                input: { command: step.command },
                toolCallId: `call_${s.entries.length}`,
                platformSessionId: s.id,
              });
              const allowed = outcome.allow === true;
              this.toolLog.push({
                session: s.id,
                command: step.command,
                allowed,
                ...(allowed ? {} : { reason: (outcome as { reason: string }).reason }),
              });
              s.entries.push(allowed ? `ran: ${step.command}` : `refused: ${step.command}`);
            } else text = step.text;
          }
          await this.#options.hold?.();
          s.entries.push(text);
          return {
            ok: true,
            finalParts: [{ type: 'text', text }],
            model: s.model,
            platformSessionId: s.id,
            ...(this.#options.noEntryIds ? {} : { lastEntryId: `${s.id}:${s.entries.length}` }),
          };
        })();
        return new Promise<AttemptOutcome>((resolve) => {
          const how = this.#options.onAbort ?? 'stop';
          const onAbort = (): void => {
            if (how === 'stop')
              resolve({ ok: false, cause: `aborted (${String(ctx.signal.reason)})`, model: s.model });
            else if (how === 'late')
              setTimeout(() => {
                s.entries.push('late answer');
                resolve({
                  ok: true,
                  finalParts: [{ type: 'text', text: 'late answer' }],
                  model: s.model,
                  platformSessionId: s.id,
                  lastEntryId: `${s.id}:${s.entries.length}`,
                });
              }, this.#options.lateMs ?? 50);
          };
          if (ctx.signal.aborted) onAbort();
          else ctx.signal.addEventListener('abort', onAbort, { once: true });
          void work.then(resolve);
        });
      },
    };
  }
}
