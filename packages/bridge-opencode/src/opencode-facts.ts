/**
 * Thin typed helpers over the opencode client a plugin receives (`PluginInput.client`: the v1 SDK
 * client with an in-process fetch), for what the bridge reads and does on opencode. Where v1
 * lacks something (per-session permission rules on create, a permission reply with a message) a
 * v2 client is built on the same transport ({@link v2Client}). Verified against opencode 1.18.33
 * (test/opencode-facts.test.ts runs each one against the real binary).
 */
import type { HeartbeatRequest } from '@agentmail/protocol';
import { HEARTBEAT_MAX_MODELS, HEARTBEAT_MAX_SESSIONS } from '@agentmail/protocol';
import type { FinalPart } from '@agentmail/shared-policy';
import type { OpencodeClient, Session } from '@opencode-ai/sdk';
import { OpencodeClient as OpencodeClientV2, type PermissionRuleset } from '@opencode-ai/sdk/v2';
import type { Client } from '@opencode-ai/sdk/v2/gen/client';

export type { OpencodeClient, OpencodeClientV2, PermissionRuleset };

/** A provider/model pair as opencode's prompt API takes it. */
export interface OpencodeModelRef {
  providerID: string;
  modelID: string;
}

/** What the bridge needs of an opencode session. */
export interface OpencodeSessionInfo {
  id: string;
  /** Working directory (absolute). */
  directory: string;
  title: string;
  /** opencode's generated slug (e.g. `sunny-wolf`), when the server sends one. */
  slug?: string;
  /** Last update, ms since epoch. */
  updatedMs: number;
}

/** opencode's permission replies. */
export type PermissionReply = 'once' | 'always' | 'reject';

/**
 * A v2 client on the same transport as `client` (the plugin's in-process fetch, its base URL and
 * directory header). Verified in-process in opencode 1.18.33 (harness/probe-plugin.ts replies to
 * permissions with it).
 */
export function v2Client(client: OpencodeClient): OpencodeClientV2 {
  return new OpencodeClientV2({ client: (client as unknown as { _client: Client })._client });
}

function failure(what: string, result: { error?: unknown; response?: Response }): Error {
  const status = result.response?.status;
  const detail = result.error === undefined ? '' : `: ${JSON.stringify(result.error).slice(0, 500)}`;
  return new Error(`opencode ${what} failed${status === undefined ? '' : ` (HTTP ${status})`}${detail}`);
}

function toInfo(session: {
  id: string;
  directory: string;
  title: string;
  slug?: string;
  time: { updated: number };
}): OpencodeSessionInfo {
  return {
    id: session.id,
    directory: session.directory,
    title: session.title,
    ...(typeof session.slug === 'string' && session.slug !== '' ? { slug: session.slug } : {}),
    updatedMs: session.time.updated,
  };
}

/**
 * Creates a session for a mail. `permission` rules apply to this session only (e.g.
 * `[{ permission: 'bash', pattern: '*', action: 'ask' }]` makes bash ask in mail sessions while a
 * person's own sessions keep the project config).
 * @throws Error when opencode refuses (message names the HTTP status and opencode's error).
 */
export async function createSession(
  client: OpencodeClient,
  options: { title: string; directory: string; permission?: PermissionRuleset },
): Promise<OpencodeSessionInfo> {
  const result = await v2Client(client).session.create({
    directory: options.directory,
    title: options.title,
    ...(options.permission === undefined ? {} : { permission: options.permission }),
  });
  if (result.data === undefined) throw failure('session.create', result);
  return toInfo(result.data);
}

/**
 * Starts a turn without waiting (HTTP 204 at once; the outcome arrives on the bus: call
 * `TurnTracker.begin` first). Without `model` opencode uses its configured default. opencode
 * accepts an unknown model here and fails the turn later (`session.error` UnknownError "Model
 * not found: p/m." within about 0.1 s). `directory` routes to that directory's instance.
 * @throws Error when opencode does not accept the prompt (e.g. unknown session: HTTP 404).
 */
