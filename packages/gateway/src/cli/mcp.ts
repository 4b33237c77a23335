/**
 * `agentmail mcp`: the mail tools (SPEC B-17) as an MCP stdio server for any MCP host — Claude
 * Code, Cursor, Zed, an agent SDK — configured like every CLI command (`--url`,
 * `AGENTMAIL_GATEWAY_URL`, the config file) plus an agent key. The server is host-tools' own
 * (`@agentmail/host-tools/mcp`, what the plugin bundles run as `mcp.js`), loaded only by this
 * command: the other commands never load the MCP SDK.
 */
import { resolveLocale } from '@agentmail/shared-policy';
import { GatewayClient, readAgentKey } from '@agentmail/shared-policy/client';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';

/** Environment variable of the agent key `agentmail mcp` uses without `--key`. */
export const ENV_AGENT_KEY = 'AGENTMAIL_AGENT_KEY';

/** The key from `--key`, else the environment a bridge's setup uses (`AGENTMAIL_AGENT_KEY`, `…_KEY_FILE`). */
function agentKey(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag !== undefined && flag.trim() !== '') return flag.trim();
  try {
    return readAgentKey(env);
  } catch (err) {
    throw new CliError('USAGE', err instanceof Error ? err.message : String(err), {
      suggestion: `give the key itself: agentmail mcp --key <agent key>, or ${ENV_AGENT_KEY}=<agent key>`,
      cause: err,
    });
  }
}

/** Register `agentmail mcp`. */
export function registerMcpCommand(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description(
      'serve the mail tools to an MCP host over stdio (its MCP config: command "agentmail", args ["mcp"], env AGENTMAIL_AGENT_KEY)',
    )
    .option(
      '--key <agent key>',
      `the agent key the tools use (env ${ENV_AGENT_KEY}, which keeps it out of the process list; issue one: agentmail agent key <name>)`,
    )
    .action(async (opts: { key?: string }, cmd: Command) => {
      const env = ctx.io.env;
      const stdio = ctx.io.stdio;
      if (stdio === undefined)
        throw new CliError('USAGE', 'agentmail mcp serves on the standard input and output of its process');
      const locale = resolveLocale(env.AGENTMAIL_LOCALE);
      const mcp = await import('@agentmail/host-tools/mcp');
      // Started by a bridge for a mail turn: the calls run in the bridge (its key, the turn's mail).
      let backend = mcp.turnBackendFromEnv(env, locale);
      let where = 'through the bridge of this mail turn';
      if (backend === undefined) {
        const config = await ctx.config(cmd);
        const key = agentKey(opts.key, env);
        if (key === undefined)
          throw new CliError(
            'USAGE',
            `agentmail mcp needs an agent key: --key <agent key> or ${ENV_AGENT_KEY}`,
            {
              detail: `the mail tools act as an agent of the Gateway at ${config.url} (the URL from ${config.urlFrom})`,
              suggestion: `issue a key (admin): agentmail agent key <name>; then in the host's MCP config: "command": "agentmail", "args": ["mcp"], "env": { "${ENV_AGENT_KEY}": "<key>" }`,
            },
          );
        let client: GatewayClient;
        try {
          client = new GatewayClient({
            baseUrl: config.url,
            key,
            allowedRoots: [ctx.io.cwd ?? process.cwd()],
          });
        } catch (err) {
          throw new CliError(
            'CONFIG_INVALID',
            `Gateway URL "${config.url}" (from ${config.urlFrom}) cannot be used: ${err instanceof Error ? err.message : String(err)}`,
            {
              suggestion: 'give it as http://host:port: --url, AGENTMAIL_GATEWAY_URL or agentmail login',
              cause: err,
            },
          );
        }
        backend = mcp.standaloneBackend(client, locale);
        where = `with the Gateway at ${config.url} (the URL from ${config.urlFrom})`;
      }
      await mcp.serveMailToolsOnStdio({
        backend,
        locale,
        input: stdio.input,
        output: stdio.output,
        name: 'agentmail mcp',
        log: (line) => ctx.io.err(`${line} ${where}`),
      });
    });
}
