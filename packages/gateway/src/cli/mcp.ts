/**
 * `agentmail mcp`: the mail tools (SPEC B-17) as an MCP stdio server for any MCP host — Claude
 * Code, Cursor, Zed, an agent SDK — configured like every CLI command (`--url`,
 * `AGENTMAIL_GATEWAY_URL`, the config file) plus an agent key. The server is host-tools' own
 * (`@agentmail/host-tools/mcp`, what the plugin bundles run as `mcp.js`), loaded only by this
 * command: the other commands never load the MCP SDK.
 */
import { resolveLocale } from '@agentmail/shared-policy';
import {
  GatewayClient,
  GatewayHttpError,
  GatewayNetworkError,
  readAgentKey,
} from '@agentmail/shared-policy/client';
import type { Command } from 'commander';
import { keyAgentName } from './agent-identity.js';
import type { ResolvedConfig } from './config.js';
import type { CliContext } from './context.js';
import { CliError, isCliError } from './errors.js';

/** Environment variable of the agent key `agentmail mcp` uses without `--key`. */
export const ENV_AGENT_KEY = 'AGENTMAIL_AGENT_KEY';

/** The platform an agent is registered with when `agentmail mcp` is the first to register it. */
export const MCP_PLATFORM = 'mcp';

/** Where the key came from, in the words of the flag or variable that held it. */
function keySource(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined && flag.trim() !== '') return '--key';
  return (env[ENV_AGENT_KEY] ?? '').trim() !== '' ? ENV_AGENT_KEY : 'the file AGENTMAIL_AGENT_KEY_FILE names';
}

/**
 * Before serving: the key and the URL work, and the key's agent is registered so that its sends
 * are accepted (a new agent as platform {@link MCP_PLATFORM}; one a bridge registered keeps its
 * platform: `keep_existing`, decided by the Gateway in one statement, not read here first).
 * @returns the agent's name
 * @throws CliError `AM_CLI_UNREACHABLE` (no answer) or `AM_CLI_SERVER_REFUSED` (an unknown key, a
 *   name that is a person's), naming the Gateway URL and where the URL and the key came from
 */
async function registerStandalone(
  client: GatewayClient,
  config: ResolvedConfig,
  keyFrom: string,
): Promise<string> {
  const gateway = `the Gateway at ${config.url} (the URL from ${config.urlFrom})`;
  try {
    const name = await keyAgentName(client);
    if (name === undefined)
      throw new CliError(
        'SERVER_REFUSED',
        `${gateway} did not say which agent the key from ${keyFrom} belongs to`,
        {
          suggestion: 'the CLI and the Gateway versions may differ; upgrade both',
        },
      );
    await client.register({ name, platform: MCP_PLATFORM, keep_existing: true });
    return name;
  } catch (err) {
    if (isCliError(err)) throw err;
    if (err instanceof GatewayNetworkError)
      throw new CliError('UNREACHABLE', `no answer from ${gateway}: ${err.message}`, {
        suggestion:
          'start the Gateway (agentmail serve), or give its URL: agentmail --url <url> mcp, AGENTMAIL_GATEWAY_URL or agentmail login',
        cause: err,
      });
    if (err instanceof GatewayHttpError && (err.status === 401 || err.status === 403))
      throw new CliError('SERVER_REFUSED', `${gateway} does not accept the agent key from ${keyFrom}`, {
        status: err.status,
        body: err.body,
        suggestion: `issue a key (admin): agentmail agent key <name>, then --key <key> or ${ENV_AGENT_KEY}=<key>`,
        cause: err,
      });
    throw new CliError(
      'SERVER_REFUSED',
      `${gateway} refused to register the key's agent: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

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
        const name = await registerStandalone(client, config, keySource(opts.key, env));
        backend = mcp.standaloneBackend(client, locale);
        where = `as agent ${name} with the Gateway at ${config.url} (the URL from ${config.urlFrom})`;
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
