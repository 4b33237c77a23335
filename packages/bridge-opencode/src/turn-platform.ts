/**
 * One mail turn on opencode (the platform side of shared-policy `runMailTurn`): find or create
 * the opencode session (B-3, B-4), prompt it through the in-process client with the chosen model
 * (B-8), and read the outcome from the bus events (B-7: `promptAsync` returns at once, the result
 * arrives as `session.idle` / `session.error`).
 */
import type { NewMailEvent } from '@agentmail/protocol';
import { type NamingSyncState, namingFingerprint } from '@agentmail/shared-policy';
import type {
  AttemptResult,
  MailToolContext,
  MailTurnPlatform,
  SessionLocation,
  TurnAttempt,
} from '@agentmail/shared-policy/bridge';
import type { OpencodeBridge } from './bridge.js';
import {
  createSession,
  finalAssistantMessage,
  getSession,
  OPENCODE_DEFAULT_TITLE,
  promptAsync,
  readCatalogueKeys,
} from './opencode-facts.js';

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The {@link MailTurnPlatform} of one mail. */
export class OpencodeTurnPlatform implements MailTurnPlatform {
  readonly platform = 'opencode' as const;
  readonly #bridge: OpencodeBridge;
  readonly #mail: NewMailEvent;
  /** The opencode session this mail runs in (adopted, resumed, or made by the attempt). */
  #sessionId = '';
  #resumed = false;

  constructor(bridge: OpencodeBridge, mail: NewMailEvent) {
    this.#bridge = bridge;
    this.#mail = mail;
  }

  async locateSession(mail: NewMailEvent): Promise<SessionLocation> {
    const client = this.#bridge.client;
    if (mail.platform_session_id) {
      const session = await getSession(client, mail.platform_session_id);
      if (!session)
        return {
          kind: 'missing',
          cause: `opencode session ${mail.platform_session_id} was not found (deleted, or on another opencode server)`,
        };
      this.#sessionId = session.id;
      this.#resumed = true;
      return { kind: 'adopted', cwd: session.directory };
    }
    const bound = await this.#bridge.store.get(mail.session_id);
    if (bound) {
      const session = await getSession(client, bound.opencodeSessionId);
      if (session) {
        this.#sessionId = session.id;
        this.#resumed = true;
        return { kind: 'mail', resumed: true, cwd: session.directory };
      }
      this.#bridge.log.warn(
        { session_id: mail.session_id, opencode_session: bound.opencodeSessionId },
        'bound opencode session is gone; the mail starts a new one',
      );
      await this.#bridge.store.unbind(mail.session_id);
    }
    return { kind: 'mail', resumed: false };
  }

  async catalogue(): Promise<readonly string[] | undefined> {
    return readCatalogueKeys(this.#bridge.client).catch(() => undefined);
  }

  async runAttempt(
    attempt: TurnAttempt,
    turn: { prompt: string; cwd: string; toolContext: MailToolContext; signal: AbortSignal; index: number },
  ): Promise<AttemptResult> {
    const bridge = this.#bridge;
    const client = bridge.client;
    const model =
      attempt.kind === 'configured'
        ? { providerID: attempt.provider, modelID: attempt.model }
        : attempt.kind === 'host_default' && attempt.provider && attempt.model
          ? { providerID: attempt.provider, modelID: attempt.model }
          : attempt.kind === 'resume'
            ? await this.#lastModel(turn.cwd)
            : undefined;
    const wanted = model ? `${model.providerID}/${model.modelID}` : '(opencode default)';
    const failed = (cause: string): AttemptResult => ({
      ok: false,
      cause,
      finalParts: [],
      model: wanted,
      platformSessionId: this.#sessionId,
      lastEntryId: '',
    });

    if (!this.#sessionId) {
      try {
        const session = await createSession(client, { title: this.#mail.subject, directory: turn.cwd });
        this.#sessionId = session.id;
        await bridge.store.bind(this.#mail.session_id, session.id);
        // The title we gave is the baseline: only a later rename (by a person) is synced (B-11).
        await bridge.store.setNaming(this.#mail.session_id, {
          fingerprint: namingFingerprint(session.title),
        });
      } catch (err) {
        return failed(`opencode could not create a session in ${turn.cwd}: ${messageOf(err)}`);
      }
    }
    const sessionId = this.#sessionId;
    // P-8: the instance that runs this session must have our hooks (the permission seam).
    if (!bridge.instances.has(turn.cwd) && !this.#resumed)
      return {
        ...failed(
          `the AgentMail plugin is not loaded in the opencode instance for ${turn.cwd}: add it to the global opencode config (~/.config/opencode/opencode.json), not only to one project's`,
        ),
        setupProblem: true,
      };

    bridge.active.set(sessionId, {
      mail: this.#mail,
      gatewaySessionId: this.#mail.session_id,
      toolContext: turn.toolContext,
      cwd: turn.cwd,
      signal: turn.signal,
    });
    const startedAt = Date.now();
    const outcome = bridge.tracker.begin(sessionId);
    const onAbort = (): void => {
      void client.session
        .abort({ path: { id: sessionId }, query: { directory: turn.cwd } })
        .catch(() => undefined);
    };
    turn.signal.addEventListener('abort', onAbort, { once: true });
    try {
      try {
        await promptAsync(client, {
          sessionId,
          directory: turn.cwd,
          text: turn.prompt,
          ...(model ? { model } : {}),
        });
      } catch (err) {
        bridge.tracker.cancel(sessionId);
        return failed(`opencode refused the prompt: ${messageOf(err)}`);
      }
      const result = await outcome;
      // An abort may end without session.error (opencode 1.18): the signal is the truth.
      if (turn.signal.aborted)
        return failed(`the turn was aborted (${String(turn.signal.reason ?? 'stopped')})`);
      const final = await finalAssistantMessage(client, sessionId, turn.cwd, startedAt).catch(
        () => undefined,
      );
      const session = await getSession(client, sessionId).catch(() => undefined);
      const title = session?.title;
      return {
        ok: result.ok,
        cause: result.ok ? '' : result.cause,
        finalParts: final?.parts ?? [],
        model: final?.model || wanted,
        platformSessionId: sessionId,
        lastEntryId: final?.id ?? '',
        ...(title && !OPENCODE_DEFAULT_TITLE.test(title) ? { sessionName: title } : {}),
      };
    } finally {
      turn.signal.removeEventListener('abort', onAbort);
      bridge.active.delete(sessionId);
    }
  }

  /**
   * B-8: a resumed session never switches model — the model of its last answer, named explicitly
   * (without a model opencode picks its own default, which need not be the session's).
   */
  async #lastModel(cwd: string): Promise<{ providerID: string; modelID: string } | undefined> {
    if (!this.#sessionId) return undefined;
    const last = await finalAssistantMessage(this.#bridge.client, this.#sessionId, cwd).catch(
      () => undefined,
    );
    const slash = last?.model.indexOf('/') ?? -1;
    if (!last || slash <= 0) return undefined;
    return { providerID: last.model.slice(0, slash), modelID: last.model.slice(slash + 1) };
  }

  /** B-8: the failed model's session is set aside (kept in opencode, no longer bound to the mail session). */
  async discardAttempt(): Promise<void> {
    if (this.#resumed) return;
    await this.#bridge.store.setAside(this.#mail.session_id);
    this.#sessionId = '';
  }

  readonly namingState = {
    read: async (): Promise<NamingSyncState | undefined> =>
      (await this.#bridge.store.get(this.#mail.session_id))?.naming,
    write: (state: NamingSyncState): Promise<void> =>
      this.#bridge.store.setNaming(this.#mail.session_id, state),
  };
}
