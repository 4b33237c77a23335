import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import { printJson, shortTime, table } from './output.js';

/** Register the admin commands: `user add|list`, `agent key`, `models`. They need an admin token. */
export function registerAdminCommands(program: Command, ctx: CliContext): void {
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
      ctx.io.out(`created ${created.admin ? 'admin ' : ''}user ${created.name}`);
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

  const agent = program.command('agent').description('manage agents (admin)');
  agent
    .command('key')
    .description('issue a key bound to an agent name (shown once), or revoke one')
    .argument('[name]', 'agent name the key is bound to')
    .option('--revoke <key_id>', 'revoke this key instead of issuing one')
    .action(async (name: string | undefined, opts: { revoke?: string }, cmd: Command) => {
      const api = await ctx.api(cmd);
      if (opts.revoke !== undefined) {
        await api.revokeAgentKey(opts.revoke);
        if (ctx.globals(cmd).json) return printJson(ctx.io, { revoked: opts.revoke });
        ctx.io.out(`revoked key ${opts.revoke}`);
        return;
      }
      if (name === undefined) {
        throw new CliError('USAGE', 'missing agent name', {
          suggestion: 'agentmail agent key <name>   or   agentmail agent key --revoke <key_id>',
        });
      }
      const issued = await api.issueAgentKey(name);
      if (ctx.globals(cmd).json) return printJson(ctx.io, issued);
      ctx.io.out(`key ${issued.key_id} for agent ${issued.agent_name} (shown once, keep it):`);
      ctx.io.out(issued.key);
      ctx.io.out(`the bridge uses it as AGENTMAIL_AGENT_NAME=${issued.agent_name} AGENTMAIL_AGENT_KEY=<key>`);
    });

  program
    .command('models')
    .description('show or set the models a platform may use for mail turns, in order (≤10, admin)')
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
        if (res.models.length === 0) {
          ctx.io.out(`${res.platform}: no models selected (bridges use the host default)`);
          return;
        }
        ctx.io.out(`${res.platform}, in order:`);
        res.models.forEach((m, i) => {
          ctx.io.out(
            `${i + 1}. ${m.key}${m.stale ? '  (stale: no agent of this platform has it any more)' : ''}`,
          );
        });
      },
    );
}
