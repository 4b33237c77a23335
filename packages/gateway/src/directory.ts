/**
 * Who is there: contacts and address suggestions (agents first, read-only discovery), the
 * agents a person sees with the sessions they took part in (H-4), and naming sync (B-11).
 */
import {
  type Address,
  type AgentView,
  type Contact,
  formatAddress,
  isValidAlias,
  ModeEnforcement,
  PermissionMode,
  type SessionSyncResponse,
  type Suggestion,
} from '@agentmail/protocol';
import type { GatewayContext } from './context.js';
import { iso } from './context.js';
import { GatewayError } from './errors.js';
import { presenceOf } from './presence.js';
import { lockAgent, sessionById } from './sessions.js';

/** A JSON array column, or [] when it holds anything else. */
export function parseJsonArray(text: string): unknown[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/**
 * Format an address from stored parts, or undefined (logged) when they do not form one: a name
 * stored before names were validated (`a b`, `x@y`), a workspace path with a control character.
 * Such a row is skipped, so one bad row never turns contacts or suggestions into a 500 for
 * everyone.
 */
function addressOrSkip(ctx: GatewayContext, address: Address, source: string): string | undefined {
  try {
    return formatAddress(address);
  } catch (err) {
    ctx.log.warn(
      // `event` is the line's stable kind (tests and log queries use it, not the message text).
      {
        event: 'directory_entry_skipped',
        source,
        name: address.name,
        path: address.path,
        reason: (err as Error).message,
      },
      'skipped an entry that does not form an address',
    );
    return undefined;
  }
}

/** Every agent and person, agents first (read only discovery); rows without a valid address are skipped. */
export async function listContacts(ctx: GatewayContext): Promise<Contact[]> {
  const now = ctx.config.clock();
  const agents = await ctx.db.selectFrom('agents').selectAll().orderBy('name').execute();
  const users = await ctx.db.selectFrom('users').select('name').orderBy('name').execute();
  const contacts: Contact[] = [];
  for (const a of agents) {
    const address = addressOrSkip(ctx, { name: a.name, path: '', session: '' }, 'agents');
    if (address === undefined) continue;
    contacts.push({
      name: a.name,
      kind: 'agent' as const,
      platform: a.platform,
      ...presenceOf(a, now),
      workspaces: parseJsonArray(a.workspaces)
        .map((w) => (typeof w === 'object' && w !== null ? (w as { path?: unknown }).path : undefined))
        .filter((p): p is string => typeof p === 'string'),
      address,
      sandbox: a.sandbox,
    });
  }
  for (const u of users) {
    const address = addressOrSkip(ctx, { name: u.name, path: '', session: '' }, 'users');
    if (address === undefined) continue;
    contacts.push({
      name: u.name,
      kind: 'person' as const,
      platform: '',
      online: false,
      last_seen: null,
      offline_since: null,
      workspaces: [],
      address,
      sandbox: null,
    });
  }
  return contacts;
}

/** Suggest addresses for a (partial) name and/or path: existing sessions, then workspaces. */
export async function suggestAddresses(
  ctx: GatewayContext,
  name?: string,
  path?: string,
): Promise<Suggestion[]> {
  const n = (name ?? '').toLowerCase();
  const p = path ?? '';
  const out: Suggestion[] = [];
  const seen = new Set<string>();
  // Suggestions are built from stored rows and the query: one that does not form an address is
  // skipped (and logged), never a 500.
  const push = (parts: Address, s: Omit<Suggestion, 'address'>) => {
    const address = addressOrSkip(ctx, parts, 'suggestions');
    if (address === undefined || seen.has(address)) return;
    seen.add(address);
    out.push({ address, ...s });
  };
  const agents = (await ctx.db.selectFrom('agents').selectAll().orderBy('name').execute()).filter((a) =>
    a.name.toLowerCase().includes(n),
  );
  for (const a of agents) {
    const sessions = await ctx.db
      .selectFrom('sessions')
      .select(['path', 'alias'])
      .where('agent_name', '=', a.name)
      .where('alias', 'is not', null)
      .orderBy('updated_at', 'desc')
      .limit(20)
      .execute();
    for (const s of sessions) {
      if (p !== '' && !s.path.startsWith(p)) continue;
      const alias = s.alias ?? '';
      push(
        { name: a.name, path: s.path, session: alias },
        {
          name: a.name,
          path: s.path,
          session_alias: alias,
          reason: 'existing session',
        },
      );
    }
    for (const w of parseJsonArray(a.workspaces)) {
      const wp = typeof w === 'object' && w !== null ? (w as { path?: unknown }).path : undefined;
      if (typeof wp !== 'string' || !wp.startsWith('/') || (p !== '' && !wp.startsWith(p))) continue;
      push(
        { name: a.name, path: wp, session: 'new' },
        {
          name: a.name,
          path: wp,
          session_alias: '',
          reason: 'announced workspace (new session)',
        },
      );
    }
    if (p === '' || p.startsWith('/'))
      push(
        { name: a.name, path: p, session: '' },
        {
          name: a.name,
          path: p,
          session_alias: '',
          reason: 'default session',
        },
      );
  }
  const users = await ctx.db.selectFrom('users').select('name').orderBy('name').execute();
  for (const u of users.filter((x) => x.name.toLowerCase().includes(n)))
    push(
      { name: u.name, path: '', session: '' },
      {
        name: u.name,
        path: '',
        session_alias: '',
        reason: 'person',
      },
    );
  return out.slice(0, 50);
}

/**
 * Naming sync (SPEC B-11): rename a session of the agent (suffix on collision) and/or set its
 * title; answers the final alias. Under the agent's lock, so renames and new sessions of one
 * agent on several Gateways never pick the same alias.
 * @throws GatewayError `AM_GW_NOT_FOUND`, `AM_GW_BAD_REQUEST` (alias not valid)
 */
export async function syncSession(
  ctx: GatewayContext,
  agentName: string,
  sessionId: string,
  alias: string | undefined,
  title: string | undefined,
): Promise<SessionSyncResponse> {
  return ctx.db.transaction().execute(async (trx) => {
    // The agent's lock first: the free alias read below stays free until this commits (G-5).
    await lockAgent(trx, agentName);
    const session = await sessionById(trx, sessionId);
    if (!session || session.agent_name !== agentName)
      throw new GatewayError('NOT_FOUND', `agent "${agentName}" has no session "${sessionId}"`);
    let finalAlias = session.alias ?? '';
    if (alias !== undefined && alias !== session.alias) {
      if (!isValidAlias(alias))
        throw new GatewayError('BAD_REQUEST', `field "alias": "${alias}" is not a valid alias`, {
          detail:
            'an alias has 1..64 characters without ".", "/", whitespace or control characters and is not "new"',
          extra: { field: 'alias' },
        });
      const candidates = [alias, ...Array.from({ length: 98 }, (_, i) => `${alias}-${i + 2}`)];
      const taken = new Set(
        (
          await trx
            .selectFrom('sessions')
            .select('alias')
            .where('agent_name', '=', agentName)
            .where('alias', 'in', candidates)
            .where('id', '!=', sessionId)
            .execute()
        ).map((r) => r.alias),
      );
      const free = candidates.find((c) => !taken.has(c));
      if (free === undefined)
        throw new GatewayError('CONFLICT', `every suffix of the alias "${alias}" is taken`);
      finalAlias = free;
    }
    const finalTitle = title ?? session.title;
    await trx
      .updateTable('sessions')
      .set({
        alias: finalAlias === '' ? null : finalAlias,
        title: finalTitle,
        updated_at: ctx.config.clock(),
      })
      .where('id', '=', sessionId)
      .execute();
    return { session_id: sessionId, alias: finalAlias, title: finalTitle };
  });
}

/**
 * Every agent with its presence and mode enforcement, and the sessions of it that `userId` took
 * part in — sent or received a mail there, or owns (SPEC H-4: a person never learns the aliases,
 * titles or paths of other people's sessions).
 */
export async function agentsFor(
  ctx: GatewayContext,
  user: { id: string; name: string },
): Promise<AgentView[]> {
  const now = ctx.config.clock();
  const agents = await ctx.db.selectFrom('agents').selectAll().orderBy('name').execute();
  const sessions = await ctx.db
    .selectFrom('sessions')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('sessions.owner_user_id', '=', user.id),
        eb.exists(
          eb
            .selectFrom('mails')
            .select('mails.id')
            .whereRef('mails.session_id', '=', 'sessions.id')
            .where('mails.from_name', '=', user.name)
            .where('mails.from_human', '=', 1),
        ),
        eb.exists(
          eb
            .selectFrom('deliveries')
            .select('deliveries.mail_id')
            .whereRef('deliveries.session_id', '=', 'sessions.id')
            .where('deliveries.recipient_name', '=', user.name)
            .where('deliveries.recipient_human', '=', 1),
        ),
      ]),
    )
    .orderBy('updated_at', 'desc')
    .execute();
  const out: AgentView[] = [];
  for (const a of agents) {
    const address = addressOrSkip(ctx, { name: a.name, path: '', session: '' }, 'agents');
    if (address === undefined) continue;
    const enforcement = ModeEnforcement.safeParse(a.mode_enforcement);
    const own = sessions.filter((x) => x.agent_name === a.name);
    // One presence rule for every view: a bridge's goodbye makes it offline at once (H-3).
    const { online, last_seen } = presenceOf(a, now);
    out.push({
      name: a.name,
      platform: a.platform,
      online,
      last_seen,
      mode_enforcement: enforcement.success ? enforcement.data : null,
      mode_enforcement_reason: enforcement.success ? a.mode_enforcement_reason : null,
      sandbox: a.sandbox,
      workspaces: parseJsonArray(a.workspaces)
        .map((w) => (typeof w === 'object' && w !== null ? (w as { path?: unknown }).path : undefined))
        .filter((p): p is string => typeof p === 'string'),
      address,
      sessions: own.flatMap((x) => {
        const sessionAddress = addressOrSkip(
          ctx,
          { name: a.name, path: x.path, session: x.alias ?? '' },
          'sessions',
        );
        if (sessionAddress === undefined) return [];
        const mode = PermissionMode.safeParse(x.permission_mode);
        return [
          {
            id: x.id,
            alias: x.alias ?? '',
            path: x.path,
            address: sessionAddress,
            title: x.title,
            permission_mode: mode.success ? mode.data : 'workspace',
            updated_at: iso(Number(x.updated_at)),
          },
        ];
      }),
    });
  }
  return out;
}

// ---- admin ----
