/**
 * The permission hook in a person's own host session with no bridge (a host profile with
 * `standalone: 'own-stream'`, ZCode): the person gave their ZCode the agent's connection
 * (`AGENTMAIL_GATEWAY_URL`, `AGENTMAIL_AGENT_KEY`) and the Gateway session this host session works
 * for (`AGENTMAIL_SESSION_ID`, with `AGENTMAIL_PERMISSION_MODE`, default `workspace`). The hook
 * then asks that person by mail itself and waits for the decision on an event stream of its own —
 * the Gateway fans every event out to all streams of the agent (SPEC G-22). "Always" grants persist
 * per (session, tool) in a file shared by every hook process (P-4): `AGENTMAIL_GRANT_FILE`, else
 * `grants.json` in the plugin's data directory (`ZCODE_PLUGIN_DATA`).
 *
 * A local UI exists here, so every failure yields to the host's own prompt (P-5: no decision),
 * and the host's own rules keep deciding what they decide:
 * - PreToolUse of a guarded tool: `plan` refuses (P-1), an "always" grant allows (lifting the
 *   host's ask), anything else gives no decision — the host asks on its own path;
 * - PermissionRequest (the host itself asks): one question mail, racing the host's own prompt
 *   (whichever answer comes first wins, ZCode `permission-responder-race.ts`).
 *
 * Loaded by the hook runner only in that case (its own bundle file): the mail-driven hook stays light.
 *
 * @module
 */
import { isAbsolute, join } from 'node:path';
import { decideGuardedCall, GrantStore } from '@agentmail/bridge-kit';
import { decideToolCall, isGuardedTool, PendingPermissions, resolveLocale } from '@agentmail/shared-policy';
import { GatewayClient, SseClient } from '@agentmail/shared-policy/client';
import type { HookEvent, HookVerdict, HostProfile } from './hook-profile.js';

/** Time the hook's own event stream may take to open before it gives up (yield), in ms. @default 10_000 */
export const INTERACTIVE_STREAM_OPEN_MS = 10_000;

type Env = Readonly<Record<string, string | undefined>>;

/** The grant file of the interactive hook, or undefined (grants then hold for this process only). */
export function interactiveGrantFile(env: Env): string | undefined {
  const file = env.AGENTMAIL_GRANT_FILE;
  if (file && isAbsolute(file)) return file;
  const data = env.ZCODE_PLUGIN_DATA || env.CLAUDE_PLUGIN_DATA;
  return data && isAbsolute(data) ? join(data, 'grants.json') : undefined;
}

/** Open an event stream of the agent and resolve once it is open; undefined when it did not open in time. */
async function openStream(
  url: string,
  key: string,
  pending: PendingPermissions,
  signal: AbortSignal,
): Promise<SseClient | undefined> {
  let opened: () => void = () => undefined;
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const sse = new SseClient({
    url,
    key,
    signal,
    onOpen: () => opened(),
    onEvent: (e) => {
      if (e.type === 'permission_decision') pending.resolve(e.data);
    },
  });
  void sse.start().catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), INTERACTIVE_STREAM_OPEN_MS);
  });
  const late = await Promise.race([open.then(() => false), timedOut]);
  clearTimeout(timer);
  return late ? undefined : sse;
}

/**
 * Decide one hook event of a person's own session (see the module comment). Never throws: a
 * failure is no decision (the host's own prompt).
 */
export async function decideInteractive(host: HostProfile, event: HookEvent, env: Env): Promise<HookVerdict> {
  const none: HookVerdict = { kind: 'none' };
  try {
    if (event.event === 'SessionStart') return none;
    const locale = resolveLocale(env.AGENTMAIL_LOCALE);
    const sessionId = env.AGENTMAIL_SESSION_ID ?? '';
    const mode = env.AGENTMAIL_PERMISSION_MODE;
    const grantFile = interactiveGrantFile(env);
    const grants = new GrantStore(grantFile ? { file: grantFile } : {});

    if (event.event === 'PreToolUse') {
      if (!isGuardedTool(host.guardedTools, event.toolName)) return none;
      const alwaysGranted = await grants.has(sessionId, event.toolName).catch(() => false);
      const d = decideToolCall({
        mode,
        guardedTools: host.guardedTools,
        toolName: event.toolName,
        alwaysGranted,
        locale,
      });
      if (d.decision === 'allow') return { kind: 'allow' };
      if (d.decision === 'deny') return { kind: 'deny', reason: d.reason ?? '' };
      return none;
    }

    const url = env.AGENTMAIL_GATEWAY_URL ?? '';
    const key = env.AGENTMAIL_AGENT_KEY || env.AGENTMAIL_AGENT_SECRET || '';
    // No deadline of its own: the host ends the wait (its hook timeout, or its own prompt answered
    // first kills the hook), and either way its own prompt decides.
    const stop = new AbortController();
    const pending = new PendingPermissions({ signal: stop.signal });
    try {
      // The stream is open before the question is posted: a quick answer is not missed.
      const sse = await openStream(url, key, pending, stop.signal);
      if (!sse) return none;
      const client = new GatewayClient({ baseUrl: url, key, allowedRoots: [event.cwd || process.cwd()] });
      const outcome = await decideGuardedCall(
        {
          toolName: event.toolName,
          input: event.input,
          toolCallId: event.toolCallId,
          platformSessionId: event.sessionId,
          cwd: event.cwd,
          forceGuarded: true,
        },
        {
          platform: host.platform,
          guardedTools: host.guardedTools,
          agentName: env.AGENTMAIL_AGENT_NAME || host.platform,
          mode: () => mode,
          sessionId: () => sessionId,
          client: () => client,
          grants,
          waitForDecision: (relayKey, signal) => pending.wait(relayKey, signal ? { signal } : {}),
          hasLocalUi: true,
          locale,
        },
        stop.signal,
      );
      if (outcome.allow === true) return { kind: 'allow' };
      if (outcome.allow === false) return { kind: 'deny', reason: outcome.reason };
      return none;
    } finally {
      stop.abort();
    }
  } catch {
    return none;
  }
}
