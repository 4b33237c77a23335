import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AgentKeyView, AllowedModelsResponse, IssueAgentKeyResponse } from '@agentmail/protocol';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import type { HumanApi } from './http.js';
import { type CliIo, oneLine, printJson, shortTime, table } from './output.js';
import { defaultDataDir } from './serve.js';

function printIssuedKey(io: CliIo, issued: { key_id: string; agent_name: string; key: string }): void {
  io.out(`key ${issued.key_id} for agent ${oneLine(issued.agent_name)} (shown once, keep it):`);
  io.out(issued.key);
  io.out(
    `the bridge uses it as AGENTMAIL_AGENT_NAME=${oneLine(issued.agent_name)} AGENTMAIL_AGENT_KEY=<key>`,
  );
}

/**
 * Issue a key for `agentName` unless it already has an active one: a second key stays valid beside
 * the first (the admin page lists both), so it is issued only when asked (`another`). The check and
 * the issue are two requests: two admins issuing for one agent at the same moment can both pass.
 * @returns the issued key, whether it is another one, and how many active keys the agent now has
 * @throws CliError `AM_CLI_AGENT_KEY_ACTIVE` naming the active keys and the two ways on
 *   (`agentmail agent key revoke <name>`, `--another`); nothing is issued
 */
export async function issueKeyOnce(
  api: HumanApi,
  agentName: string,
  options: { another: boolean },
): Promise<IssueAgentKeyResponse & { another: boolean; active_keys: number }> {
  const { keys } = await api.agentKeys();
  const active = keys.filter((k) => k.agent_name === agentName && k.revoked_at === null);
  if (active.length > 0 && !options.another) {
    const name = oneLine(agentName);
    const ids = active.map((k) => k.key_id);
    throw new CliError(
      'AGENT_KEY_ACTIVE',
      `agent ${name} already has an active key (${ids.join(', ')}); no key was issued`,
      {
        detail: `a new key would stay valid beside it; the key itself was shown once, when it was issued (created ${active.map((k) => shortTime(k.created_at)).join(', ')})`,
        suggestion: `lost it? revoke it, then issue a new one: agentmail agent key revoke ${name} && agentmail agent key ${name}\nanother key beside it: agentmail agent key ${name} --another`,
        extra: { agent: agentName, active_keys: active.length, key_ids: ids },
      },
    );
  }
  const issued = await api.issueAgentKey(agentName);
  return { ...issued, another: active.length > 0, active_keys: active.length + 1 };
}

function keyTable(keys: readonly AgentKeyView[]): string {
  return table(
    ['KEY ID', 'AGENT', 'CREATED', 'LAST USED', 'STATUS'],
    keys.map((k) => [
      k.key_id,
      k.agent_name,
      shortTime(k.created_at),
      k.last_used_at === null ? 'never' : shortTime(k.last_used_at),
      k.revoked_at === null ? 'active' : `revoked ${shortTime(k.revoked_at)}`,
    ]),
  );
}

/**
 * Revoke by key id, or every active key of an agent name (a key id wins when both match).
 * @throws CliError `AM_CLI_USAGE` when neither a key nor an agent with active keys has that name.
 */
async function revokeKeys(api: HumanApi, target: string): Promise<string[]> {
  const { keys } = await api.agentKeys();
  const byId = keys.find((k) => k.key_id === target);
  const ids = byId
    ? [byId.key_id]
    : keys.filter((k) => k.agent_name === target && k.revoked_at === null).map((k) => k.key_id);
  if (ids.length === 0)
    throw new CliError('USAGE', `no active key has the id or agent name "${target}"`, {
      suggestion: 'the keys, their ids and agents: agentmail agent key list',
    });
  for (const id of ids) await api.revokeAgentKey(id);
  return ids;
}

/** Words for the model view: selection and catalogue side by side (SPEC G-26). */
export function modelLines(res: AllowedModelsResponse, justSet: readonly string[] = []): string[] {
  const platform = oneLine(res.platform);
  const lines: string[] = [];
  const reported = res.reported_by.length > 0;
  const inCatalogue = new Map(res.catalogue.map((m) => [m.key, m]));
  if (res.models.length === 0) lines.push(`${platform}: no models selected (bridges use the host default)`);
  else {
    lines.push(`${platform}: selected for mail turns, in order:`);
    res.models.forEach((m, i) => {
      const note = !reported
        ? '  (not known yet: no agent reported its models)'
        : m.stale
          ? '  (no agent reports it: bridges skip it)'
          : `  (${inCatalogue.get(m.key)?.agents.map(oneLine).join(', ') ?? ''})`;
      lines.push(`  ${i + 1}. ${oneLine(m.key)}${note}`);
    });
  }
  if (!reported)
    lines.push(
      `catalogue: no ${platform} agent has reported its models yet (a running bridge does within 30 s)`,
    );
  else {
    const selected = new Set(res.models.map((m) => m.key));
    lines.push(`catalogue (what the ${platform} agents ${res.reported_by.map(oneLine).join(', ')} report):`);
    for (const m of res.catalogue)
      lines.push(
        `  ${selected.has(m.key) ? '*' : ' '} ${oneLine(m.key)}${m.name === '' ? '' : `  ${oneLine(m.name)}`}`,
      );
    lines.push('  (* selected)');
  }
  for (const key of justSet)
    if (reported && !inCatalogue.has(key))
      lines.push(
        `warning: no ${platform} agent reports ${oneLine(key)}; it stays selected, and bridges skip it until one has it (check the spelling: provider/model)`,
      );
  return lines;
}

