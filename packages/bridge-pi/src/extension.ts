/**
 * The AgentMail pi extension: the mail tools (B-17) and the permission seam (P-1..P-8) as one pi
 * extension. The worker loads it for every mail turn; a person loads the default export into
 * their own pi (`pi -e dist/agentmail-pi-extension.js`, one file built by `build:extension`,
 * see the README) to read and send mail interactively.
 */

import {
  decideGuardedCall,
  dropCredentialVariables,
  GrantStore,
  type MailToolContext,
  mailTools,
  readAgentKey,
} from '@agentmail/bridge-kit';
import { type Locale, PendingPermissions, resolveLocale } from '@agentmail/shared-policy';
import { GatewayClient, SseClient } from '@agentmail/shared-policy/client';
import type { ExtensionAPI, ExtensionFactory, ToolDefinition } from '@earendil-works/pi-coding-agent';
import { GUARDED_TOOLS, PLATFORM } from './host.js';
import { createPermissionHandler, type DecideToolCall } from './permission-seam.js';
import { type MailToolContextSource, piMailTools } from './pi-tools.js';

/** Options of {@link createMailExtension}. */
export interface MailExtensionOptions {
  locale: Locale;
  /** The shared-policy context of each tool run (live client, current mail, send recording). */
  toolContext: MailToolContextSource;
  /** The permission seam's decision; omitted → no `tool_call` handler (tools only). */
  decide?: DecideToolCall;
  /** Called once the `tool_call` handler is registered (P-8: verified, not assumed). */
  onSeamInstalled?: () => void;
  /** Awaited before every mail tool runs (a person's own pi: register the agent first). Must not throw. */
  beforeTool?: () => Promise<void>;
  /**
   * Offer `ask_person` (SPEC P-10): a mail turn, whose tool context asks by mail. A person's own
   * pi asks in its session instead. @default false
   */
  askPerson?: boolean;
  /**
   * pi's own tools replaced for this turn (same names: pi lets an extension override them), e.g.
   * `bash`/`write`/`edit` running in the workspace sandbox (P-12). @default none
   */
  hostTools?: readonly ToolDefinition[];
}

/**
 * A pi extension factory registering the eleven mail tools (and `ask_person` in a mail turn) and
 * (optionally) the permission seam.
 * @example createAgentSession({ resourceLoader: new DefaultResourceLoader({ extensionFactories: [{ name: 'agentmail', factory: createMailExtension(opts) }] }) })
 */
export function createMailExtension(options: MailExtensionOptions): ExtensionFactory {
  return (pi: ExtensionAPI) => {
    const before = options.beforeTool;
    const tools = mailTools(options.locale, { askPerson: options.askPerson === true });
    for (const tool of piMailTools(tools, options.toolContext))
      pi.registerTool(
        before === undefined
          ? tool
          : {
              ...tool,
              execute: async (...args) => {
                await before();
                return tool.execute(...args);
              },
            },
      );
    for (const tool of options.hostTools ?? []) pi.registerTool(tool);
    if (options.decide) {
      pi.on('tool_call', createPermissionHandler(options.decide));
      options.onSeamInstalled?.();
    }
  };
}

/**
 * Registration of the agent for a person's own pi (no daemon registered the name): once at
 * session start and, until it succeeded, again before a mail tool runs (the Gateway may have been
 * down at start). `POST /agent/register` is idempotent, so a name a daemon registered is fine too.
 * A failure is left to the tool itself, whose error then says what is wrong (key, URL, Gateway).
 */
export function registration(register: () => Promise<unknown>): () => Promise<void> {
  let done = false;
  let running: Promise<void> | undefined;
  return async () => {
    if (done) return;
    running ??= register().then(
      () => {
        done = true;
      },
      () => {
        running = undefined;
      },
    );
    await running;
  };
}

