import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAIL_TOOL_NAMES, mailTools } from '@agentmail/bridge-kit';
import { formatText } from '@agentmail/shared-policy';
import { type Stack, startStack } from '@agentmail/testkit';
import { checkPermission, mcpCapability, mcpToolName } from '@agentmail/testkit/zcode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundled, removeBundle } from '../harness/zcode-adapter.js';
import { MAIL_TOOL_PREFIX, MCP_SERVER_KEY, MCP_SERVER_NAME } from '../src/constants.js';

// The plugin's MCP server as ZCode starts it (plugin/.mcp.json, `${ZCODE_PLUGIN_ROOT}` and
// `${ZCODE_PROJECT_DIR}` expanded as in ZCode v3.15.1 `adapters/src/plugins/mcp.ts`), driven by
// the MCP SDK's own client: the tool list with its annotations (which decide ZCode's plan mode),
// and every tool run standalone — a person's own ZCode with the agent's key — on a real Gateway.

let stack: Stack;
let pluginDir: string;
beforeAll(async () => {
  const [s, b] = await Promise.all([startStack({ agentName: 'zcode', platform: 'zcode' }), bundled()]);
  stack = s;
  pluginDir = b.pluginDir;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await removeBundle();
});

interface StdioServer {
  type: string;
  command: string;
  args: string[];
  cwd: string;
}

/** Connect to the plugin's `mail` server the way ZCode launches it, with `env` added. */
async function connect(env: Record<string, string>): Promise<Client> {
  const raw = JSON.parse(await readFile(join(pluginDir, '.mcp.json'), 'utf8')) as {
    mcpServers: Record<string, StdioServer>;
  };
  const server = raw.mcpServers[MCP_SERVER_KEY];
  if (!server) throw new Error(`no ${MCP_SERVER_KEY} server in .mcp.json`);
  // ZCode's template variables in .mcp.json (not JavaScript templates).
  const vars: Record<string, string> = { ZCODE_PLUGIN_ROOT: pluginDir, ZCODE_PROJECT_DIR: stack.workdir };
  const expand = (s: string): string => s.replace(/\$\{([A-Z_]+)\}/g, (m, k: string) => vars[k] ?? m);
  const client = new Client({ name: 'zcode', version: '3.15.1' });
  await client.connect(
    new StdioClientTransport({
      // `node` from the PATH the driver puts first (AGENTMAIL_NODE): this test's Node.js.
      command: server.command === 'node' ? process.execPath : server.command,
      args: server.args.map(expand),
      cwd: expand(server.cwd),
      env: { PATH: process.env.PATH ?? '', ZCODE_PLUGIN_ROOT: pluginDir, ...env },
      stderr: 'pipe',
    }),
  );
  return client;
}