/** `agentmail admin reset-token`: a new token for a user, written into the data directory itself. */
async function localResetToken(
  ctx: CliContext,
  opts: { dataDir?: string; database?: string; user?: string },
  json: boolean,
): Promise<void> {
  const dataDir = resolve(ctx.io.cwd ?? process.cwd(), opts.dataDir ?? defaultDataDir(ctx.io.env));
  const databaseUrl = (opts.database ?? ctx.io.env.AGENTMAIL_DATABASE_URL) || undefined;
  const user = opts.user ?? 'admin';
  // Loaded here: the store is only for this command (and serve), not for the client commands.
  const [{ SQLITE_FILE_NAME, openDatabase, redactDatabaseUrl }, { resetUserToken }] = await Promise.all([
    import('../db/database.js'),
    import('../accounts.js'),
  ]);
  // Never create a store: a mistyped directory (or URL) must not become an empty Gateway.
  if (databaseUrl === undefined && !existsSync(join(dataDir, SQLITE_FILE_NAME)))
    throw new CliError('DATA_DIR_INVALID', `${dataDir} holds no Gateway data (no ${SQLITE_FILE_NAME})`, {
      suggestion:
        'pass the directory the Gateway runs on: agentmail admin reset-token --data-dir <dir> (serve --data-dir); a Gateway on PostgreSQL: --database <url>',
    });
  const where = databaseUrl === undefined ? dataDir : redactDatabaseUrl(databaseUrl);
  const db = await openDatabase(dataDir, { databaseUrl, mustExist: true }).catch((err: unknown) => {
    const code = (err as { code?: unknown }).code;
    if (code === 'AM_GW_STORE_EMPTY')
      throw new CliError('DATA_DIR_INVALID', `${where} holds no Gateway data`, {
        suggestion:
          'pass the database the Gateway runs on: agentmail admin reset-token --database <url> (serve --database)',
      });
    if (code === 'AM_GW_DATABASE_URL_INVALID')
      throw new CliError('USAGE', `option "--database": ${(err as Error).message}`, {
        suggestion: (err as { suggestion?: string }).suggestion ?? '',
      });
    throw err;
  });
  try {
    const reset = await resetUserToken(db, user, Date.now()).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === 'AM_GW_NOT_FOUND')
        throw new CliError('USAGE', `no user is named "${user}" in ${where}`, {
          suggestion: 'name the user with --user <name> (the first admin is "admin")',
        });
      throw err;
    });
    if (json)
      return printJson(ctx.io, { ...reset, data_dir: dataDir, ...(databaseUrl ? { database: where } : {}) });
    ctx.io.out(`new token for ${oneLine(reset.name)} (shown once, keep it): ${reset.token}`);
    ctx.io.out(
      `${reset.revoked_tokens} older token(s) no longer work; a running Gateway takes the new one at once`,
    );
  } finally {
    await db.destroy();
  }
}

/** Register the admin commands: `user add|list|reset-token`, `agent key`, `models`, `admin reset-token`. */
export function registerAdminCommands(program: Command, ctx: CliContext): void {
  registerUserCommands(program, ctx);
  registerAgentKeyCommand(program, ctx);
  registerModelsCommand(program, ctx);
  const admin = program.command('admin').description('recovery on the Gateway machine itself');
  admin
    .command('reset-token')
    .description(
      "a new token for a user (default: admin), written straight into the Gateway's data directory: recovery of a lost admin token; needs access to that directory",
    )
    .option(
      '--data-dir <dir>',
      'the Gateway data directory (env AGENTMAIL_DATA_DIR; default ~/.local/share/agentmail)',
    )
    .option(
      '--database <url>',
      'the PostgreSQL database of a Gateway run with serve --database (env AGENTMAIL_DATABASE_URL)',
    )
    .option('--user <name>', 'whose token (default admin)')
    .action(async (opts: { dataDir?: string; database?: string; user?: string }, cmd: Command) => {
      await localResetToken(ctx, opts, ctx.globals(cmd).json === true);
    });
}