/**
 * Entry for a person's own pi (`pi -e`). Configuration from the environment:
 * `AGENTMAIL_GATEWAY_URL`, `AGENTMAIL_AGENT_KEY` (or `AGENTMAIL_AGENT_SECRET`),
 * `AGENTMAIL_AGENT_NAME` (default `pi`), `AGENTMAIL_LOCALE`. With `AGENTMAIL_SESSION_ID` (a
 * Gateway session this pi session works for) the permission seam is installed too, with
 * `AGENTMAIL_PERMISSION_MODE` (default `workspace`) and `AGENTMAIL_GRANT_FILE`; decisions arrive
 * on the extension's own SSE stream (the Gateway fans events out to every stream, G-22). The agent
 * name is registered by the extension itself ({@link registration}), so it needs no daemon.
 * The key (`AGENTMAIL_AGENT_KEY`, or the file `AGENTMAIL_AGENT_KEY_FILE` names) is read once and
 * the credential variables are then removed from pi's environment, so pi's bash tool does not
 * inherit them (SPEC B-21).
 * @throws Error when the Gateway URL or key is missing (pi lists it as an extension load error).
 */
export default function agentMailExtension(pi: ExtensionAPI): void {
  const url = process.env.AGENTMAIL_GATEWAY_URL ?? '';
  const key = readAgentKey(process.env) ?? '';
  if (!url || !key)
    throw new Error(
      'AgentMail extension: set AGENTMAIL_GATEWAY_URL and AGENTMAIL_AGENT_KEY (or AGENTMAIL_AGENT_KEY_FILE) before starting pi with this extension',
    );
  // pi's bash tool runs with this process's environment: the key is read, now out of it (B-21).
  dropCredentialVariables(process.env);
  const agentName = process.env.AGENTMAIL_AGENT_NAME || 'pi';
  const locale = resolveLocale(process.env.AGENTMAIL_LOCALE);
  const sessionId = process.env.AGENTMAIL_SESSION_ID ?? '';
  let client = new GatewayClient({ baseUrl: url, key, allowedRoots: [process.cwd()] });
  const shutdown = new AbortController();
  const pending = new PendingPermissions({ signal: shutdown.signal });
  let sse: SseClient | undefined;
  const startSse = (): void => {
    if (sse) return;
    sse = new SseClient({
      url: client.baseUrl,
      key: client.key,
      signal: shutdown.signal,
      onEvent: (e) => {
        if (e.type === 'permission_decision') pending.resolve(e.data);
      },
    });
    void sse.start();
  };
  const toolContext = (signal: AbortSignal | undefined): MailToolContext => ({
    client,
    identity: { name: agentName, platform: PLATFORM },
    locale,
    reconnect: ({ client: next }) => {
      client = next;
      if (sse) sse.reconfigure({ url: next.baseUrl, key: next.key });
    },
    ...(sessionId ? { mail: { session_id: sessionId } } : {}),
    ...(signal ? { signal } : {}),
  });
  // The name may be one no daemon registered (`AGENTMAIL_AGENT_NAME=mypi`): register it (idempotent).
  const ensureRegistered = registration(() => client.register({ name: agentName, platform: PLATFORM }));
  const grantFile = process.env.AGENTMAIL_GRANT_FILE;
  const grants = new GrantStore(grantFile ? { file: grantFile } : {});
  const factory = createMailExtension({
    locale,
    toolContext,
    beforeTool: ensureRegistered,
    ...(sessionId
      ? {
          decide: (call, how) =>
            decideGuardedCall(
              call,
              {
                platform: PLATFORM,
                guardedTools: GUARDED_TOOLS,
                agentName,
                mode: () => process.env.AGENTMAIL_PERMISSION_MODE,
                sessionId: () => sessionId,
                client: () => client,
                grants,
                waitForDecision: (relayKey, signal) => {
                  startSse();
                  return pending.wait(relayKey, signal ? { signal } : {});
                },
                hasLocalUi: how.hasUI,
                locale,
              },
              how.signal,
            ),
        }
      : {}),
  });
  pi.on('session_start', () => ensureRegistered());
  pi.on('session_shutdown', () => {
    shutdown.abort();
  });
  void factory(pi);
}
