import type { Contact } from '@agentmail/protocol';
import type { Command } from 'commander';
import { writeConfigFile } from './config.js';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import { HumanApi } from './http.js';
import { printJson, shortTime, table } from './output.js';

/** Register `login` and `status`. */
export function registerConnectionCommands(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description('check a Gateway URL and user token, then save them in the config file (mode 0600)')
    .option('--no-verify', 'save without asking the Gateway first')
    .action(async (opts: { verify: boolean }, cmd: Command) => {
      const g = ctx.globals(cmd);
      if (g.url === undefined || g.token === undefined) {
        throw new CliError('USAGE', 'login needs both --url and --token', {
          suggestion: 'agentmail login --url http://127.0.0.1:8787 --token <token>',
        });
      }
      const config = await ctx.config(cmd);
      if (opts.verify) {
        // Any user may read their own inbox: a 401 here means the token is wrong.
        await new HumanApi({ baseUrl: config.url, token: config.token }).inbox({
          status: 'unread',
          limit: 1,
        });
      }
      await writeConfigFile(config.configPath, { url: config.url, token: g.token });
      if (g.json) return printJson(ctx.io, { config_path: config.configPath, url: config.url });
      ctx.io.out(`saved ${config.url} and your token in ${config.configPath}`);
    });

  program
    .command('status')
    .description('is the Gateway up, and which agents are online')
    .action(async (_opts: unknown, cmd: Command) => {
      const config = await ctx.config(cmd);
      const api = new HumanApi({ baseUrl: config.url, token: config.token });
      const health = await api.health();
      // The agent list needs a user token; without one, status still says whether the Gateway is up.
      const agents =
        config.token === undefined
          ? undefined
          : (await api.contacts()).contacts.filter((c) => c.kind === 'agent');
      if (ctx.globals(cmd).json)
        return printJson(ctx.io, { url: config.url, ...health, ...(agents === undefined ? {} : { agents }) });
      const lines = [`${config.url}: ${health.status}`];
      for (const [key, value] of Object.entries(health)) {
        if (key === 'status') continue;
        lines.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
      }
      lines.push(...agentLines(agents));
      ctx.io.out(lines.join('\n'));
    });
}

/** The agents part of `agentmail status`: one row per agent, online or offline, last seen. */
export function agentLines(agents: readonly Contact[] | undefined): string[] {
  if (agents === undefined) return ['agents: log in (or pass --token) to list them'];
  if (agents.length === 0) return ['agents: none registered yet'];
  const online = agents.filter((a) => a.online).length;
  return [
    `agents: ${online} of ${agents.length} online`,
    table(
      ['NAME', 'PLATFORM', 'STATUS', 'LAST SEEN'],
      agents.map((a) => [
        a.name,
        a.platform,
        a.online ? 'online' : 'offline',
        a.last_seen === null ? 'never' : shortTime(a.last_seen),
      ]),
    ),
  ];
}