/** `agentmail user add|list|reset-token` (admin). */
function registerUserCommands(program: Command, ctx: CliContext): void {
  const user = program.command('user').description('manage people (admin)');
  user
    .command('add')
    .description('create a user and print its token (shown once)')
    .argument('<name>', 'user name')
    .option('--admin', 'make the user an admin')
    .action(async (name: string, opts: { admin?: boolean }, cmd: Command) => {
      const api = await ctx.api(cmd);
      const created = await api.createUser(name, opts.admin === true);
      if (ctx.globals(cmd).json) return printJson(ctx.io, created);
      ctx.io.out(`created ${created.admin ? 'admin ' : ''}user ${oneLine(created.name)}`);
      ctx.io.out(`token (shown once, keep it): ${created.token}`);
    });
  user
    .command('list')
    .description('list users')
    .action(async (_opts: unknown, cmd: Command) => {
      const api = await ctx.api(cmd);
      const res = await api.users();
      if (ctx.globals(cmd).json) return printJson(ctx.io, res);
      const rows = res.users.map((u) => [u.name, u.admin ? 'admin' : '', shortTime(u.created_at)]);
      ctx.io.out(table(['NAME', 'ROLE', 'CREATED'], rows));
    });
  user
    .command('reset-token')
    .description("give a user a new token (shown once); the user's older tokens stop working")
    .argument('<name>', 'user name')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const api = await ctx.api(cmd);
      const reset = await api.resetToken(name);
      if (ctx.globals(cmd).json) return printJson(ctx.io, reset);
      ctx.io.out(`new token for ${oneLine(reset.name)} (shown once, keep it): ${reset.token}`);
      ctx.io.out(`${reset.revoked_tokens} older token(s) no longer work`);
    });
}

/** `agentmail agent key [issue] <name> | list | revoke <key id | name>` (admin). */
function registerAgentKeyCommand(program: Command, ctx: CliContext): void {
  const agent = program.command('agent').description('manage agents (admin)');
  agent
    .command('key')
    .description(
      'issue a key bound to an agent name (shown once); "list" lists the keys; "revoke <key id|agent>" revokes',
    )
    .argument('[name]', 'agent name the key is bound to; or "list", "revoke", "issue"')
    .argument('[target]', 'for revoke: a key id, or an agent name (all its keys); for issue: the agent name')
    .option('--revoke <key_id>', 'revoke this key (a key id or an agent name) instead of issuing one')
    .option(
      '--another',
      'issue a key although the agent has an active one (both stay valid); without it, an agent with an active key gets none',
    )
    .action(
      async (
        name: string | undefined,
        target: string | undefined,
        opts: { revoke?: string; another?: boolean },
        cmd: Command,
      ) => {
        const json = ctx.globals(cmd).json === true;
        const revoke = opts.revoke ?? (name === 'revoke' ? target : undefined);
        if (name === 'revoke' && revoke === undefined)
          throw new CliError('USAGE', 'revoke needs a key id or an agent name', {
            suggestion: 'agentmail agent key revoke <key id | agent name>   (ids: agentmail agent key list)',
          });
        const api = await ctx.api(cmd);
        if (revoke !== undefined) {
          const revoked = await revokeKeys(api, revoke);
          if (json) return printJson(ctx.io, { revoked });
          ctx.io.out(revoked.map((id) => `revoked key ${id}`).join('\n'));
          return;
        }
        if (name === 'list') {
          const res = await api.agentKeys();
          if (json) return printJson(ctx.io, res);
          ctx.io.out(
            res.keys.length === 0 ? 'no agent keys yet: agentmail agent key <name>' : keyTable(res.keys),
          );
          return;
        }
        // `agent key issue <name>` names an agent called "list" or "revoke" too.
        const agentName = name === 'issue' ? target : name;
        if (agentName === undefined) {
          throw new CliError('USAGE', 'missing agent name', {
            suggestion:
              'agentmail agent key <name>   ·   agentmail agent key list   ·   agentmail agent key revoke <key id | name>',
          });
        }
        const issued = await issueKeyOnce(api, agentName, { another: opts.another === true });
        if (json) return printJson(ctx.io, issued);
        printIssuedKey(ctx.io, issued);
        if (issued.another)
          ctx.io.out(
            `agent ${oneLine(agentName)} now has ${issued.active_keys} active keys; the keys: agentmail agent key list; revoke one: agentmail agent key revoke <key id>`,
          );
      },
    );
}

/** `agentmail models <platform> [set <models…>]` (admin, SPEC G-26). */
function registerModelsCommand(program: Command, ctx: CliContext): void {
  program
    .command('models')
    .description(
      'show the models a platform may use for mail turns beside what its agents report, or set them (≤10, in order, admin)',
    )
    .argument('<platform>', 'platform name: pi, opencode, dsh, zcode, …')
    .argument('[action]', '"set" to replace the selection')
    .argument('[models...]', 'provider/model keys, best first; none clears the selection')
    .action(
      async (
        platform: string,
        action: string | undefined,
        models: string[],
        _opts: unknown,
        cmd: Command,
      ) => {
        if (action !== undefined && action !== 'set') {
          throw new CliError('USAGE', `unknown action "${action}"`, {
            suggestion: `agentmail models ${platform}   or   agentmail models ${platform} set provider/model …`,
          });
        }
        const api = await ctx.api(cmd);
        const res =
          action === 'set' ? await api.setAllowedModels(platform, models) : await api.allowedModels(platform);
        if (ctx.globals(cmd).json) return printJson(ctx.io, res);
        ctx.io.out(modelLines(res, action === 'set' ? models : []).join('\n'));
      },
    );
}