type CallResult = Awaited<ReturnType<Client['callTool']>>;
const textOf = (r: CallResult): string =>
  (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');

describe("the plugin's MCP server (SDK client, ZCode's launch contract)", () => {
  it("lists the 11 mail tools with true annotations; ZCode's plan mode allows each one, build asks", async () => {
    const client = await connect({});
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...MAIL_TOOL_NAMES]);
      // ask_person (P-10) is listed in a mail turn only (host-tools' mcp-server test).
      for (const t of mailTools('en', { askPerson: false })) {
        const listed = tools.find((x) => x.name === t.name);
        expect(listed?.inputSchema, t.name).toEqual(t.parameters);
        expect(listed?.annotations, t.name).toEqual({ title: t.name, ...t.annotations });
        expect(listed?.description, t.name).toBe(t.description);
        // The model sees `mcp__plugin_agentmail_mail__<tool>` (ZCode's mcp/name.ts).
        expect(mcpToolName(MCP_SERVER_NAME, t.name)).toBe(`${MAIL_TOOL_PREFIX}${t.name}`);
        // ZCode's permission service over these very annotations (the stand-in's copy of it).
        const name = `${MAIL_TOOL_PREFIX}${t.name}`;
        const capability = mcpCapability(listed?.annotations);
        expect(checkPermission(name, capability, 'plan', new Set()).decision, t.name).toBe('allow');
        expect(checkPermission(name, capability, 'build', new Set()).decision, t.name).toBe('ask');
      }
      expect(tools.filter((t) => t.annotations?.destructiveHint === true)).toEqual([]);
      expect(tools.find((t) => t.name === 'read_mail')?.annotations?.readOnlyHint).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("runs every tool standalone with the person's configured key", async () => {
    const task = `mcp-${Date.now().toString(36)}`;
    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Note ${task}`,
      body: `hello ${task}`,
    });
    const file = join(stack.workdir, `up-${task}.txt`);
    await writeFile(file, `payload ${task}\n`);
    const client = await connect({
      AGENTMAIL_GATEWAY_URL: stack.gatewayUrl,
      AGENTMAIL_AGENT_KEY: stack.agent.key,
    });
    const run = async (name: string, args: Record<string, unknown>): Promise<string> => {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, `${name}: ${textOf(r)}`).toBeFalsy();
      return textOf(r);
    };
    try {
      const ran = new Set<string>();
      const tool = async (name: string, args: Record<string, unknown>): Promise<string> => {
        ran.add(name);
        return run(name, args);
      };
      expect(await tool('read_inbox', { limit: 5 })).toContain(`Note ${task}`);
      expect(await tool('read_mail', { mail_id: sent.mail_id })).toContain(`hello ${task}`);
      expect(await tool('read_thread', { mail_id: sent.mail_id })).toContain(`Note ${task}`);
      expect(await tool('list_contacts', {})).toContain(stack.person.name);
      expect(await tool('suggest_address', { name: stack.person.name })).toContain(stack.person.name);
      const participants = await tool('session_participants', { session_id: sent.session_id });
      expect(participants).toContain(stack.person.name);
      const uploaded = await tool('upload_attachment', { path: file });
      const attachmentId = /\ba_[0-9A-Z]{26}\b/.exec(uploaded)?.[0];
      expect(attachmentId, uploaded).toBeDefined();
      const down = join(stack.workdir, `down-${task}.txt`);
      await tool('download_attachment', { attachment_id: attachmentId, path: down });
      expect(await readFile(down, 'utf8')).toBe(`payload ${task}\n`);
      await tool('send_mail', {
        to: stack.person.name,
        subject: `Sent ${task}`,
        body: `body ${task}`,
        attachment_ids: JSON.stringify([attachmentId]),
      });
      const mail = await stack.awaitReply({ where: (m) => m.subject === `Sent ${task}`, timeoutMs: 20_000 });
      expect(mail.body).toContain(`body ${task}`);
      expect(mail.attachments?.map((a) => a.id)).toEqual([attachmentId]);
      await tool('forward_mail', { mail_id: sent.mail_id, to: stack.person.name, comment: `fwd ${task}` });
      await stack.awaitReply({ where: (m) => m.body.includes(`fwd ${task}`), timeoutMs: 20_000 });
      // Another URL of the same Gateway: the switch is checked first, then made (B-18).
      const other = stack.gatewayUrl.replace('127.0.0.1', 'localhost');
      expect(await tool('connect_to_server', { url: other })).toContain(
        formatText('tools.connect.done', { url: other }),
      );
      expect(await run('list_contacts', {}), 'the tools go on through the new URL').toContain(
        stack.person.name,
      );
      expect([...ran].sort()).toEqual([...MAIL_TOOL_NAMES].sort());

      const bad = await client.callTool({ name: 'read_mail', arguments: { mail_id: 42 } });
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toContain('mail_id');
    } finally {
      await client.close();
    }
  });

  it('without a key or a bridge every call says which ZCode environment variables to set', async () => {
    const client = await connect({});
    try {
      const r = await client.callTool({ name: 'read_inbox', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('AGENTMAIL_GATEWAY_URL');
    } finally {
      await client.close();
    }
  });
});