export async function promptAsync(
  client: OpencodeClient,
  options: {
    sessionId: string;
    text: string;
    model?: OpencodeModelRef;
    agent?: string;
    directory?: string;
    /** Tools switched on or off for this prompt (opencode's `tools` map, e.g. `{ question: false }`). */
    tools?: Record<string, boolean>;
  },
): Promise<void> {
  const result = await client.session.promptAsync({
    path: { id: options.sessionId },
    ...(options.directory === undefined ? {} : { query: { directory: options.directory } }),
    body: {
      parts: [{ type: 'text', text: options.text }],
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.tools === undefined ? {} : { tools: options.tools }),
    },
  });
  if (result.error !== undefined || (result.response?.status ?? 0) >= 300)
    throw failure('session.promptAsync', result);
}

/** The final assistant message of a turn. */
export interface FinalAssistantMessage {
  /** Its `text` parts only (reasoning, tool and step parts left out; synthetic/ignored text too), SPEC B-10. */
  parts: FinalPart[];
  /** Its message id (the relay key's last entry id, SPEC B-10). */
  id: string;
  /** `provider/model` that wrote it. */
  model: string;
}

/**
 * The last assistant message of `sessionId` created at or after `sinceMs` (pass the turn's start
 * so a turn that wrote nothing does not return the previous turn's answer); `undefined` when
 * there is none.
 * @throws Error when the messages cannot be read.
 */
export async function finalAssistantMessage(
  client: OpencodeClient,
  sessionId: string,
  directory?: string,
  sinceMs = 0,
): Promise<FinalAssistantMessage | undefined> {
  const result = await client.session.messages({
    path: { id: sessionId },
    ...(directory === undefined ? {} : { query: { directory } }),
  });
  if (result.data === undefined) throw failure('session.messages', result);
  for (let i = result.data.length - 1; i >= 0; i--) {
    const message = result.data[i];
    if (message === undefined || message.info.role !== 'assistant') continue;
    if (message.info.time.created < sinceMs) return undefined;
    const parts: FinalPart[] = [];
    for (const part of message.parts)
      if (part.type === 'text' && part.synthetic !== true && part.ignored !== true)
        parts.push({ type: 'text', text: part.text });
    return { parts, id: message.info.id, model: `${message.info.providerID}/${message.info.modelID}` };
  }
  return undefined;
}

/**
 * The heartbeat's session snapshot (SPEC G-25, G-37): top-level sessions (no sub-agent
 * children) of every directory in `directories` (each a loaded opencode instance; none = the
 * client's own), de-duplicated, most recently updated first, at most `max`.
 * @throws Error when a list cannot be read (the heartbeat then omits `sessions`).
 */
export async function listSessionsSnapshot(
  client: OpencodeClient,
  directories: readonly string[] = [],
  max: number = HEARTBEAT_MAX_SESSIONS,
): Promise<NonNullable<HeartbeatRequest['sessions']>> {
  const byId = new Map<string, Session & { slug?: string }>();
  const targets = directories.length === 0 ? [undefined] : directories;
  for (const directory of targets) {
    const result = await client.session.list(directory === undefined ? {} : { query: { directory } });
    if (result.data === undefined) throw failure('session.list', result);
    for (const session of result.data) if (session.parentID === undefined) byId.set(session.id, session);
  }
  return [...byId.values()]
    .sort((a, b) => b.time.updated - a.time.updated)
    .slice(0, max)
    .map((s) => ({
      platform_id: s.id,
      path: s.directory,
      ...(s.title === '' ? {} : { title: s.title }),
      ...(typeof s.slug === 'string' && s.slug !== '' ? { slug: s.slug } : {}),
      updated_at: new Date(s.time.updated).toISOString(),
    }));
}

/**
 * The heartbeat's model catalogue (SPEC G-25, G-26): every model of every provider opencode can
 * use (configured or authenticated: `GET /config/providers`), as `provider/model` keys.
 * Only configured providers count: the bundled models.dev snapshot lists hundreds more that have
 * no key. `max` cuts the heartbeat list (the B-8 skip rule uses {@link readCatalogueKeys}).
 * @throws Error when the providers cannot be read (the heartbeat then omits `models`).
 */
export async function readCatalogue(
  client: OpencodeClient,
  directory?: string,
  max: number = HEARTBEAT_MAX_MODELS,
): Promise<NonNullable<HeartbeatRequest['models']>> {
  const result = await client.config.providers(directory === undefined ? {} : { query: { directory } });
  if (result.data === undefined) throw failure('config.providers', result);
  const models: NonNullable<HeartbeatRequest['models']> = [];
  for (const provider of result.data.providers)
    for (const [id, model] of Object.entries(provider.models))
      models.push({ key: `${provider.id}/${id}`, ...(model.name ? { name: model.name } : {}) });
  return models.slice(0, max);
}

