import { spawn } from 'node:child_process';
import { ASK_PERSON_TOOL, MAIL_TOOL_NAMES, mailTools } from '@agentmail/bridge-kit';
import { type Stack, startStack } from '@agentmail/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle, rpcServer } from './support.js';

// The MCP mail-tool server as a host runs it: the bundled mcp.js over stdio, driven by the MCP
// SDK's own client; standalone against a real Gateway, and through a real turn RPC server.

let files: Awaited<ReturnType<typeof bundle>>;
let stack: Stack;
beforeAll(async () => {
  [files, stack] = await Promise.all([
    bundle(),
    startStack({ agentName: 'mcp-agent', platform: 'claude-code' }),
  ]);
}, 90_000);
afterAll(async () => {
  await stack?.close();
  await files?.remove();
});

async function connect(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test-host', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [files.mcpJs],
      env: { PATH: process.env.PATH ?? '', ...env },
      stderr: 'pipe',
    }),
  );
  return client;
}

const textOf = (r: Awaited<ReturnType<Client['callTool']>>): string =>
  (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');

describe('agentmail-mcp (SPEC B-17)', () => {
  it('lists the 11 mail tools with their schemas and true annotations (no ask_person outside a mail turn)', async () => {
    const client = await connect({});
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...MAIL_TOOL_NAMES]);
      for (const t of mailTools('en', { askPerson: false })) {
        const listed = tools.find((x) => x.name === t.name);
        expect(listed?.inputSchema).toEqual(t.parameters);
        expect(listed?.annotations).toEqual({ title: t.name, ...t.annotations });
        expect(listed?.description).toBe(t.description);
      }
      expect(tools.find((t) => t.name === 'read_mail')?.annotations?.readOnlyHint).toBe(true);
      expect(tools.find((t) => t.name === 'send_mail')?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
      });
    } finally {
      await client.close();
    }
  });

  it("standalone (a person's own session): runs the tools with the configured key", async () => {
    await stack.sendAs(undefined, stack.taskAddress(), { subject: 'Hello from alice', body: 'body text 42' });
    const client = await connect({
      AGENTMAIL_GATEWAY_URL: stack.gatewayUrl,
      AGENTMAIL_AGENT_KEY: stack.agent.key,
    });
    try {
      const inbox = await client.callTool({ name: 'read_inbox', arguments: { limit: 5 } });
      expect(inbox.isError).toBeFalsy();
      expect(textOf(inbox)).toContain('Hello from alice');
      const bad = await client.callTool({ name: 'read_mail', arguments: { mail_id: 42 } });
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toContain('mail_id');
      const unknown = await client.callTool({ name: 'delete_everything', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain('read_inbox');
    } finally {
      await client.close();
    }
  });

  it('unconfigured: every call says which variables to set', async () => {
    const client = await connect({ AGENTMAIL_GATEWAY_URL: 'not a url' });
    try {
      const r = await client.callTool({ name: 'list_contacts', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('AGENTMAIL_GATEWAY_URL');
    } finally {
      await client.close();
    }
  });

  it('a call sent just before stdin closes is still answered (a host or a shell pipe closing at once)', async () => {
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'pipe', version: '1' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_contacts', arguments: {} } },
    ];
    const child = spawn(process.execPath, [files.mcpJs], {
      env: {
        PATH: process.env.PATH ?? '',
        AGENTMAIL_GATEWAY_URL: stack.gatewayUrl,
        AGENTMAIL_AGENT_KEY: stack.agent.key,
      },
      stdio: 'pipe',
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
    });
    child.stdin.end(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const code = await new Promise<number | null>((done) => child.once('close', done));
    expect(code).toBe(0);
    const answers = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean } });
    // The call went to the Gateway (a round trip after stdin ended) and its answer still came.
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]?.result?.isError).toBeFalsy();
  });

  it('in a mail turn every call runs in the bridge, over the turn RPC; the key is not needed', async () => {
    const calls: Array<{ name: string; arguments: Record<string, unknown> }> = [];
    const rpc = await rpcServer({
      callTool: async (_t, params) => {
        calls.push(params);
        return { text: `ran ${params.name} in the bridge`, isError: params.name === 'send_mail' };
      },
    });
    const client = await connect({ ...rpc.env });
    try {
      const listed = (await client.listTools()).tools;
      expect(
        listed.map((t) => t.name),
        'a mail turn also offers ask_person (P-10)',
      ).toEqual([...MAIL_TOOL_NAMES, ASK_PERSON_TOOL]);
      const ask = mailTools('en').find((t) => t.name === ASK_PERSON_TOOL);
      expect(listed.at(-1)?.inputSchema).toEqual(ask?.parameters);
      const r = await client.callTool({ name: 'read_mail', arguments: { mail_id: 'm_1' } });
      expect(textOf(r)).toBe('ran read_mail in the bridge');
      const failed = await client.callTool({ name: 'send_mail', arguments: { to: 'bob', body: 'x' } });
      expect(failed.isError).toBe(true);
      expect(calls).toEqual([
        { name: 'read_mail', arguments: { mail_id: 'm_1' } },
        { name: 'send_mail', arguments: { to: 'bob', body: 'x' } },
      ]);
      await rpc.close();
      const gone = await client.callTool({ name: 'read_mail', arguments: { mail_id: 'm_1' } });
      expect(gone.isError, 'a bridge that is gone is an error result, not a crash').toBe(true);
      expect(textOf(gone)).toMatch(/unreachable/);
    } finally {
      await client.close();
      await rpc.close().catch(() => undefined);
    }
  });
});
