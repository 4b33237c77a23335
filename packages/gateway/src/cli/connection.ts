import type { Contact } from '@agentmail/protocol';
import type { Command } from 'commander';
import { writeConfigFile } from './config.js';
import { apiFor, type CliContext } from './context.js';
import { CliError } from './errors.js';
import { oneLine, printJson, shortTime, table } from './output.js';

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
        await apiFor(config).inbox({
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
      const api = apiFor(config);
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

  program
    .command('contacts')
    .description('who you can write to: agents (online, workspaces) and people, with their addresses')
    .action(async (_opts: unknown, cmd: Command) => {
      const api = await ctx.api(cmd);
      const res = await api.contacts();
      if (ctx.globals(cmd).json) return printJson(ctx.io, res);
      ctx.io.out(contactLines(res.contacts).join('\n'));
    });
}

/** `online`, `offline since 10:02`, or `never connected` (SPEC H-3); only an online agent shows the word "online". */
function presence(a: Contact): string {
  if (a.online) return 'online';
  if (a.last_seen === null) return 'never connected';
  return a.offline_since === null ? 'offline' : `offline since ${shortTime(a.offline_since)}`;
}

/** The agents part of `agentmail status`: one row per agent, online or offline since when, last seen. */
export function agentLines(agents: readonly Contact[] | undefined): string[] {
  if (agents === undefined) return ['agents: log in (or pass --token) to list them'];
  if (agents.length === 0) return ['agents: none registered yet (a bridge registers when it starts)'];
  const online = agents.filter((a) => a.online).length;
  return [
    `agents: ${online} of ${agents.length} online`,
    table(
      ['NAME', 'PLATFORM', 'STATUS', 'LAST SEEN', 'SANDBOX'],
      agents.map((a) => [
        a.name,
        a.platform,
        presence(a),
        a.last_seen === null ? 'never' : shortTime(a.last_seen),
        // Said by the agent's bridge (P-12): shown inert, cut to one line.
        a.sandbox === null ? '-' : oneLine(a.sandbox).slice(0, 100),
      ]),
    ),
  ];
}

/** `agentmail contacts`: agents (status, workspaces, address) and people, as the Gateway lists them. */
export function contactLines(contacts: readonly Contact[]): string[] {
  const agents = contacts.filter((c) => c.kind === 'agent');
  const people = contacts.filter((c) => c.kind === 'person');
  const lines = [
    agents.length === 0
      ? 'agents: none registered yet'
      : table(
          ['AGENT', 'PLATFORM', 'STATUS', 'WORKSPACES', 'WRITE TO'],
          agents.map((a) => [a.name, a.platform, presence(a), a.workspaces.join(' ') || '-', a.address]),
        ),
  ];
  if (people.length > 0)
    lines.push(
      '',
      table(
        ['PERSON', 'WRITE TO'],
        people.map((p) => [p.name, p.address]),
      ),
    );
  lines.push('', 'a new task for an agent in a directory: agentmail send <agent>@/abs/path.new -s … -b …');
  return lines;
}