/**
 * Every `provider/model` key opencode can run (SPEC B-8: a model missing here is skipped).
 * @throws Error when the providers cannot be read.
 */
export async function readCatalogueKeys(client: OpencodeClient, directory?: string): Promise<string[]> {
  return (await readCatalogue(client, directory, Number.MAX_SAFE_INTEGER)).map((m) => m.key);
}

/**
 * One session by id (adoption, SPEC B-4); `undefined` when opencode does not know it (404).
 * @throws Error on any other failure.
 */
export async function getSession(
  client: OpencodeClient,
  sessionId: string,
  directory?: string,
): Promise<OpencodeSessionInfo | undefined> {
  const result = await client.session.get({
    path: { id: sessionId },
    ...(directory === undefined ? {} : { query: { directory } }),
  });
  if (result.data !== undefined) return toInfo(result.data as Session & { slug?: string });
  if (result.response?.status === 404) return undefined;
  throw failure('session.get', result);
}

/**
 * Sets a session's title (naming sync, SPEC B-11). opencode answers with `session.updated`.
 * @throws Error when opencode refuses.
 */
export async function renameSession(
  client: OpencodeClient,
  sessionId: string,
  title: string,
  directory?: string,
): Promise<void> {
  const result = await client.session.update({
    path: { id: sessionId },
    body: { title },
    ...(directory === undefined ? {} : { query: { directory } }),
  });
  if (result.data === undefined) throw failure('session.update', result);
}

/**
 * The title opencode gives a session created without one (`New session - <ISO time>`, child
 * sessions `Child session - …`); only such a title is replaced by opencode's own title generation.
 */
export const OPENCODE_DEFAULT_TITLE = /^(New session|Child session) - \d{4}-\d{2}-\d{2}T[\d:.]+Z$/;

/** A title change seen on the bus. */
export interface TitleChange {
  sessionId: string;
  title: string;
  previousTitle: string | undefined;
  /** true: opencode's title generation replaced its default title; false: a rename (person, API, plugin). */
  generated: boolean;
}

/**
 * Tracks session titles from `session.created` / `session.updated` events and reports changes
 * (SPEC B-11). opencode 1.18.33 sends the same `session.updated` for its own title generation and
 * for a rename (`PATCH /session/{id}`), with no field telling them apart; generation only ever
 * replaces the default title ({@link OPENCODE_DEFAULT_TITLE}), so that is the distinction.
 */
export class TitleWatcher {
  readonly #titles = new Map<string, string>();

  /** Feeds a bus event; returns the change when it changed a known session's title. */
  onEvent(event: { type: string; properties?: unknown }): TitleChange | undefined {
    if (event.type !== 'session.created' && event.type !== 'session.updated') return undefined;
    const info = (event.properties as { info?: { id?: unknown; title?: unknown } } | undefined)?.info;
    if (typeof info?.id !== 'string' || typeof info.title !== 'string') return undefined;
    const previous = this.#titles.get(info.id);
    this.#titles.set(info.id, info.title);
    if (event.type === 'session.created' || previous === info.title) return undefined;
    return {
      sessionId: info.id,
      title: info.title,
      previousTitle: previous,
      generated: previous !== undefined && OPENCODE_DEFAULT_TITLE.test(previous),
    };
  }
}

/**
 * Answers a permission request (`permission.asked` → `properties.id`). `message` (with
 * `reject`) reaches the model as "The user rejected permission to use this specific tool call
 * with the following feedback: <message>" and the loop goes on; a `reject` without message
 * stops the turn (opencode 1.18.33, pinned in test/opencode-real.test.ts).
 * @throws Error when opencode refuses (e.g. the request is no longer pending).
 */
export async function replyPermission(
  client: OpencodeClient,
  options: { requestId: string; reply: PermissionReply; message?: string; directory?: string },
): Promise<void> {
  const result = await v2Client(client).permission.reply({
    requestID: options.requestId,
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    reply: options.reply,
    ...(options.message === undefined ? {} : { message: options.message }),
  });
  if (result.data === undefined) throw failure('permission.reply', result);
}
