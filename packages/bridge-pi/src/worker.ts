/**
 * One mail turn on the real pi SDK, run inside a worker child process (see SPEC B-4, B-7, B-8,
 * B-12, §7 pi): the pi {@link TurnAdapter} the kit's `runTurnJob` drives (the kit decides where
 * the turn runs, the prompt, the model order, bindings, failure mail, relay, naming sync). Each
 * attempt opens the session file, loads the AgentMail extension (tools + permission seam, P-8
 * verified) and runs one `prompt()`.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type AttemptOutcome, sandboxRefusal, type TurnAdapter, type TurnJob } from '@agentmail/bridge-kit';
import { messageOf, resolveLocale } from '@agentmail/shared-policy';
import type { ModelRuntime } from '@earendil-works/pi-coding-agent';
import type { EmitPiEvent } from './events.js';
import { createMailExtension } from './extension.js';
import { GUARDED_TOOLS, PLATFORM } from './host.js';
import { importPiSdk } from './pi-sdk.js';
import { piSandboxedTools } from './sandbox.js';
import { findPiSessionFile, mailSessionFile, parseHeader, readFirstLine } from './session-files.js';

// Loaded when worker-main imports this module at spawn, before the job arrives.
const pi = (await importPiSdk()).sdk;

/** pi's retry settings for mail turns: `AGENTMAIL_PI_MAX_RETRIES` (0 = off). @default 2 */
function retrySettings(): { enabled: boolean; maxRetries: number; baseDelayMs: number } {
  const n = Number(process.env.AGENTMAIL_PI_MAX_RETRIES ?? '2');
  const maxRetries = Number.isInteger(n) && n >= 0 ? n : 2;
  return { enabled: maxRetries > 0, maxRetries, baseDelayMs: 1_000 };
}

interface AssistantMessageLike {
  role: 'assistant';
  content: Array<{ type: string; text?: string }>;
  stopReason?: string;
  errorMessage?: string;
  provider?: string;
  model?: string;
}

/**
 * pi as a {@link TurnAdapter}: mail sessions are files under the bridge's data dir
 * (`<dataDir>/sessions/<session>.jsonl`), adopted sessions are found by id (first line only, §7
 * pi); each attempt opens the session file, loads the AgentMail extension and runs one `prompt()`.
 */
