/**
 * `agentmail mcp` as an MCP host runs it: the bundled CLI (helpers/cli-build.ts, what `pnpm
 * build:cli` builds) started over stdio by the MCP SDK's own client, against a real Gateway on
 * loopback with a real SQLite file. The tools are host-tools' server; what is checked here is the
 * command: its configuration (flags, environment, config file) and its errors.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIL_TOOL_NAMES } from '@agentmail/bridge-kit';
import { MailResponse } from '@agentmail/protocol';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from './helpers/cli-build.js';
import { cleanEnv, PROCESS_TEST_TIMEOUT_MS, run } from './helpers/processes.js';
import { addAgent, addUser, api, startGateway, type TestGateway, tempDir } from './helpers.js';

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

let gw: TestGateway;
let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
let agentKey = '';
let alice = '';
beforeAll(async () => {
  const [built, gateway] = await Promise.all([buildCli('mcp-test'), startGateway()]);
  mainJs = built.mainJs;
  removeBuild = built.remove;
  gw = gateway;
  agentKey = await addAgent(gw, 'helper', 'claude-code');
  alice = await addUser(gw, 'alice');
});
afterAll(async () => {
  await gw?.close();
  await removeBuild();
});

/** A temp HOME and config path: nothing of the developer's CLI config is read. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  const home = tempDir('agentmail-mcp-home-');
  const clean = cleanEnv({ HOME: home, AGENTMAIL_CONFIG: join(home, 'config.json'), ...extra });
  return Object.fromEntries(Object.entries(clean).filter((e): e is [string, string] => e[1] !== undefined));
}

async function connect(args: readonly string[], environment: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test-host', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [mainJs, ...args],
      env: environment,
      stderr: 'pipe',
    }),
  );
  return client;
}

const textOf = (r: Awaited<ReturnType<Client['callTool']>>): string =>
  (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');

describe('agentmail mcp (issue 20)', () => {
  it("lists the mail tools; a send_mail call reaches the Gateway as the key's agent", async () => {
    const client = await connect(
      ['mcp'],
      env({ AGENTMAIL_GATEWAY_URL: gw.url, AGENTMAIL_AGENT_KEY: agentKey }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...MAIL_TOOL_NAMES]);
      const sent = await client.callTool({
        name: 'send_mail',
        arguments: { to: 'alice', subject: 'from an MCP host', body: 'sent through agentmail mcp' },
      });
      expect(sent.isError, textOf(sent)).toBeFalsy();
      const id = /Sent mail (\S+) to/.exec(textOf(sent))?.[1] ?? '';
      const mail = MailResponse.parse((await api(gw, 'GET', `/me/mail/${id}`, alice)).body).mail;
      expect(mail).toMatchObject({
        from_name: 'helper',
        subject: 'from an MCP host',
        body: 'sent through agentmail mcp',
      });
      const inbox = await client.callTool({ name: 'read_inbox', arguments: { status: 'all' } });
      expect(inbox.isError, textOf(inbox)).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('--url and --key flags, and the URL of the config file, serve the same way', async () => {
    const configEnv = env();
    writeFileSync(configEnv.AGENTMAIL_CONFIG ?? '', JSON.stringify({ url: gw.url }));
    for (const [args, environment] of [
      [['--url', gw.url, 'mcp', '--key', agentKey], env()],
      [['mcp'], { ...configEnv, AGENTMAIL_AGENT_KEY: agentKey }],
    ] as const) {
      const client = await connect(args, environment);
      try {
        const contacts = await client.callTool({ name: 'list_contacts', arguments: {} });
        expect(contacts.isError, textOf(contacts)).toBeFalsy();
        expect(textOf(contacts)).toContain('alice');
      } finally {
        await client.close();
      }
    }
  });

  it('a key whose agent never registered: registered at start as platform "mcp", its send_mail works; a bridge\'s agent keeps its platform', async () => {
    const issued = await api<{ key: string }>(gw, 'POST', '/admin/agent-keys', gw.adminToken, {
      agent_name: 'fresh-mcp',
    });
    expect(issued.status).toBe(200);
    const fresh = await connect(
      ['mcp'],
      env({ AGENTMAIL_GATEWAY_URL: gw.url, AGENTMAIL_AGENT_KEY: issued.body.key }),
    );
    try {
      const sent = await fresh.callTool({
        name: 'send_mail',
        arguments: { to: 'alice', subject: 'first words', body: 'from a new agent' },
      });
      expect(sent.isError, textOf(sent)).toBeFalsy();
    } finally {
      await fresh.close();
    }
    const platformOf = async (name: string): Promise<string | undefined> => {
      const { body } = await api<{ contacts: Array<{ name: string; platform?: string }> }>(
        gw,
        'GET',
        '/me/contacts',
        alice,
      );
      return body.contacts.find((c) => c.name === name)?.platform;
    };
    expect(await platformOf('fresh-mcp')).toBe('mcp');
    // "helper" was registered as claude-code (beforeAll): serving its tools does not change that.
    const bridged = await connect(
      ['mcp'],
      env({ AGENTMAIL_GATEWAY_URL: gw.url, AGENTMAIL_AGENT_KEY: agentKey }),
    );
    await bridged.listTools();
    await bridged.close();
    expect(await platformOf('helper')).toBe('claude-code');
  });

  it("an unknown key or a Gateway that does not answer: exit 1 before serving, naming the URL, where it came from and the key's source", async () => {
    const badKey = await run(process.execPath, [mainJs, 'mcp', '--key', 'ama_not_a_real_key'], {
      env: env({ AGENTMAIL_GATEWAY_URL: gw.url }),
    });
    expect(badKey.code).toBe(1);
    expect(badKey.stdout).toBe('');
    expect(badKey.stderr).toContain(
      `the Gateway at ${gw.url} (the URL from AGENTMAIL_GATEWAY_URL) does not accept the agent key from --key`,
    );
    expect(badKey.stderr).toContain('try: issue a key (admin): agentmail agent key <name>');
    expect(badKey.stderr).not.toContain('serving the mail tools');
    const closed = await run(process.execPath, [mainJs, '--url', 'http://127.0.0.1:9', 'mcp'], {
      env: env({ AGENTMAIL_AGENT_KEY: agentKey }),
    });
    expect(closed.code).toBe(1);
    expect(closed.stderr).toContain('no answer from the Gateway at http://127.0.0.1:9 (the URL from --url)');
    expect(closed.stderr).not.toContain('serving the mail tools');
  });

  it('no key: exit 2 before serving, naming --key and AGENTMAIL_AGENT_KEY; a bad URL names where it came from', async () => {
    const noKey = await run(process.execPath, [mainJs, 'mcp'], {
      env: env({ AGENTMAIL_GATEWAY_URL: gw.url }),
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stdout).toBe('');
    expect(noKey.stderr).toContain(
      'agentmail mcp needs an agent key: --key <agent key> or AGENTMAIL_AGENT_KEY',
    );
    expect(noKey.stderr).toContain(`${gw.url} (the URL from AGENTMAIL_GATEWAY_URL)`);
    expect(noKey.stderr).toContain('try: issue a key (admin): agentmail agent key <name>');
    const badUrl = await run(process.execPath, [mainJs, 'mcp'], {
      env: env({ AGENTMAIL_GATEWAY_URL: 'not a url', AGENTMAIL_AGENT_KEY: agentKey }),
    });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stdout).toBe('');
    expect(badUrl.stderr).toContain('Gateway URL "not a url" (from AGENTMAIL_GATEWAY_URL) is not a URL');
  });
});
