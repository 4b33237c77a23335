/**
 * The opencode turn side of the kit ({@link TurnAdapter}): find or create the opencode session
 * (B-3, B-4), prompt it through the in-process client with the chosen model (B-8), and read the
 * outcome from the bus events (B-7: `promptAsync` returns at once, the result arrives as
 * `session.idle` / `session.error`, matched by {@link TurnTracker}).
 */

import type { AttemptOutcome, TurnAdapter } from '@agentmail/bridge-kit';
import { messageOf } from '@agentmail/shared-policy';
import { OPENCODE_QUESTION_TOOL } from './constants.js';
import { GUARDED_TOOLS, PLATFORM } from './host.js';
import {
  createSession,
  finalAssistantMessage,
  getSession,
  OPENCODE_DEFAULT_TITLE,
  type OpencodeClient,
  type OpencodeModelRef,
  promptAsync,
  readCatalogueKeys,
} from './opencode-facts.js';
import type { OpencodeEvent } from './permissions.js';
import type { TurnTracker } from './turn-tracker.js';

/** What the opencode turns need from the plugin: the client, the loaded instances, the event tracker. */
export interface OpencodeTurnHost {
  client: OpencodeClient;
  tracker: TurnTracker;
  /** P-8: true when the opencode instance of `directory` loaded the plugin (its hooks are our seam). */
  hasInstance(directory: string): boolean;
  /** The turn's milestones (a turn that hangs shows where). */
  emit(event: OpencodeEvent): void;
}

/**
 * B-8: a resumed session never switches model — the model of its last answer, named explicitly
 * (without a model opencode picks its own default, which need not be the session's).
 */
async function lastModel(
  client: OpencodeClient,
  sessionId: string,
  cwd: string,
): Promise<OpencodeModelRef | undefined> {
  const last = await finalAssistantMessage(client, sessionId, cwd).catch(() => undefined);
  const slash = last?.model.indexOf('/') ?? -1;
  if (!last || slash <= 0) return undefined;
  return { providerID: last.model.slice(0, slash), modelID: last.model.slice(slash + 1) };
}

/** The opencode {@link TurnAdapter}. */
export function opencodeTurns(host: OpencodeTurnHost): TurnAdapter {
  const { client, tracker } = host;
  return {
    platform: PLATFORM,
    guardedTools: GUARDED_TOOLS,
    findSession: async (ref) => {
      const session = await getSession(client, ref.platformSessionId);
      return session ? { cwd: session.directory } : undefined;
    },
    catalogue: () => readCatalogueKeys(client).catch(() => undefined),
    runAttempt: async (attempt, ctx): Promise<AttemptOutcome> => {
      const model: OpencodeModelRef | undefined = attempt.model
        ? { providerID: attempt.model.provider, modelID: attempt.model.model }
        : attempt.kind === 'resume' && attempt.session
          ? await lastModel(client, attempt.session.platformSessionId, ctx.cwd)
          : undefined;
      const wanted = model ? `${model.providerID}/${model.modelID}` : '(opencode default)';
      let sessionId = attempt.session?.platformSessionId ?? '';
      if (attempt.kind === 'new') {
        try {
          const session = await createSession(client, { title: ctx.mail.subject, directory: ctx.cwd });
          sessionId = session.id;
          await ctx.sessionCreated({ platformSessionId: session.id, name: session.title });
        } catch (err) {
          return {
            ok: false,
            cause: `opencode could not create a session in ${ctx.cwd}: ${messageOf(err)}`,
            model: wanted,
          };
        }
        // P-8: the instance that runs this session must have our hooks (the permission seam).
        if (!host.hasInstance(ctx.cwd))
          return {
            ok: false,
            model: wanted,
            setupProblem: true,
            cause: `the AgentMail plugin is not loaded in the opencode instance for ${ctx.cwd}: add it to the global opencode config (~/.config/opencode/opencode.json), not only to one project's`,
          };
      }
      const startedAt = Date.now();
      const outcome = tracker.begin(sessionId);
      const onAbort = (): void => {
        void client.session
          .abort({ path: { id: sessionId }, query: { directory: ctx.cwd } })
          .catch(() => undefined);
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        try {
          await promptAsync(client, {
            sessionId,
            directory: ctx.cwd,
            text: ctx.prompt,
            ...(model ? { model } : {}),
            // opencode's own question tool waits for its UI, which a mail turn lacks (P-9); the
            // model asks with ask_person instead (P-10).
            tools: { [OPENCODE_QUESTION_TOOL]: false },
          });
        } catch (err) {
          tracker.cancel(sessionId);
          return { ok: false, cause: `opencode refused the prompt: ${messageOf(err)}`, model: wanted };
        }
        host.emit({
          type: 'opencode_prompted',
          mail_id: ctx.mail.mail_id,
          session_id: sessionId,
          model: wanted,
          directory: ctx.cwd,
        });
        const result = await outcome;
        host.emit({
          type: 'opencode_prompt_ended',
          mail_id: ctx.mail.mail_id,
          session_id: sessionId,
          ok: result.ok,
          duration_ms: Date.now() - startedAt,
        });
        // An abort may end without session.error (opencode 1.18): the signal is the truth.
        if (ctx.signal.aborted)
          return {
            ok: false,
            cause: `the turn was aborted (${String(ctx.signal.reason ?? 'stopped')})`,
            model: wanted,
          };
        const final = await finalAssistantMessage(client, sessionId, ctx.cwd, startedAt).catch(
          () => undefined,
        );
        const title = (await getSession(client, sessionId).catch(() => undefined))?.title;
        return {
          ok: result.ok,
          ...(result.ok ? {} : { cause: result.cause }),
          finalParts: final?.parts ?? [],
          model: final?.model || wanted,
          platformSessionId: sessionId,
          ...(final?.id ? { lastEntryId: final.id } : {}),
          ...(title && !OPENCODE_DEFAULT_TITLE.test(title) ? { sessionName: title } : {}),
        };
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    },
  };
}
