/**
 * Steps 2 and 3 of a mail turn: its working directory (SPEC B-3), a Gateway client whose
 * downloads stay inside it, and its prompt (B-5, B-6).
 */
import { buildTurnPrompt, formatText, planTurn, type TurnPlan } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import type { MailTurnInput } from './turn-input.js';
import type { Location } from './turn-location.js';
import { resolveWorkspace } from './workspace.js';

/** What a located turn runs with. */
export interface TurnSetup {
  /** The working directory (B-3). */
  cwd: string;
  /** The turn's client: the live one's URL and key, downloads only inside `cwd`. */
  client: GatewayClient;
  /** The turn plan (B-5, B-6, B-10: who is answered, whether the reply is relayed). */
  plan: TurnPlan;
  /** The prompt the host gets. */
  prompt: string;
}

/**
 * B-3: the session's own directory or the address path if it exists, else a per-session
 * fallback under `<dataDir>/workspaces` (event `workspace_fallback`, and the prompt says so
 * unless the mail named no path); then the plan and prompt of {@link planTurn}, with the retry
 * note for a retry.
 */
export async function prepareTurn(
  input: MailTurnInput,
  where: Extract<Location, { kind: 'resume' | 'new' }>,
): Promise<TurnSetup> {
  const { mail, locale, emit } = input;
  // B-3: the address path if it exists, else a per-session fallback directory.
  const addressPath = (where.kind === 'resume' ? where.cwd : undefined) || mail.to_workspace;
  const ws = await resolveWorkspace({
    addressPath,
    fallbackRoot: `${input.dataDir.replace(/\/+$/, '')}/workspaces`,
    sessionKey: mail.session_id,
  });
  if (ws.usedFallback)
    emit({ type: 'workspace_fallback', mail_id: mail.mail_id, cwd: ws.cwd, reason: ws.reason ?? '' });
  const client = new GatewayClient({
    baseUrl: input.client.baseUrl,
    key: input.client.key,
    allowedRoots: [ws.cwd],
  });

  const plan = planTurn(
    {
      mail,
      selfName: input.agentName,
      backlog: input.backlog,
      continuedSession: where.kind === 'resume',
      retry: input.retry,
    },
    locale,
  );
  // B-3: the model learns that it is not where the mail pointed (a typo, another machine's path).
  const prompt =
    ws.usedFallback && ws.reason !== undefined && ws.reason !== 'no_path'
      ? `${buildTurnPrompt(plan, mail)}\n\n${formatText(
          'prompt.note.workspace_fallback',
          { path: addressPath, reason: ws.reason.replaceAll('_', ' '), cwd: ws.cwd },
          locale,
        )}`
      : buildTurnPrompt(plan, mail);
  return { cwd: ws.cwd, client, plan, prompt };
}