export function piTurns(job: TurnJob, agentDir: string, emit: EmitPiEvent): TurnAdapter {
  const mailFile = mailSessionFile(job.dataDir, job.mail.session_id);
  let runtime: Promise<ModelRuntime> | undefined;
  const modelRuntime = (): Promise<ModelRuntime> => {
    runtime ??= pi.ModelRuntime.create({
      authPath: `${agentDir}/auth.json`,
      modelsPath: `${agentDir}/models.json`,
    });
    return runtime;
  };
  const cwdOf = async (file: string): Promise<{ cwd?: string }> => {
    const cwd = parseHeader(await readFirstLine(file))?.cwd;
    return cwd ? { cwd } : {};
  };

  return {
    platform: PLATFORM,
    guardedTools: GUARDED_TOOLS,
    async findSession(ref, how) {
      // B-4: an adopted session is found by its id (first lines only) and never silently replaced.
      const file = how.adopted ? await findPiSessionFile(agentDir, ref.platformSessionId) : ref.locator;
      if (!file || !existsSync(file)) return undefined;
      return cwdOf(file);
    },
    /** A mail session file written before bindings existed: bound by its header id. */
    async legacyBinding() {
      if (!existsSync(mailFile)) return undefined;
      const id = parseHeader(await readFirstLine(mailFile))?.id;
      return id ? { platformSessionId: id, locator: mailFile } : undefined;
    },
    async catalogue() {
      const available = await (await modelRuntime()).getAvailable();
      return available.map((m) => `${m.provider}/${m.id}`);
    },
    // B-8: the failed session is kept aside for the record; the next model gets a fresh file.
    async disposeSession(ref) {
      if (ref.locator && existsSync(ref.locator))
        await rename(ref.locator, `${ref.locator}.failed-${Date.now()}`);
    },
    runAttempt: async (attempt, ctx): Promise<AttemptOutcome> => {
      const wanted = attempt.model?.key ?? '';
      const failed = (cause: string): AttemptOutcome => ({
        ok: false,
        cause,
        model: wanted || '(pi default)',
      });
      let rt: ModelRuntime;
      try {
        rt = await modelRuntime();
      } catch (err) {
        return failed(`pi model runtime: ${messageOf(err)}`);
      }
      const model = attempt.model ? rt.getModel(attempt.model.provider, attempt.model.model) : undefined;
      if (attempt.model && !model) return failed(`model ${wanted} is not in pi's catalogue`);
      const sessionFile =
        attempt.kind === 'resume'
          ? (attempt.session?.locator ??
            (attempt.session
              ? await findPiSessionFile(agentDir, attempt.session.platformSessionId)
              : undefined))
          : mailFile;
      if (!sessionFile) return failed(`pi session ${attempt.session?.platformSessionId ?? ''} has no file`);

      await mkdir(dirname(sessionFile), { recursive: true });
      const settingsManager = pi.SettingsManager.inMemory({
        compaction: { enabled: false },
        retry: retrySettings(),
      });
      let seamInstalled = false;
      const resourceLoader = new pi.DefaultResourceLoader({
        cwd: ctx.cwd,
        agentDir,
        settingsManager,
        noExtensions: true,
        noSkills: true,
        noPromptTemplates: true,
        noThemes: true,
        extensionFactories: [
          {
            name: 'agentmail',
            factory: createMailExtension({
              locale: resolveLocale(job.locale),
              toolContext: (signal) => ({ ...ctx.toolContext, ...(signal ? { signal } : {}) }),
              // The mail turn's tool context asks by mail (P-10).
              askPerson: true,
              // A verified workspace sandbox (P-12): pi's bash, write, edit and its read tools run
              // inside it. Not for a workspace the sandbox cannot hold (/, the home directory):
              // asked per call.
              ...(job.sandbox && !sandboxRefusal(job.sandbox, ctx.cwd)
                ? {
                    hostTools: piSandboxedTools(
                      pi,
                      job.sandbox,
                      ctx.cwd,
                      agentDir,
                      resolveLocale(job.locale),
                    ),
                  }
                : {}),
              onSeamInstalled: () => {
                seamInstalled = true;
              },
              // The mail turn's own seam: mode, grants, asking the person, fail closed (P-1..P-8).
              decide: (call) => ctx.turn.decide(call),
            }),
          },
        ],
      });
      await resourceLoader.reload();
      const sessionManager = pi.SessionManager.open(sessionFile, undefined, ctx.cwd);
      const { session, extensionsResult } = await pi.createAgentSession({
        cwd: ctx.cwd,
        agentDir,
        modelRuntime: rt,
        ...(model ? { model } : {}),
        sessionManager,
        settingsManager,
        resourceLoader,
      });
      const loadErrors = extensionsResult.errors.map((e) => `${e.path}: ${e.error}`);
      // P-8: the seam must really be installed; without it guarded tools would run unasked.
      if (!seamInstalled || loadErrors.length > 0) {
        session.dispose();
        return failed(
          `the AgentMail permission hook did not load: ${loadErrors.join('; ') || 'not registered'}`,
        );
      }
      emit({ type: 'permission_hook_installed', mail_id: job.mail.mail_id });
      await session.bindExtensions({});
      if (attempt.kind === 'new') {
        // B-11, Gateway → pi: a new mail session is named after the subject (the Gateway made the
        // alias from the same subject, G-5); the kit keeps that name as the naming baseline.
        // pi keeps the `session_info` entry in memory until the first message is written.
        if (job.mail.subject.trim() !== '') session.setSessionName(job.mail.subject);
        await ctx.sessionCreated({
          platformSessionId: session.sessionId,
          locator: sessionFile,
          ...(session.sessionName === undefined ? {} : { name: session.sessionName }),
        });
      }

      let final: AssistantMessageLike | undefined;
      const unsubscribe = session.subscribe((event) => {
        const e = event as { type: string; message?: { role?: string } };
        if (e.type === 'message_end' && e.message?.role === 'assistant')
          final = e.message as AssistantMessageLike;
      });
      const onAbort = (): void => void session.abort();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      let thrown: string | undefined;
      try {
        await session.prompt(ctx.prompt);
      } catch (err) {
        thrown = messageOf(err);
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        unsubscribe();
      }
      const used =
        final?.provider && final.model ? `${final.provider}/${final.model}` : wanted || '(pi default)';
      const result: AttemptOutcome = {
        ok: thrown === undefined && final?.stopReason === 'stop',
        cause:
          thrown ??
          (final === undefined
            ? 'pi ended the turn without an assistant message'
            : final.stopReason === 'stop'
              ? ''
              : final.errorMessage || `the model stopped with stopReason "${final.stopReason ?? 'unknown'}"`),
        finalParts: (final?.content ?? []).map((c) => ({ type: c.type, text: c.text })),
        model: used,
        platformSessionId: session.sessionId,
        ...(sessionManager.getLeafId() ? { lastEntryId: sessionManager.getLeafId() ?? '' } : {}),
        ...(session.sessionName === undefined ? {} : { sessionName: session.sessionName }),
      };
      session.dispose();
      return result;
    },
  };
}
